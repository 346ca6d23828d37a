//! Events in: replay files (TriG or N-Quads, gzip or not) and live streams parsed by oxttl
//! into events of dictionary-encoded terms, with exact nanosecond timestamps. It depends on
//! no other spaseq crate: the plan (`spaseq-plan`) and the events meet in the crates above.
//!
//! - `dictionary`: terms as small ids, each term stored once;
//! - `hash`: the fast hasher of the engine's own maps (every crate above takes it from here);
//! - `time`: timestamps as exact nanoseconds, spelled as Python spells them in messages;
//! - `replay`: the replay reader (whole files, and the parser loop the streams share);
//! - `stream`: replay files merged by time, streamed (`file`, `spill`, `prefetch`), and live
//!   input (`live`);
//! - `disposal`: values dropped on a thread of their own;
//! - `vocab`: the `xsd:` namespace as a prefix string (whole IRIs: `oxrdf::vocab`).

pub mod dictionary;
pub mod disposal;
pub mod hash;
pub mod replay;
pub mod stream;
pub mod time;
pub mod vocab;
