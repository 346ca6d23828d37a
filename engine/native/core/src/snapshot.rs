//! The native half of `Engine.snapshot()`: the term dictionary, the stream table, the
//! events still held and every query's runtime state (`runtime::QueryState`), in a
//! versioned binary format (a magic string, a format version, then postcard: serde's
//! compact encoding with a stable wire format).
//!
//! Restoring is three steps, so that a query's plan is compiled against the same term ids:
//! the dictionary and streams go into a fresh engine first (`EngineState::terms`,
//! `streams`), the queries are registered again in the same order, then each runtime loads
//! its state over the restored events.

use crate::dictionary::{Dictionary, TermId};
use crate::runtime::{EventData, EventRef, QueryState, Streams};
use oxrdf::Term;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::rc::Rc;
use std::str::FromStr;

/// Bumped whenever the encoding of any state changes; older snapshots are refused with a
/// message rather than misread.
pub const SNAPSHOT_VERSION: u32 = 2;
const MAGIC: &[u8; 12] = b"spaseq-core\n";

/// An event as a snapshot writes it (its graph name and terms in N-Triples / by id).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EventState {
    pub uid: u64,
    pub stream: u32,
    pub dated: bool,
    pub time: i128,
    pub seq: u64,
    pub graph: Option<String>,
    pub triples: Vec<[TermId; 3]>,
}

impl EventState {
    pub fn of(e: &EventData) -> Self {
        EventState {
            uid: e.uid,
            stream: e.stream,
            dated: e.dated,
            time: e.time,
            seq: e.seq,
            graph: e.graph.as_ref().map(Term::to_string),
            triples: e.triples.clone(),
        }
    }

    pub fn event(&self) -> Result<EventRef, String> {
        let graph = self.graph.as_deref().map(term).transpose()?;
        Ok(Rc::new(EventData {
            uid: self.uid,
            stream: self.stream,
            dated: self.dated,
            time: self.time,
            seq: self.seq,
            graph,
            triples: self.triples.clone(),
        }))
    }
}

/// One engine's native state; term ids are the snapshot's own (dense, over `terms`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EngineState {
    /// The terms the state refers to, by id, in N-Triples.
    pub terms: Vec<String>,
    /// Stream IRIs by id.
    pub streams: Vec<String>,
    /// The last event uid given out.
    pub last_uid: u64,
    /// The events some query's state refers to, by uid.
    pub events: Vec<EventState>,
    /// Per registered runtime (in registration order) its state.
    pub queries: Vec<QueryState>,
}

fn term(ntriples: &str) -> Result<Term, String> {
    Term::from_str(ntriples).map_err(|e| format!("bad term {ntriples:?} in a snapshot: {e}"))
}

impl EngineState {
    /// The dictionary, streams and queries of an engine, with the events the queries hold.
    pub fn new(
        dict: &Dictionary,
        streams: &Streams,
        last_uid: u64,
        queries: Vec<QueryState>,
        event: &dyn Fn(u64) -> Option<EventRef>,
    ) -> Result<Self, String> {
        let mut uids: Vec<u64> = queries.iter().flat_map(QueryState::events).collect();
        uids.sort_unstable();
        uids.dedup();
        let events = uids
            .into_iter()
            .map(|uid| {
                event(uid)
                    .map(|e| EventState::of(&e))
                    .ok_or_else(|| format!("event {uid} is referred to but no longer held"))
            })
            .collect::<Result<_, String>>()?;
        let mut state = EngineState {
            terms: Vec::new(),
            streams: (0..streams.len())
                .map(|i| streams.iri(i as u32).to_owned())
                .collect(),
            last_uid,
            events,
            queries,
        };
        // only the terms the state refers to, renumbered densely in their order: a snapshot
        // is as large as what the open windows hold, not as the stream read so far
        let mut used = vec![false; dict.len()];
        state.terms_mut(&mut |id| used[*id as usize] = true);
        let mut number = vec![TermId::MAX; dict.len()];
        for (old, _) in used.iter().enumerate().filter(|(_, u)| **u) {
            number[old] = state.terms.len() as TermId;
            state.terms.push(dict.get(old as TermId).to_string());
        }
        state.terms_mut(&mut |id| *id = number[*id as usize]);
        Ok(state)
    }

    /// Visit every term id of the events and query states.
    fn terms_mut(&mut self, f: &mut dyn FnMut(&mut TermId)) {
        for e in &mut self.events {
            e.triples.iter_mut().flatten().for_each(&mut *f);
        }
        for q in &mut self.queries {
            q.terms_mut(f);
        }
    }

    pub fn encode(&self) -> Result<Vec<u8>, String> {
        let mut out = MAGIC.to_vec();
        out.extend(SNAPSHOT_VERSION.to_le_bytes());
        postcard::to_extend(self, out).map_err(|e| format!("cannot encode the snapshot: {e}"))
    }

    pub fn decode(data: &[u8]) -> Result<Self, String> {
        let body = data
            .strip_prefix(MAGIC.as_slice())
            .ok_or("not a snapshot of spaseq's native engine")?;
        let (version, body) = body
            .split_first_chunk::<4>()
            .ok_or("a truncated snapshot")?;
        let version = u32::from_le_bytes(*version);
        if version != SNAPSHOT_VERSION {
            return Err(format!(
                "snapshot format {version}, but this spaseq reads format {SNAPSHOT_VERSION}"
            ));
        }
        postcard::from_bytes(body).map_err(|e| format!("a corrupt snapshot: {e}"))
    }

    /// Fill a fresh dictionary and stream table (ids as they were).
    pub fn restore_tables(&self, dict: &Dictionary, streams: &mut Streams) -> Result<(), String> {
        if !dict.is_empty() || !streams.is_empty() {
            return Err("a snapshot is restored into a fresh engine only".into());
        }
        for (i, t) in self.terms.iter().enumerate() {
            if dict.intern(term(t)?) as usize != i {
                return Err(format!("term {t} appears twice in the snapshot"));
            }
        }
        for (i, s) in self.streams.iter().enumerate() {
            if streams.id(s) as usize != i {
                return Err(format!("stream <{s}> appears twice in the snapshot"));
            }
        }
        Ok(())
    }

    /// The snapshot's events, by uid.
    pub fn restore_events(&self) -> Result<HashMap<u64, EventRef>, String> {
        self.events
            .iter()
            .map(|e| Ok((e.uid, e.event()?)))
            .collect()
    }
}
