//! GPM evaluation on one event (issue 12): being written.
