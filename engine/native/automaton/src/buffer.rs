//! The shared buffer (FlinkCEP's model): each event a run takes is a node linked to the
//! run's earlier nodes, so a run is cloned in O(1) and a match's events are listed only
//! when it is emitted.

use super::event::EventRef;
use smallvec::SmallVec;
use spaseq_io::dictionary::TermId;
use std::rc::Rc;

/// One event an atom took: the GPM (its index in the plan), the event, and the values of
/// the GPM's local variables there (`None` where a variable is unbound).
#[derive(Debug, Clone)]
pub struct Taken {
    pub gpm: usize,
    pub event: EventRef,
    pub bindings: Rc<[Option<TermId>]>,
}

pub struct Node {
    pub parent: Option<Rc<Node>>,
    pub taken: Taken,
}

/// A list printed as the events it took, last first, without recursion (a derived `Debug`
/// would recurse through `parent` as deep as the list, as dropping it did).
impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut list = f.debug_list();
        let mut at = Some(self);
        while let Some(node) = at {
            list.entry(&node.taken);
            at = node.parent.as_deref();
        }
        list.finish()
    }
}

/// A list is freed node by node, not by recursion: a run of a few hundred thousand Kleene
/// iterations holds a list that deep, and dropping it recursively overflowed the stack.
impl Drop for Node {
    fn drop(&mut self) {
        let mut next = self.parent.take();
        while let Some(node) = next {
            // the rest of the list is shared: whoever else holds it frees it
            let Some(mut node) = Rc::into_inner(node) else {
                break;
            };
            next = node.parent.take();
        }
    }
}

impl Node {
    pub fn push(parent: Option<Rc<Node>>, taken: Taken) -> Rc<Node> {
        Rc::new(Node { parent, taken })
    }

    /// The events taken, first to last.
    pub fn chain(node: &Option<Rc<Node>>) -> Vec<Taken> {
        let mut out = Vec::new();
        let mut at = node.as_deref();
        while let Some(n) = at {
            out.push(n.taken.clone());
            at = n.parent.as_deref();
        }
        out.reverse();
        out
    }

    /// The number of events taken, counted up to `limit` (a list may be long: the caller
    /// only needs to know whether it is short).
    pub fn depth_up_to(node: &Option<Rc<Node>>, limit: usize) -> usize {
        let mut n = 0;
        let mut at = node.as_deref();
        while let (Some(node), true) = (at, n < limit) {
            n += 1;
            at = node.parent.as_deref();
        }
        n
    }

    /// The order keys (time, arrival) of the events taken, first to last.
    pub fn orders(node: &Option<Rc<Node>>) -> SmallVec<[(i128, u64); 4]> {
        let mut out = SmallVec::new();
        let mut at = node.as_deref();
        while let Some(n) = at {
            out.push(n.taken.event.order());
            at = n.parent.as_deref();
        }
        out.reverse();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::EventData;

    #[test]
    fn a_list_of_a_million_events_is_freed_without_recursion() {
        // a test thread's stack is 2 MiB: a recursive drop of this list overflowed it
        let event = Rc::new(EventData {
            uid: 0,
            stream: 0,
            dated: false,
            time: 0,
            start: 0,
            seq: 0,
            graph: None,
            triples: Vec::new(),
            used: Default::default(),
        });
        let bindings: Rc<[Option<TermId>]> = Rc::from(Vec::new());
        let mut list = None;
        for _ in 0..1_000_000 {
            let taken = Taken {
                gpm: 0,
                event: event.clone(),
                bindings: bindings.clone(),
            };
            list = Some(Node::push(list, taken));
        }
        // a shared tail stays for its other holder
        let mut at = list.clone();
        for _ in 0..500_000 {
            at = at.and_then(|n| n.parent.clone());
        }
        drop(list);
        assert_eq!(Node::depth_up_to(&at, usize::MAX), 500_000);
        // printed without recursion too (a derived Debug overflowed at a few thousand)
        let mut tail = at.clone();
        for _ in 0..400_000 {
            tail = tail.and_then(|n| n.parent.clone());
        }
        let printed = format!("{:?}", tail.as_deref().unwrap());
        assert_eq!(printed.matches("Taken").count(), 100_000);
        drop(tail);
        drop(at);
        assert_eq!(Rc::strong_count(&event), 1);
    }
}
