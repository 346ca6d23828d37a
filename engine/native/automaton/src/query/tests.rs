//! The automaton's runtime on small plans written by `spaseq explain --plan` (tests/data,
//! kept current by tests/compile/test_plan.py from fixtures/automaton/*.rq): one stream, GPMs
//! of one pattern `?x <p> ?o` joined on `?x`, evaluated by a test evaluator, so that each
//! test is about the automaton alone: the event selection strategies `,` `;` `:` and the
//! modifiers `+` `?` `!`, the bounded iterations `{m,n}` `*` `{n}`, and a head negation.

#[path = "../../tests/support/one_pattern.rs"]
mod one_pattern;

use super::QueryRuntime;
use crate::buffer::Node;
use crate::event::{EventData, Streams};
use one_pattern::{runtime, OnePattern};
use oxrdf::{Literal, NamedNode, Term};
use spaseq_io::dictionary::Dictionary;
use spaseq_plan::plan::{Modifier, Strategy};
use spaseq_plan::Plan;
use std::rc::Rc;

const STRICT: &str = include_str!("../../tests/data/strict.plan.json");
const NEXT: &str = include_str!("../../tests/data/next.plan.json");
const ANY: &str = include_str!("../../tests/data/any.plan.json");
const KLEENE: &str = include_str!("../../tests/data/kleene_strict.plan.json");
const OPTIONAL: &str = include_str!("../../tests/data/optional.plan.json");
const NEGATION: &str = include_str!("../../tests/data/negation.plan.json");
const BOUNDED: &str = include_str!("../../tests/data/bounded.plan.json");
const STAR: &str = include_str!("../../tests/data/star.plan.json");
const EXACTLY: &str = include_str!("../../tests/data/exactly.plan.json");

/// A match: (start s, end s, [(GPM, event time s)]).
type Found = (i128, i128, Vec<(String, i128)>);

/// The matches of `plan` on events `(time in s, subject, predicate local name)` of one
/// stream, in release order.
fn run(plan: &str, events: &[(i128, &str, &str)]) -> Vec<Found> {
    let plan = Plan::from_json(plan).expect("a valid plan");
    let mut dict = Dictionary::new();
    let mut streams = Streams::new();
    let mut rt = runtime(&plan, &mut dict, &mut streams);
    let stream = streams.id("http://ex.org/s");
    let mut out = Vec::new();
    let found = |rt: &mut QueryRuntime<OnePattern>, out: &mut Vec<Found>| {
        for m in std::mem::take(&mut rt.out) {
            let taken = Node::chain(&m.node)
                .iter()
                .map(|t| (rt.gpm_names()[t.gpm].clone(), t.event.time / 1_000_000_000))
                .collect();
            out.push((m.start / 1_000_000_000, m.time / 1_000_000_000, taken));
        }
    };
    for (uid, &(time, s, p)) in events.iter().enumerate() {
        let triple = [
            dict.intern(NamedNode::new(format!("http://ex.org/{s}")).unwrap().into()),
            dict.intern(NamedNode::new(format!("http://ex.org/{p}")).unwrap().into()),
            dict.intern(Term::from(Literal::from(uid as i64))),
        ];
        let event = Rc::new(EventData {
            uid: uid as u64,
            stream,
            dated: false,
            time: time * 1_000_000_000,
            start: time * 1_000_000_000,
            seq: uid as u64,
            graph: None,
            triples: vec![triple],
            used: Default::default(),
        });
        let index = Rc::new(event.triples.clone());
        rt.on_event(&event, &index, &dict);
        found(&mut rt, &mut out);
    }
    rt.close(&dict);
    assert_eq!(
        rt.footprint()["runs"],
        0,
        "closed, no run is left in the arena"
    );
    found(&mut rt, &mut out);
    out
}

/// A match's events as (GPM, time s).
fn m(start: i128, end: i128, taken: &[(&str, i128)]) -> Found {
    let taken = taken.iter().map(|(g, t)| ((*g).to_owned(), *t)).collect();
    (start, end, taken)
}

