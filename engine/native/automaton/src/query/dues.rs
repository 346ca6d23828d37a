//! Runs by deadline, earliest (then oldest) first: when a run's window ends (`expiry`), when
//! a `;` run commits (`closing`), when a timer is judged (`timers`). Deadlines mostly come in
//! order (a sliding window's is each run's start plus the same width, and runs start in
//! time order), so they queue in a FIFO, popped from the front in constant time; one that
//! comes earlier than the last queued goes to a heap beside it. The earliest of the two heads
//! comes first: the order a single heap gave, at a fraction of its cost (the many-key
//! V-shape popped ~5 runs per event from a heap of thousands).

use super::Due;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Default)]
pub(super) struct Dues {
    /// Ascending.
    fifo: VecDeque<Due>,
    /// The ones that came out of order.
    heap: BinaryHeap<Reverse<Due>>,
}

impl Dues {
    pub(super) fn push(&mut self, due: Due) {
        if self.fifo.back().is_none_or(|last| *last <= due) {
            self.fifo.push_back(due);
        } else {
            self.heap.push(Reverse(due));
        }
    }

    /// Whether the earliest is the FIFO's head (None: both are empty).
    fn fifo_first(&self) -> Option<bool> {
        match (self.fifo.front(), self.heap.peek()) {
            (None, None) => None,
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (Some(f), Some(Reverse(h))) => Some(f <= h),
        }
    }

    /// The earliest deadline.
    pub(super) fn peek(&self) -> Option<&Due> {
        match self.fifo_first()? {
            true => self.fifo.front(),
            false => self.heap.peek().map(|Reverse(d)| d),
        }
    }

    /// Take the earliest.
    pub(super) fn pop(&mut self) -> Option<Due> {
        match self.fifo_first()? {
            true => self.fifo.pop_front(),
            false => self.heap.pop().map(|Reverse(d)| d),
        }
    }

    /// Every entry, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &Due> {
        self.fifo.iter().chain(self.heap.iter().map(|Reverse(d)| d))
    }

    pub(super) fn len(&self) -> usize {
        self.fifo.len() + self.heap.len()
    }

    pub(super) fn clear(&mut self) {
        self.fifo.clear();
        self.heap.clear();
    }

    /// Every entry, earliest first (emptied).
    pub(super) fn drain_sorted(&mut self) -> Vec<Due> {
        let mut all: Vec<Due> = std::mem::take(&mut self.fifo).into_iter().collect();
        all.extend(
            std::mem::take(&mut self.heap)
                .into_iter()
                .map(|Reverse(d)| d),
        );
        all.sort();
        all
    }
}

impl FromIterator<Due> for Dues {
    fn from_iter<I: IntoIterator<Item = Due>>(entries: I) -> Self {
        let mut dues = Dues::default();
        for due in entries {
            dues.push(due);
        }
        dues
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::RunKey;

    fn due(deadline: i128, id: u64) -> Due {
        Due(deadline, id, RunKey::default())
    }

    #[test]
    fn out_of_order_deadlines_pop_as_from_one_heap() {
        let order = [
            (5, 1),
            (7, 2),
            (3, 3),
            (7, 4),
            (9, 5),
            (1, 6),
            (9, 7),
            (8, 8),
            (12, 9),
        ];
        let mut dues: Dues = order.iter().map(|&(d, i)| due(d, i)).collect();
        assert_eq!(
            (dues.len(), dues.heap.len()),
            (9, 3),
            "three came earlier than the last queued"
        );
        assert_eq!(dues.peek().map(|d| d.1), Some(6));
        dues.push(due(2, 10));
        let mut popped = Vec::new();
        while let Some(Due(deadline, id, _)) = dues.pop() {
            popped.push((deadline, id));
        }
        let mut sorted = order.to_vec();
        sorted.push((2, 10));
        sorted.sort();
        assert_eq!(popped, sorted);
        assert!(dues.peek().is_none() && dues.len() == 0);
    }
}
