//! The results of a conjunction's operands at one timestamp, joined by the values of the
//! variables they share (a hash join) rather than each new result against every buffered
//! one: `(A & B)` over n events at one instant joined 1:1 on `?k` compares n pairs, not n²/4.
//! The index is a pre-filter (decision 28's kind): every pair it yields is still merged, so
//! the results are the nested loop's, in the nested loop's order.

use super::{HashMap, KeyValues, Result1, Takens};
use crate::operand::Op;
use smallvec::SmallVec;
use spaseq_gpm::vars::{Row, Slot};
use std::collections::BTreeSet;

/// One operand's results at the conjunction's timestamp, indexed by its join slots.
#[derive(Debug, Clone, Default)]
pub(super) struct Pool {
    pub results: Vec<Result1>,
    /// Positions in `results` by the values of the join slots (ascending).
    index: HashMap<KeyValues, SmallVec<[u32; 1]>>,
    /// Results before this position are in `index` (a restored run indexes on first use).
    indexed: usize,
    /// Some result left a join slot unbound: probes scan every result.
    loose: bool,
}

/// A combination being joined: its mapping, and per operand joined so far the position of
/// the result it took.
type Partial = (Row, SmallVec<[u32; 4]>);

impl Pool {
    /// A pool of `results` (indexed when first probed).
    pub fn of(results: Vec<Result1>) -> Pool {
        Pool {
            results,
            ..Pool::default()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }

    pub fn extend(&mut self, results: Vec<Result1>) {
        self.results.extend(results);
    }

    fn catch_up(&mut self, keys: &[Slot]) {
        for (i, (row, _)) in self.results.iter().enumerate().skip(self.indexed) {
            match keys.iter().map(|&k| row[k]).collect::<Option<KeyValues>>() {
                Some(values) => self.index.entry(values).or_default().push(i as u32),
                None => self.loose = true,
            }
        }
        self.indexed = self.results.len();
    }

    /// Each `l ∪ r` of a compatible pair, `l` from `left` and `r` the pool's result at
    /// position p (appended to `l`'s positions), for `l` in order, then p ascending;
    /// `pairs` counts the pairs compared.
    fn join(&mut self, left: &[Partial], keys: &[Slot], pairs: &mut u64) -> Vec<Partial> {
        if !keys.is_empty() {
            self.catch_up(keys);
        }
        let mut out = Vec::new();
        for (row, at) in left {
            let mut visit = |p: u32| {
                *pairs += 1;
                if let Some(m) = super::merge(row, &self.results[p as usize].0) {
                    let mut at = at.clone();
                    at.push(p);
                    out.push((m, at));
                }
            };
            let probe = (!keys.is_empty() && !self.loose)
                .then(|| keys.iter().map(|&k| row[k]).collect::<Option<KeyValues>>())
                .flatten();
            match probe {
                Some(values) => {
                    let found = self.index.get(&values).map_or(&[][..], |b| b.as_slice());
                    found.iter().for_each(|&p| visit(p));
                }
                // no key to probe by (a join slot left unbound): every result
                None => (0..self.results.len() as u32).for_each(visit),
            }
        }
        out
    }
}

/// Every combination of one result per operand compatible with `mu` and with each other:
/// operand `first`'s from `rows`, the others' from `pools` (probed by their join `keys`),
/// in the nested loop's order over the operands as written, each with the events its
/// results took, in that order too.
pub(super) fn combine(
    mu: &Row,
    first: usize,
    rows: &[Result1],
    pools: &mut [Pool],
    keys: &[Vec<Slot>],
    pairs: &mut u64,
) -> Vec<Result1> {
    let mut partial: Vec<Partial> = Vec::new();
    for (p, (row, _)) in rows.iter().enumerate() {
        *pairs += 1;
        if let Some(m) = super::merge(mu, row) {
            partial.push((m, smallvec::smallvec![p as u32]));
        }
    }
    for (j, pool) in pools.iter_mut().enumerate() {
        if j != first && !partial.is_empty() {
            partial = pool.join(&partial, &keys[j], pairs);
        }
    }
    // positions as the operands are written: `first`'s came first
    let mut done: Vec<(SmallVec<[u32; 4]>, Row)> = partial
        .into_iter()
        .map(|(row, at)| {
            let mut written = SmallVec::with_capacity(at.len());
            written.extend(at[1..].iter().take(first).copied());
            written.push(at[0]);
            written.extend(at[1..].iter().skip(first).copied());
            (written, row)
        })
        .collect();
    done.sort_by(|a, b| a.0.cmp(&b.0));
    done.into_iter()
        .map(|(at, row)| {
            let mut taken = Takens::new();
            for (j, &p) in at.iter().enumerate() {
                let source = if j == first { rows } else { &pools[j].results };
                taken.extend(source[p as usize].1.iter().cloned());
            }
            (row, taken)
        })
        .collect()
}

/// A run's operand results of one conjunction at one timestamp.
#[derive(Debug, Clone)]
pub(super) struct ConjBuffer {
    pub tau: i128,
    pub pools: Vec<Pool>,
}

/// Per conjunction (by its number), per operand, the slots it is joined on: variables every
/// result of the operand binds that another operand's results bind too, less those bound
/// before the step (equal in every result of one run).
pub(super) fn join_keys(
    op: &Op,
    gpm_keys: &dyn Fn(usize) -> BTreeSet<Slot>,
    before: &BTreeSet<Slot>,
    out: &mut HashMap<usize, Vec<Vec<Slot>>>,
) {
    match op {
        Op::Gpm(_) => {}
        Op::Or(operands) => operands
            .iter()
            .for_each(|o| join_keys(o, gpm_keys, before, out)),
        Op::And { id, operands } => {
            let bound: Vec<BTreeSet<Slot>> = operands.iter().map(|o| always(o, gpm_keys)).collect();
            let keys = (0..operands.len())
                .map(|j| {
                    bound[j]
                        .iter()
                        .filter(|s| !before.contains(s))
                        .filter(|s| (0..bound.len()).any(|i| i != j && bound[i].contains(s)))
                        .copied()
                        .collect()
                })
                .collect();
            out.insert(*id, keys);
            operands
                .iter()
                .for_each(|o| join_keys(o, gpm_keys, before, out));
        }
    }
}

/// The slots every result of `op` binds.
fn always(op: &Op, gpm_keys: &dyn Fn(usize) -> BTreeSet<Slot>) -> BTreeSet<Slot> {
    match op {
        Op::Gpm(g) => gpm_keys(*g),
        Op::And { operands, .. } => operands.iter().flat_map(|o| always(o, gpm_keys)).collect(),
        Op::Or(operands) => {
            let mut sets = operands.iter().map(|o| always(o, gpm_keys));
            let first = sets.next().unwrap_or_default();
            sets.fold(first, |acc, s| acc.intersection(&s).copied().collect())
        }
    }
}