#[test]
fn the_plans_are_the_queries_they_say() {
    let steps = |text: &str| {
        let plan = Plan::from_json(text).unwrap();
        let steps = plan.steps.iter();
        steps.map(|s| (s.modifier, s.strategy)).collect::<Vec<_>>()
    };
    use Modifier::{Negation, Optional, Plain as One};
    const PLUS: Modifier = Modifier::PLUS;
    let bounds = |min, max| Modifier::Kleene { min, max };
    use Strategy::{SkipTillAny, SkipTillNext, Strict};
    assert_eq!(steps(STRICT), [(One, None), (One, Some(Strict))]);
    assert_eq!(steps(NEXT), [(One, None), (One, Some(SkipTillNext))]);
    assert_eq!(steps(ANY), [(One, None), (One, Some(SkipTillAny))]);
    let kleene = [(One, None), (PLUS, Some(SkipTillNext)), (One, Some(Strict))];
    assert_eq!(steps(KLEENE), kleene);
    let bounded = [
        (One, None),
        (bounds(2, Some(3)), Some(SkipTillNext)),
        (One, Some(Strict)),
    ];
    assert_eq!(steps(BOUNDED), bounded);
    let star = [
        (One, None),
        (bounds(0, None), Some(SkipTillNext)),
        (One, Some(SkipTillNext)),
    ];
    assert_eq!(steps(STAR), star);
    let exactly = [(One, None), (bounds(2, Some(2)), Some(SkipTillNext))];
    assert_eq!(steps(EXACTLY), exactly);
    let optional = [
        (One, None),
        (Optional, Some(SkipTillNext)),
        (One, Some(SkipTillNext)),
    ];
    assert_eq!(steps(OPTIONAL), optional);
    let negation = [
        (One, None),
        (Negation, Some(SkipTillNext)),
        (One, Some(SkipTillNext)),
    ];
    assert_eq!(steps(NEGATION), negation);
}

#[test]
fn strict_takes_only_the_next_timestamp() {
    // `A , B`: B at the timestamp right after A's
    let got = run(STRICT, &[(1, "x", "a"), (2, "x", "b"), (3, "x", "b")]);
    assert_eq!(got, [m(1, 2, &[("A", 1), ("B", 2)])]);
    // an event of another subject at 2 is still a timestamp of the stream: A's run dies
    let got = run(STRICT, &[(1, "x", "a"), (2, "y", "z"), (3, "x", "b")]);
    assert_eq!(got, []);
}

#[test]
fn skip_till_next_commits_to_the_first_timestamp_with_a_result() {
    // `A ; B`: B may come later, but only the first B (at 3) is taken, not the one at 4
    let events = [(1, "x", "a"), (2, "y", "z"), (3, "x", "b"), (4, "x", "b")];
    assert_eq!(run(NEXT, &events), [m(1, 3, &[("A", 1), ("B", 3)])]);
    // every result at that first timestamp is taken (two events at 3)
    let events = [(1, "x", "a"), (3, "x", "b"), (3, "x", "b"), (4, "x", "b")];
    let got = run(NEXT, &events);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got.iter().all(|f| f.1 == 3), "{got:?}");
}

#[test]
fn skip_till_any_takes_every_later_result_within_the_window() {
    // `A : B`: each B after A in the window makes a match; B at 12 is outside 10 seconds
    let events = [(1, "x", "a"), (3, "x", "b"), (4, "x", "b"), (12, "x", "b")];
    let got = run(ANY, &events);
    assert_eq!(
        got,
        [
            m(1, 3, &[("A", 1), ("B", 3)]),
            m(1, 4, &[("A", 1), ("B", 4)])
        ]
    );
}

#[test]
fn the_selection_joins_on_the_shared_variable() {
    // B of another subject is no result for A's run, whatever the strategy
    for plan in [STRICT, NEXT, ANY] {
        assert_eq!(run(plan, &[(1, "x", "a"), (2, "y", "b")]), []);
    }
}

#[test]
fn kleene_plus_iterates_and_needs_one_iteration() {
    // `A ; B+ , C`: B+ takes B at 2 and 3; C strict after the last B
    let events = [(1, "x", "a"), (2, "x", "b"), (3, "x", "b"), (4, "x", "c")];
    let got = run(KLEENE, &events);
    assert_eq!(got, [m(1, 4, &[("A", 1), ("B", 2), ("B", 3), ("C", 4)])]);
    // no B at all: B+ needs one
    assert_eq!(run(KLEENE, &[(1, "x", "a"), (2, "x", "c")]), []);
}

#[test]
fn an_optional_atom_is_taken_when_its_event_comes() {
    // `A ; B? ; C`: with B between, the match takes it
    let events = [(1, "x", "a"), (2, "x", "b"), (3, "x", "c")];
    assert_eq!(
        run(OPTIONAL, &events),
        [m(1, 3, &[("A", 1), ("B", 2), ("C", 3)])]
    );
    // without B, the match skips it
    let events = [(1, "x", "a"), (3, "x", "c")];
    assert_eq!(run(OPTIONAL, &events), [m(1, 3, &[("A", 1), ("C", 3)])]);
}

