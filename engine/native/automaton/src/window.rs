//! WITHIN on exact times (nanoseconds) or event positions: whether an event fits a match's
//! window, when a run's window is over, and when that is passed.

use spaseq_plan::algebra::{Window, WindowSpan};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub window: Window,
}

impl Span {
    pub fn sliding_time(&self) -> Option<i128> {
        match self.window.span {
            WindowSpan::Nanoseconds(ns) if !self.window.tumbling => Some(ns as i128),
            _ => None,
        }
    }

    fn index(&self, t0: i128, tau: i128, pos: i64) -> i128 {
        match self.window.span {
            WindowSpan::Nanoseconds(ns) => (tau - t0).div_euclid((ns as i128).max(1)),
            WindowSpan::Events(n) => (pos as i128).div_euclid((n as i128).max(1)),
            WindowSpan::Unbounded => 0,
        }
    }

    /// Can an event at (tau, pos) belong to a match starting at (start, first_pos)?
    pub fn fits(&self, t0: i128, start: i128, first_pos: i64, tau: i128, pos: i64) -> bool {
        match self.window.span {
            WindowSpan::Unbounded => true,
            _ if self.window.tumbling => {
                self.index(t0, start, first_pos) == self.index(t0, tau, pos)
            }
            WindowSpan::Nanoseconds(ns) => tau - start <= ns as i128,
            WindowSpan::Events(n) => (pos - first_pos + 1) as i128 <= n as i128,
        }
    }

    /// When a run starting at (start, first_pos) is over: a time, or a position for event
    /// windows; None without a window.
    pub fn deadline(&self, t0: i128, start: i128, first_pos: i64) -> Option<i128> {
        match self.window.span {
            WindowSpan::Unbounded => None,
            WindowSpan::Nanoseconds(ns) => Some(if self.window.tumbling {
                t0 + (self.index(t0, start, 0) + 1) * ns as i128
            } else {
                start + ns as i128
            }),
            WindowSpan::Events(n) => Some(if self.window.tumbling {
                (first_pos as i128).div_euclid(n as i128) * n as i128 + n as i128
            } else {
                first_pos as i128 + n as i128 - 1
            }),
        }
    }

    /// The earliest start of a match with an event ending at `tau` or later (None: any,
    /// the window being of events or none): what events that last may still begin at.
    pub fn earliest_start(&self, t0: i128, tau: i128) -> Option<i128> {
        match self.window.span {
            WindowSpan::Nanoseconds(ns) if self.window.tumbling => {
                Some(t0 + self.index(t0, tau, 0) * ns as i128)
            }
            WindowSpan::Nanoseconds(ns) => Some(tau - ns as i128),
            _ => None,
        }
    }

    /// Is a deadline passed at (tau, pos)?
    pub fn expired(&self, deadline: i128, tau: i128, pos: i64) -> bool {
        let now = match self.window.span {
            WindowSpan::Events(_) => pos as i128,
            _ => tau,
        };
        if self.window.tumbling {
            now >= deadline
        } else {
            now > deadline
        }
    }

    pub fn is_events(&self) -> bool {
        matches!(self.window.span, WindowSpan::Events(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spaseq_plan::algebra::{Window, WindowSpan};

    fn span(span: WindowSpan, tumbling: bool) -> Span {
        Span {
            window: Window { span, tumbling },
        }
    }

    /// The earliest start of a match holding an event that ends at 25 or later: a sliding
    /// window's length back, a tumbling window's start, or any time without a time window.
    #[test]
    fn the_earliest_start_of_a_match_still_to_come() {
        let ten = WindowSpan::Nanoseconds(10);
        assert_eq!(span(ten, false).earliest_start(0, 25), Some(15));
        assert_eq!(span(ten, true).earliest_start(0, 25), Some(20));
        assert_eq!(span(ten, true).earliest_start(3, 25), Some(23));
        assert_eq!(
            span(WindowSpan::Events(4), false).earliest_start(0, 25),
            None
        );
        assert_eq!(
            span(WindowSpan::Unbounded, false).earliest_start(0, 25),
            None
        );
    }
}
