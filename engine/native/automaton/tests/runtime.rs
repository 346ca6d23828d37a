//! The native runtime on plans written by `spaseq explain --plan` (tests/data, kept current
//! by tests/compile/test_plan.py), with GPMs of one triple pattern `?s <p> ?o` evaluated by
//! a test evaluator: the automaton's strategies, Kleene loops and windows, by hand.

#[path = "support/one_pattern.rs"]
mod support;

use oxrdf::{Literal, NamedNode, Term};
use spaseq_automaton::{EventData, Node, QueryRuntime, Streams};
use spaseq_io::dictionary::Dictionary;
use spaseq_plan::Plan;
use std::rc::Rc;
use support::OnePattern;

/// `plan` (its JSON)'s runtime over the shared test evaluator.
fn runtime(plan: &str, dict: &mut Dictionary, streams: &mut Streams) -> QueryRuntime<OnePattern> {
    support::runtime(&Plan::from_json(plan).expect("a valid plan"), dict, streams)
}

/// A match as (start s, end s, [(GPM, event time s)]).
type Found = (i128, i128, Vec<(String, i128)>);

/// Move the matches the runtime released to `out`, as (start s, end s, [(GPM, time s)]).
fn take_found(rt: &mut QueryRuntime<OnePattern>, out: &mut Vec<Found>) {
    for m in std::mem::take(&mut rt.out) {
        let taken = Node::chain(&m.node)
            .iter()
            .map(|t| (rt.gpm_names()[t.gpm].clone(), t.event.time / 1_000_000_000))
            .collect();
        out.push((m.start / 1_000_000_000, m.time / 1_000_000_000, taken));
    }
}

/// The event `uid` of one triple `<s> <p> v` at `time` seconds on `stream`.
fn event_of(
    dict: &Dictionary,
    stream: u32,
    uid: u64,
    (time, s, p, v): (i128, &str, &str, i64),
) -> Rc<EventData> {
    let triple = [
        dict.intern(NamedNode::new(format!("http://ex.org/{s}")).unwrap().into()),
        dict.intern(NamedNode::new(format!("http://ex.org/{p}")).unwrap().into()),
        dict.intern(Term::from(Literal::from(v))),
    ];
    Rc::new(EventData {
        uid,
        stream,
        dated: false,
        time: time * 1_000_000_000,
        start: time * 1_000_000_000,
        seq: uid,
        graph: None,
        triples: vec![triple],
        used: Default::default(),
    })
}

/// Push `(time in s, subject, predicate local name, integer)` events on `stream`; the
/// matches as (start s, end s, [(GPM, event time s)]) in release order.
fn run(plan: &str, events: &[(i128, &str, &str, i64)]) -> Vec<Found> {
    run_split(plan, events, usize::MAX)
}

const KLEENE_STRICT: &str = include_str!("data/kleene_strict.plan.json");

fn taken(list: &[(&str, i128)]) -> Vec<(String, i128)> {
    list.iter().map(|(g, t)| ((*g).to_owned(), *t)).collect()
}

#[test]
fn kleene_iterations_are_strict_after_the_first_and_the_next_atom_strict() {
    // SEQ(A ; B+ , C) WITHIN 10 SECONDS: B+ starts at the first B after A, iterates at the
    // next timestamp each time, and C must come at the timestamp right after the last B.
    let got = run(
        KLEENE_STRICT,
        &[
            (1, "x1", "a", 1),
            (2, "x1", "b", 2),
            (3, "x1", "b", 3),
            (4, "x1", "c", 4),
        ],
    );
    assert_eq!(
        got,
        vec![(1, 4, taken(&[("A", 1), ("B", 2), ("B", 3), ("C", 4)]))]
    );
}

#[test]
fn runs_are_partitioned_by_the_joined_variable() {
    let got = run(
        KLEENE_STRICT,
        &[
            (1, "x1", "a", 1),
            (1, "x2", "a", 1),
            (2, "x2", "b", 2),
            (3, "x2", "c", 3),
        ],
    );
    assert_eq!(got, vec![(1, 3, taken(&[("A", 1), ("B", 2), ("C", 3)]))]);
}