#[test]
fn a_negated_atom_kills_the_runs_its_event_comes_between() {
    // `A ; B! ; C`: B between A and C, no match
    let events = [(1, "x", "a"), (2, "x", "b"), (3, "x", "c")];
    assert_eq!(run(NEGATION, &events), []);
    // no B, or a B of another subject (the absence joins on ?x): a match, B not in it
    let events = [(1, "x", "a"), (3, "x", "c")];
    assert_eq!(run(NEGATION, &events), [m(1, 3, &[("A", 1), ("C", 3)])]);
    let events = [(1, "x", "a"), (2, "y", "b"), (3, "x", "c")];
    assert_eq!(run(NEGATION, &events), [m(1, 3, &[("A", 1), ("C", 3)])]);
    // B after C does not undo the match
    let events = [(1, "x", "a"), (3, "x", "c"), (4, "x", "b")];
    assert_eq!(run(NEGATION, &events), [m(1, 3, &[("A", 1), ("C", 3)])]);
}

#[test]
fn a_bounded_loop_goes_on_from_its_lower_bound_and_stops_at_its_upper() {
    // `A ; B{2,3} , C`: two Bs and then C make a match, one B does not
    let a = (1, "x", "a");
    let got = run(BOUNDED, &[a, (2, "x", "b"), (3, "x", "b"), (4, "x", "c")]);
    assert_eq!(got, [m(1, 4, &[("A", 1), ("B", 2), ("B", 3), ("C", 4)])]);
    assert_eq!(run(BOUNDED, &[a, (2, "x", "b"), (3, "x", "c")]), []);
    // three Bs: the upper bound
    let events = [
        a,
        (2, "x", "b"),
        (3, "x", "b"),
        (4, "x", "b"),
        (5, "x", "c"),
    ];
    let three = [("A", 1), ("B", 2), ("B", 3), ("B", 4), ("C", 5)];
    assert_eq!(run(BOUNDED, &events), [m(1, 5, &three)]);
    // four Bs: the run that took three does not wait for a fourth, and C is not next to
    // the third; the first B after A starts the loop (`;`), so none starts at the second
    let events = [a, (2, "x", "b"), (3, "x", "b"), (4, "x", "b")];
    let events = [&events[..], &[(5, "x", "b"), (6, "x", "c")]].concat();
    assert_eq!(run(BOUNDED, &events), []);
}

#[test]
fn a_loop_of_exactly_n_takes_n() {
    // `A ; B{2}` ending the sequence: the match of two Bs only, reported at the second
    let events = [(1, "x", "a"), (2, "x", "b"), (3, "x", "b"), (4, "x", "b")];
    assert_eq!(
        run(EXACTLY, &events),
        [m(1, 3, &[("A", 1), ("B", 2), ("B", 3)])]
    );
    assert_eq!(run(EXACTLY, &[(1, "x", "a"), (2, "x", "b")]), []);
}

#[test]
fn zero_iterations_are_an_untaken_optional_atom() {
    // `A ; B* ; C`: no B between A and C, the match without B
    let events = [(1, "x", "a"), (2, "x", "c")];
    assert_eq!(run(STAR, &events), [m(1, 2, &[("A", 1), ("C", 2)])]);
    // a B between: every count from one, and not the match without it
    let events = [(1, "x", "a"), (2, "x", "b"), (3, "x", "b"), (4, "x", "c")];
    let mut got = run(STAR, &events);
    got.sort();
    assert_eq!(
        got,
        [
            m(1, 4, &[("A", 1), ("B", 2), ("B", 3), ("C", 4)]),
            m(1, 4, &[("A", 1), ("B", 2), ("C", 4)]),
        ]
    );
    // a B of another subject is no X in A's context: it neither loops nor blocks
    let events = [(1, "x", "a"), (2, "y", "b"), (3, "x", "c")];
    assert_eq!(run(STAR, &events), [m(1, 3, &[("A", 1), ("C", 3)])]);
}

const HEAD_NEGATION: &str = include_str!("../../tests/data/head_negation.plan.json");

#[test]
fn a_head_negation_drops_the_matches_its_event_comes_before_within_the_window() {
    // `B! ; A ; C` within 10 s: a B of the match's subject before A, inside the window
    let events = [(1, "x", "b"), (3, "x", "a"), (4, "x", "c")];
    assert_eq!(run(HEAD_NEGATION, &events), []);
    // a B of another subject, or one the match would not fit one window with: a match
    let events = [(1, "y", "b"), (3, "x", "a"), (4, "x", "c")];
    assert_eq!(
        run(HEAD_NEGATION, &events),
        [m(3, 4, &[("A", 3), ("C", 4)])]
    );
    let events = [(1, "x", "b"), (8, "x", "a"), (12, "x", "c")];
    assert_eq!(
        run(HEAD_NEGATION, &events),
        [m(8, 12, &[("A", 8), ("C", 12)])]
    );
    // a B at the match's first timestamp, or after it, is not before it
    let events = [(3, "x", "b"), (3, "x", "a"), (4, "x", "b"), (5, "x", "c")];
    assert_eq!(
        run(HEAD_NEGATION, &events),
        [m(3, 5, &[("A", 3), ("C", 5)])]
    );
}
