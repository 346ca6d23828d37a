//! Streaming replay (issue 12): being written.