#[test]
fn a_gap_breaks_strict_contiguity_and_the_window_bounds_matches() {
    // an unrelated timestamp (5) between the last B and C: no match
    let got = run(
        KLEENE_STRICT,
        &[
            (1, "x1", "a", 1),
            (2, "x1", "b", 2),
            (5, "x1", "z", 0),
            (6, "x1", "c", 4),
        ],
    );
    assert!(got.is_empty(), "{got:?}");
    // C 11 s after A: outside WITHIN 10 SECONDS
    let got = run(
        KLEENE_STRICT,
        &[(1, "x1", "a", 1), (10, "x1", "b", 2), (12, "x1", "c", 4)],
    );
    assert!(got.is_empty(), "{got:?}");
}

/// As `run`, but the runtime's state is saved after `cut` events (none past the end), encoded,
/// decoded into a fresh dictionary, stream table and runtime, which goes on with the rest.
fn run_split(plan: &str, events: &[(i128, &str, &str, i64)], cut: usize) -> Vec<Found> {
    use spaseq_automaton::snapshot::EngineState;
    use spaseq_automaton::EventRef;
    use std::collections::HashMap;

    let mut dict = Dictionary::new();
    let mut streams = Streams::new();
    let mut rt = runtime(plan, &mut dict, &mut streams);
    let stream = streams.id("http://ex.org/s");
    let mut out = Vec::new();
    let mut made: HashMap<u64, EventRef> = HashMap::new();
    for (uid, &(time, s, p, v)) in events.iter().enumerate() {
        if uid == cut {
            let state = rt.save().expect("saved");
            let held = |uid: u64| made.get(&uid).cloned();
            let bytes = EngineState::new(
                &dict,
                &streams,
                uid as u64,
                Default::default(),
                vec![state],
                Default::default(),
                &held,
            )
            .and_then(|s| s.encode())
            .expect("encoded");
            drop(rt);
            made.clear();
            let state = EngineState::decode(&bytes).expect("decoded");
            dict = Dictionary::new();
            streams = Streams::new();
            state.restore_tables(&dict, &mut streams).expect("tables");
            let restored = state.restore_events().expect("events");
            rt = runtime(plan, &mut dict, &mut streams);
            let index = |e: &EventRef| Rc::new(e.triples.clone());
            rt.load(state.queries.into_iter().next().unwrap(), &restored, &index)
                .expect("loaded");
        }
        let event = event_of(&dict, stream, uid as u64, (time, s, p, v));
        made.insert(uid as u64, event.clone());
        let index = Rc::new(event.triples.clone());
        rt.on_event(&event, &index, &dict);
        take_found(&mut rt, &mut out);
    }
    rt.close(&dict);
    take_found(&mut rt, &mut out);
    out
}

#[test]
fn a_runtime_restored_from_its_saved_state_continues_exactly() {
    let events: Vec<(i128, &str, &str, i64)> = vec![
        (1, "x1", "a", 1),
        (1, "x2", "a", 1),
        (2, "x1", "b", 2),
        (2, "x2", "b", 2),
        (3, "x1", "b", 3),
        (4, "x1", "c", 4),
        (4, "x2", "b", 5),
        (5, "x2", "c", 6),
        (6, "x1", "a", 7),
        (7, "x1", "b", 8),
        (8, "x1", "c", 9),
    ];
    let whole = run(KLEENE_STRICT, &events);
    assert_eq!(whole.len(), 2, "{whole:?}");
    for cut in 0..=events.len() {
        assert_eq!(
            run_split(KLEENE_STRICT, &events, cut),
            whole,
            "cut at {cut}"
        );
    }
}

#[test]
fn snapshots_of_another_format_or_not_snapshots_are_refused() {
    use spaseq_automaton::snapshot::{EngineState, SnapshotError, TermState};
    let err = EngineState::decode(b"nonsense").unwrap_err();
    assert_eq!(err, SnapshotError::NotASnapshot);
    assert_eq!(err.to_string(), "not a snapshot of spaseq's native engine");
    let state = EngineState {
        clocks: Default::default(),
        terms: vec![TermState::Iri("http://ex.org/a".into())],
        streams: vec![],
        last_uid: 0,
        events: vec![],
        queries: vec![],
        composed: Default::default(),
        late: vec![],
    };
    let mut bytes = state.encode().unwrap();
    assert_eq!(EngineState::decode(&bytes).unwrap(), state);
    bytes[12] = 99; // the format version's first byte
    let err = EngineState::decode(&bytes).unwrap_err();
    assert_eq!(err, SnapshotError::Version { found: 99 });
    assert!(err
        .to_string()
        .starts_with("snapshot format 99, but this spaseq reads format "));
}
