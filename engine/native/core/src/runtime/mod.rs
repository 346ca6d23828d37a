//! The NFA_scep runtime (issue 12): being written.
