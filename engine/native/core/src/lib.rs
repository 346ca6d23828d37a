//! spaseq's native engine core (issue 12), growing in steps. Today: the physical plan that
//! the Python compiler writes (`spaseq explain --plan`, docs/plan.md) read into typed Rust
//! data, the interface the native runtime is built from (with a summary the Python tests
//! compare with the Python plan); and ingest: replay files parsed by oxttl into events of
//! dictionary-encoded terms, with exact nanosecond timestamps.

pub mod output;
