//! The engine on the V-shape plan `spaseq explain --plan` writes for fixtures/vshape.rq
//! (`SEQ(A ; B)`, B's price above A's for the same company, within 60 s): events fed as a
//! stream gives them, GPMs on the plan's evaluators (the host's callback included), the
//! host's failure, lateness, the feed loop and snapshots.

use oxrdf::{Literal, NamedNode, Term, Triple};
use spaseq_engine::{
    Engine, EngineError, FeedError, Host, HostFailed, LatePolicy, Pairs, Promise, Pushed, Refusal,
    Refused, Settings, Stop, TakenPairs, Verdict,
};
use spaseq_io::stream::live::Next;
use spaseq_io::stream::StreamEvent;
use std::cell::{Cell, RefCell};

const VSHAPE: &str = include_str!("../../plan/tests/data/vshape.plan.json");
const TRADES: &str = "http://ex.org/trades";
const SECOND: i128 = 1_000_000_000;

/// A host evaluating B itself (when the plan gives it the callback): the trades of the
/// event whose price is above the run's ?p1; or failing on its first call.
#[derive(Default)]
struct TestHost {
    evaluates: bool,
    fail: bool,
    asked: Cell<usize>,
    error: RefCell<Option<String>>,
}

impl Host for TestHost {
    fn evaluates(&self) -> bool {
        self.evaluates
    }

    fn evaluate(
        &self,
        gpm: &str,
        _uid: u64,
        mu: Option<Pairs>,
        _start: Option<i128>,
        _taken: Vec<TakenPairs>,
    ) -> Vec<Pairs> {
        self.asked.set(self.asked.get() + 1);
        if self.fail {
            self.fail("the host failed".into());
            return Vec::new();
        }
        assert_eq!(gpm, "B");
        // the test's events carry their values in the event itself: the engine hands the
        // host mu only, so this host answers from what it was told (see `trade`)
        let mu = mu.unwrap_or_default();
        let c = mu.iter().find(|(v, _)| v == "c").map(|(_, id)| *id);
        CURRENT.with(|now| {
            let (u, company, price, p2) = (*now.borrow()).expect("an event");
            let p1 = mu.iter().find(|(v, _)| v == "p1").map(|(_, id)| *id);
            if c.is_some_and(|c| c != company)
                || p1.is_some_and(|p1| PRICES.with(|p| p.borrow()[&p1]) >= price)
            {
                return Vec::new();
            }
            // mu's bindings and the solution's, as the Python matcher answers (mu ∪ nu)
            let mut row: Pairs = mu
                .iter()
                .filter(|(v, _)| !["u", "c", "p2"].contains(&v.as_str()))
                .cloned()
                .collect();
            row.extend([("u".into(), u), ("c".into(), company), ("p2".into(), p2)]);
            vec![row]
        })
    }

    fn kb_rows(&self, _: &str, _: usize, _: Pairs) -> Vec<Pairs> {
        Vec::new()
    }

    fn fail(&self, message: String) {
        self.error.borrow_mut().get_or_insert(message);
    }

    fn failed(&self) -> bool {
        self.error.borrow().is_some()
    }
}

thread_local! {
    /// The event being fed, as the host's ids: (u, company, price value, price id).
    static CURRENT: RefCell<Option<(u32, u32, i64, u32)>> = const { RefCell::new(None) };
    /// Price ids to values.
    static PRICES: RefCell<std::collections::HashMap<u32, i64>> = RefCell::default();
}

/// A match as (start s, end s, [(var, N-Triples)] sorted).
type Found = (i128, i128, Vec<(String, String)>);

fn iri(s: &str) -> NamedNode {
    NamedNode::new(format!("http://ex.org/{s}")).unwrap()
}

/// A trade event: `:e<n> :company :<company> ; :price <price>` at `time` seconds.
fn trade(engine: &Engine<TestHost>, n: u64, time: i128, company: &str, price: i64) -> StreamEvent {
    let e = iri(&format!("e{n}"));
    let dict = engine.dict();
    let u = dict.intern(e.clone().into());
    let c = dict.intern(iri(company).into());
    let p = dict.intern(Literal::from(price).into());
    CURRENT.with(|now| *now.borrow_mut() = Some((u, c, price, p)));
    PRICES.with(|prices| prices.borrow_mut().insert(p, price));
    StreamEvent {
        stream: 0,
        seq: n,
        time_ns: time * SECOND,
        start_ns: time * SECOND,
        dated: false,
        graph: Term::NamedNode(iri(&format!("g{n}"))),
        triples: vec![
            Triple::new(e.clone(), iri("company"), iri(company)),
            Triple::new(e, iri("price"), Literal::from(price)),
        ],
    }
}

/// The matches released so far.
fn matches(engine: &Engine<TestHost>, query: usize) -> Vec<Found> {
    let (records, names) = engine.take_matches(query).unwrap();
    records
        .into_iter()
        .map(|m| {
            let mut pairs: Vec<(String, String)> = names
                .pairs(m.mu.iter().copied().enumerate())
                .into_iter()
                .filter(|(v, _)| ["c", "p1", "p2"].contains(&v.as_str()))
                .map(|(v, id)| (v, engine.dict().get(id).to_string()))
                .collect();
            pairs.sort();
            (m.start / SECOND, m.time / SECOND, pairs)
        })
        .collect()
}

fn int(v: i64) -> String {
    format!("\"{v}\"^^<http://www.w3.org/2001/XMLSchema#integer>")
}

const INPUT: [(i128, &str, i64); 5] = [
    (1, "acme", 10),
    (2, "bolt", 5),
    (3, "acme", 12),
    (4, "bolt", 7),
    (70, "acme", 30),
];

fn run(plan: &str, host: TestHost) -> Vec<Found> {
    let engine = Engine::new();
    let q = engine.register(plan, host).unwrap();
    for (n, (t, c, p)) in INPUT.iter().enumerate() {
        let e = trade(&engine, n as u64, *t, c, *p);
        engine.feed_event(TRADES, e).unwrap();
    }
    engine.close().unwrap();
    matches(&engine, q)
}

fn expected() -> Vec<Found> {
    let m = |s, e, c: &str, p1, p2| {
        let mut v = vec![
            ("c".to_string(), format!("<http://ex.org/{c}>")),
            ("p1".to_string(), int(p1)),
            ("p2".to_string(), int(p2)),
        ];
        v.sort();
        (s, e, v)
    };
    // each company's next higher price within 60 s (acme at 70 s is past the window of
    // acme at 1 s, and 30 > 12 is past the one at 3 s)
    vec![m(1, 3, "acme", 10, 12), m(2, 4, "bolt", 5, 7)]
}

#[test]
fn events_fed_give_the_plan_s_matches() {
    assert_eq!(run(VSHAPE, TestHost::default()), expected());
}

#[test]
fn a_gpm_the_plan_gives_the_callback_is_evaluated_by_the_host() {
    let plan = VSHAPE.replacen("\"evaluator\": \"native\"", "\"evaluator\": \"x\"", 1);
    let plan = plan.replacen(
        "\"evaluator\": \"native\"",
        "\"evaluator\": \"callback\"",
        1,
    );
    let plan = plan.replacen("\"evaluator\": \"x\"", "\"evaluator\": \"native\"", 1);
    let host = TestHost {
        evaluates: true,
        ..TestHost::default()
    };
    assert_eq!(run(&plan, host), expected());
}

#[test]
fn a_plan_the_engine_cannot_follow_is_refused_with_the_gpm_named() {
    let engine: Engine<TestHost> = Engine::new();
    let callback = VSHAPE.replacen(
        "\"evaluator\": \"native\"",
        "\"evaluator\": \"callback\"",
        1,
    );
    let err = engine.register(&callback, TestHost::default()).unwrap_err();
    assert!(
        matches!(&err, EngineError::Plan { gpm, why: Refusal::NoCallback } if gpm == "A"),
        "{err}"
    );
    let undecided = VSHAPE.replacen("\"evaluator\": \"native\"", "\"evaluator\": \"\"", 1);
    let err = engine
        .register(&undecided, TestHost::default())
        .unwrap_err();
    assert!(
        matches!(
            &err,
            EngineError::Plan {
                why: Refusal::NoEvaluator,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("does not say which evaluator"),
        "{err}"
    );
    assert!(matches!(
        engine.register("{", TestHost::default()),
        Err(EngineError::PlanFormat(_))
    ));
    assert_eq!(engine.clock(7), Err(EngineError::NoQuery(7)));
}

#[test]
fn a_host_s_failure_stops_the_feed_at_its_query() {
    let plan = VSHAPE.replace("\"evaluator\": \"native\"", "\"evaluator\": \"callback\"");
    let engine = Engine::new();
    let host = TestHost {
        evaluates: true,
        fail: true,
        ..TestHost::default()
    };
    let q = engine.register(&plan, host).unwrap();
    let e = trade(&engine, 0, 1, "acme", 10);
    assert_eq!(
        engine.feed_event(TRADES, e),
        Err(FeedError::Host(HostFailed { query: q }))
    );
    assert_eq!(engine.with_host(q, |h| h.asked.get()).unwrap(), 1);
}

#[test]
fn the_feed_loop_stops_at_max_and_at_the_end_and_lateness_is_judged_by_the_clock() {
    let engine = Engine::new();
    let q = engine.register(VSHAPE, TestHost::default()).unwrap();
    let mut input = INPUT
        .iter()
        .enumerate()
        .map(|(n, (t, c, p))| trade(&engine, n as u64, *t, c, *p))
        .collect::<Vec<_>>()
        .into_iter();
    let fed = engine
        .feed(|| input.next().map(|e| Ok((TRADES, e))), 2)
        .unwrap();
    assert_eq!((fed.fed, fed.last, fed.ended), (2, Some(2 * SECOND), false));
    let late = engine.late(TRADES, SECOND, false).expect("late");
    assert_eq!((late.promise, late.at), (Promise::Processed, 2 * SECOND));
    assert_eq!(engine.late(TRADES, 2 * SECOND, false), None);
    let fed = engine
        .feed(|| input.next().map(|e| Ok((TRADES, e))), 10)
        .unwrap();
    assert_eq!((fed.fed, fed.ended), (3, true));
    assert_eq!(engine.clock(q), Ok(Some(70 * SECOND)));
}

/// An event that lasts is refused whole when a query planned for point events reads its
/// stream, never fed as a point (docs/decisions.md 71): by `feed_event`, and by the feed
/// loops as the stream's error after the events before it.
#[test]
fn events_that_last_are_refused_with_the_stream_s_error() {
    let engine = Engine::new();
    let q = engine.register(VSHAPE, TestHost::default()).unwrap();
    let mut lasting = trade(&engine, 9, 5, "acme", 10);
    lasting.start_ns = 4 * SECOND;
    let refused = engine.feed_event(TRADES, lasting.clone()).unwrap_err();
    assert!(
        matches!(&refused, FeedError::Refused(EngineError::Lasting(e)) if e.start_ns == 4 * SECOND),
        "{refused:?}"
    );
    assert_eq!(engine.clock(q), Ok(None), "fed to no query");
    let mut input = vec![
        trade(&engine, 0, 1, "acme", 10),
        lasting,
        trade(&engine, 2, 6, "bolt", 5),
    ]
    .into_iter();
    let fed = engine
        .feed(|| input.next().map(|e| Ok((TRADES, e))), 10)
        .unwrap();
    assert_eq!((fed.fed, fed.last, fed.ended), (1, Some(SECOND), true));
    assert_eq!(
        fed.source,
        Some(0),
        "the refused event's source, for the caller to name"
    );
    let error = fed.error.expect("the refusal").to_string();
    assert!(
        error.contains("and query 0 was planned for point events: register it with intervals on")
            && error.contains("<http://ex.org/g9>"),
        "{error}"
    );
    assert_eq!(input.len(), 1, "nothing read after the refused event");
    let mut lasting = trade(&engine, 3, 7, "acme", 10);
    lasting.start_ns = 6 * SECOND;
    let fed = engine
        .feed_live(
            Next::Event(lasting, 3),
            || Next::Idle,
            |_| TRADES,
            10,
            |_| {},
        )
        .unwrap();
    assert_eq!((fed.fed, fed.ended, fed.source), (0, true, Some(0)));
    let error = fed.error.expect("the refusal").error;
    assert_eq!(error.line, Some(3), "live: the line its graph started on");
}

#[test]
fn a_snapshot_restored_and_resumed_continues_exactly() {
    let whole = run(VSHAPE, TestHost::default());
    let engine = Engine::new();
    let q = engine.register(VSHAPE, TestHost::default()).unwrap();
    for (n, (t, c, p)) in INPUT.iter().enumerate().take(2) {
        let e = trade(&engine, n as u64, *t, c, *p);
        engine.feed_event(TRADES, e).unwrap();
    }
    let mut got = matches(&engine, q);
    let data = engine.snapshot(&[q]).unwrap();
    let restored: Engine<TestHost> = Engine::from_snapshot(&data).unwrap();
    assert_eq!(restored.restoring(), 1);
    let q = restored.register(VSHAPE, TestHost::default()).unwrap();
    restored.resume(&[q]).unwrap();
    assert!(restored.resume(&[q]).is_err(), "a snapshot is resumed once");
    for (n, (t, c, p)) in INPUT.iter().enumerate().skip(2) {
        let e = trade(&restored, n as u64, *t, c, *p);
        restored.feed_event(TRADES, e).unwrap();
    }
    restored.close().unwrap();
    got.extend(matches(&restored, q));
    assert_eq!(got, whole);
}

#[test]
fn promises_about_time_make_events_late_are_said_in_the_input_s_form_and_are_kept_by_snapshots() {
    let engine = Engine::new();
    let q = engine.register(VSHAPE, TestHost::default()).unwrap();
    for (n, t) in [(0, 1), (1, 2)] {
        engine
            .feed_event(TRADES, trade(&engine, n, t, "acme", 10))
            .unwrap();
    }
    assert_eq!(
        engine.late(TRADES, SECOND, false).unwrap().to_string(),
        "event at 1 on <http://ex.org/trades> is earlier than 2, already processed on this \
         query's streams (late event)"
    );
    assert_eq!(engine.heartbeat(10 * SECOND), Ok(true));
    assert_eq!(engine.heartbeat(5 * SECOND), Ok(false));
    let late = engine.late(TRADES, 5 * SECOND + SECOND / 2, true).unwrap();
    assert_eq!(
        late.to_string(),
        "event at 1970-01-01T00:00:05.5Z on <http://ex.org/trades> is earlier than \
         1970-01-01T00:00:10Z, which a heartbeat (advance_to) said no event would precede \
         (late event)"
    );
    engine
        .feed_event(TRADES, trade(&engine, 2, 20, "acme", 11))
        .unwrap();
    engine.flush().unwrap();
    assert_eq!(engine.flushed(q), Ok(Some(20 * SECOND)));
    let late = engine.late(TRADES, 20 * SECOND, false).unwrap();
    assert_eq!((late.promise, late.at), (Promise::Flushed, 20 * SECOND));
    assert!(late
        .to_string()
        .contains("comes after flush() said no more events would come at 20"));
    // a snapshot keeps the clocks and the flushed instant
    matches(&engine, q);
    let data = engine.snapshot(&[q]).unwrap();
    let restored: Engine<TestHost> = Engine::from_snapshot(&data).unwrap();
    let r = restored.register(VSHAPE, TestHost::default()).unwrap();
    restored.resume(&[r]).unwrap();
    assert_eq!(restored.clocks(), engine.clocks());
    assert_eq!(restored.engine_clock(), Some(20 * SECOND));
    assert_eq!(
        restored.late(TRADES, 20 * SECOND, false),
        engine.late(TRADES, 20 * SECOND, false)
    );
    assert_eq!(
        restored.late(TRADES, 9 * SECOND, false).unwrap().promise,
        Promise::Heartbeat
    );
}

#[test]
fn a_pushed_late_event_stops_or_is_dropped_and_counted_and_a_new_instant_is_announced() {
    let engine = Engine::new();
    engine.configure(Settings {
        late: LatePolicy::Error,
        ..Settings::default()
    });
    let q = engine.register(VSHAPE, TestHost::default()).unwrap();
    let push = |engine: &Engine<TestHost>, n: u64, t: i128, instants: &RefCell<Vec<i128>>| {
        let e = engine.prepare(TRADES, (t * SECOND, t * SECOND, false), n, None, Vec::new());
        engine.push(&e, |time| {
            instants.borrow_mut().push(time);
            Ok::<(), ()>(())
        })
    };
    let instants = RefCell::new(Vec::new());
    assert!(matches!(
        push(&engine, 0, 5, &instants),
        Ok(Pushed::Fed { new_instant: true, ref late_for }) if late_for.is_empty()
    ));
    assert!(matches!(
        push(&engine, 1, 5, &instants),
        Ok(Pushed::Fed { new_instant: false, ref late_for }) if late_for.is_empty()
    ));
    assert_eq!(*instants.borrow(), [5 * SECOND]);
    match push(&engine, 2, 4, &instants) {
        Err(Stop::Late(late)) => assert_eq!(late.promise, Promise::Processed),
        other => panic!("not refused as late: {other:?}"),
    }
    assert_eq!(
        engine.late_count(q),
        Ok(0),
        "nothing of a refused event is applied"
    );
    engine.configure(Settings::default()); // LatePolicy::Drop
    assert!(matches!(
        push(&engine, 3, 4, &instants),
        Ok(Pushed::Dropped { ref late_for }) if *late_for == [q]
    ));
    assert_eq!(engine.clocks().dropped_late, 1);
    assert_eq!(engine.late_count(q), Ok(1));
    // the host's hook failing stops the push before the event is fed
    let e = engine.prepare(TRADES, (6 * SECOND, 6 * SECOND, false), 5, None, Vec::new());
    assert!(matches!(
        engine.push(&e, |_| Err("no KB")),
        Err(Stop::Instant("no KB"))
    ));
    assert_eq!(engine.clock(q), Ok(Some(5 * SECOND)));
}

#[test]
fn an_unregistered_query_makes_no_event_late_and_judging_adds_no_stream() {
    let engine = Engine::new();
    let q = engine.register(VSHAPE, TestHost::default()).unwrap();
    engine
        .feed_event(TRADES, trade(&engine, 0, 100, "acme", 10))
        .unwrap();
    engine.configure(Settings {
        late: LatePolicy::Error,
        ..Settings::default()
    });
    assert!(engine.judge(TRADES, 50 * SECOND, false, false).is_err());
    engine.unregister(q).unwrap();
    let again = engine.register(VSHAPE, TestHost::default()).unwrap();
    assert_eq!(
        engine.judge(TRADES, 50 * SECOND, false, false),
        Ok(Verdict::Feed)
    );
    engine.unregister(again).unwrap();
    assert_eq!(engine.unregister(9), Err(EngineError::NoQuery(9)));
    let streams = engine.streams().len();
    assert_eq!(engine.late("http://ex.org/unknown", 0, false), None);
    assert_eq!(engine.streams().len(), streams);
    engine.heartbeat(10 * SECOND).unwrap();
    let late = engine.late("http://ex.org/unknown", 0, false).unwrap();
    assert_eq!((late.promise, late.at), (Promise::Heartbeat, 10 * SECOND));
    // a stream no registered query reads, and a query's output stream, are no input
    let unread = engine
        .judge("http://ex.org/unknown", 0, false, false)
        .unwrap_err();
    assert_eq!(
        unread.to_string(),
        "no registered query reads the stream <http://ex.org/unknown> (the streams read are \
         none: no query is registered)"
    );
    let q = engine.register(VSHAPE, TestHost::default()).unwrap();
    assert!(engine.reads(TRADES) && !engine.reads("http://ex.org/unknown"));
    assert!(matches!(
        engine.judge("http://ex.org/unknown", 0, false, false),
        Err(Refused::Unread { read, .. }) if read == [TRADES]
    ));
    engine
        .set_output(q, "http://ex.org/out", "q.rq <http://ex.org/out>")
        .unwrap();
    assert_eq!(
        engine
            .judge("http://ex.org/out", 0, false, false)
            .unwrap_err()
            .to_string(),
        "<http://ex.org/out> is the output stream of q.rq <http://ex.org/out>: its events come \
         from that query, not from input"
    );
    engine.unregister_output("http://ex.org/out");
    engine.configure(Settings {
        drop_unread: true,
        ..Settings::default()
    });
    assert_eq!(
        engine.judge("http://ex.org/out", 0, false, false),
        Ok(Verdict::Unread)
    );
    assert_eq!(
        engine.judge(TRADES, 0, false, false),
        Ok(Verdict::Late(vec![q]))
    );
    // kept for a host that writes late events: pushed, and dropped once prepared
    assert_eq!(engine.judge(TRADES, 0, false, true), Ok(Verdict::Feed));
    let clocks = engine.clocks();
    assert_eq!((clocks.dropped_late, clocks.dropped_unread), (1, 1));
    assert_eq!(engine.late_count(q), Ok(1));
    engine.unregister(q).unwrap();
}

const RISES: &str = include_str!("data/rises.plan.json");
const RISES_OUT: &str = "http://ex.org/rises";

/// The results of query `query` so far as (number, time s, ?m), in release order.
fn rises(engine: &Engine<TestHost>, query: usize) -> Vec<(u64, i128, String)> {
    let (records, names) = engine.take_matches(query).unwrap();
    records
        .into_iter()
        .map(|m| {
            let named = names.pairs(m.mu.iter().copied().enumerate());
            let name = named.iter().find(|(v, _)| v == "m").map(|(_, id)| *id);
            let name = name.map_or(String::new(), |id| engine.dict().get(id).to_string());
            (m.number, m.time / SECOND, name)
        })
        .collect()
}

#[test]
fn a_reader_of_results_planned_for_points_is_refused_and_not_half_registered() {
    // a result lasts over its match: its reader must be planned for events that last
    let engine = Engine::new();
    let v = engine.register(VSHAPE, TestHost::default()).unwrap();
    engine.set_output(v, RISES_OUT, "<rises>").unwrap();
    let points = RISES.replace("\"intervals\": true", "\"intervals\": false");
    assert_ne!(points, RISES, "the fixture is planned for intervals");
    assert!(matches!(
        engine.register(&points, TestHost::default()),
        Err(EngineError::ReadsResults { producer, .. }) if producer == v
    ));
    assert_eq!(
        engine.release_order(),
        [v],
        "the refused reader is not registered"
    );
    let r = engine.register(RISES, TestHost::default()).unwrap();
    assert_eq!(engine.release_order(), [v, r]);
    engine.unregister_output(RISES_OUT); // the refused one left nothing to trip over
}

#[test]
fn a_query_reading_another_s_output_gets_its_numbered_results_as_events_across_a_snapshot() {
    // the V-shape query's output read by a query matching every result it describes
    let engine = Engine::new();
    let v = engine.register(VSHAPE, TestHost::default()).unwrap();
    let r = engine.register(RISES, TestHost::default()).unwrap();
    engine.set_output(v, RISES_OUT, "<rises>").unwrap();
    assert_eq!(
        engine.release_order(),
        [v, r],
        "the reader's results come after its producer's"
    );
    assert_eq!(engine.gates_floor(), None, "it holds no event back yet");
    assert!(matches!(
        engine.set_output(r, TRADES, "<r>"),
        Err(EngineError::Cycle(_))
    ));
    let feed = |engine: &Engine<TestHost>, from: usize, to: usize| {
        for (n, (t, c, p)) in INPUT.iter().enumerate().take(to).skip(from) {
            engine
                .feed_event(TRADES, trade(engine, n as u64, *t, c, *p))
                .unwrap();
        }
    };
    feed(&engine, 0, 3);
    let numbered: Vec<u64> = engine
        .take_matches(v)
        .unwrap()
        .0
        .iter()
        .map(|m| m.number)
        .collect();
    assert_eq!(numbered, [1]); // acme 10 -> 12 at 3 s
    let first = rises(&engine, r);
    assert_eq!(first, [(1, 3, format!("<{RISES_OUT}#match-1>"))]);
    // a snapshot carries the numbering: the next result is the second
    let data = engine.snapshot(&[v, r]).unwrap();
    let restored: Engine<TestHost> = Engine::from_snapshot(&data).unwrap();
    let v2 = restored.register(VSHAPE, TestHost::default()).unwrap();
    let r2 = restored.register(RISES, TestHost::default()).unwrap();
    restored.set_output(v2, RISES_OUT, "<rises>").unwrap();
    restored.resume(&[v2, r2]).unwrap();
    feed(&restored, 3, 5);
    restored.close().unwrap();
    assert_eq!(
        rises(&restored, r2),
        [(2, 4, format!("<{RISES_OUT}#match-2>"))] // bolt 5 -> 7 at 4 s: its 2nd of the 2nd
    );
    // an event pushed on the output stream is refused
    assert!(matches!(
        restored.judge(RISES_OUT, 80 * SECOND, false, false),
        Err(Refused::Output { .. })
    ));
}

/// VSHAPE with a LATENESS of `seconds`.
fn vshape_late(seconds: u32) -> String {
    let plan = VSHAPE.replacen(
        "\"lateness\": null",
        &format!("\"lateness\": {{\"@decimal\": \"{seconds}\"}}"),
        1,
    );
    assert_ne!(plan, VSHAPE, "the plan has a lateness field");
    plan
}

#[test]
fn a_late_event_is_judged_per_query_skipped_by_those_it_is_late_for_and_counted_by_them() {
    let engine = Engine::new();
    let plain = engine.register(VSHAPE, TestHost::default()).unwrap();
    let held = engine
        .register(&vshape_late(5), TestHost::default())
        .unwrap();
    // bolt@2 comes after acme@3: late for the query without a lateness only
    let order = [0, 2, 1, 3, 4];
    let mut arrivals = order.iter().map(|&n| {
        let (t, c, p) = INPUT[n];
        Next::Event(trade(&engine, n as u64, t, c, p), 10 + n as u64)
    });
    let first = arrivals.next().unwrap();
    let mut late = Vec::new();
    let fed = engine
        .feed_live(
            first,
            || arrivals.next().unwrap_or(Next::End(None)),
            |_| TRADES,
            100,
            |d| late.push((d.stream.to_owned(), d.event.time_ns, d.late_for.to_vec())),
        )
        .unwrap();
    assert_eq!((fed.fed, fed.dropped, fed.ended), (5, 0, true));
    assert_eq!(late, [(TRADES.to_owned(), 2 * SECOND, vec![plain])]);
    assert_eq!(
        (engine.late_count(plain), engine.late_count(held)),
        (Ok(1), Ok(0))
    );
    assert_eq!(engine.clocks().dropped_late, 0, "it was fed to a query");
    // a snapshot keeps each query's count
    matches(&engine, plain);
    matches(&engine, held);
    let data = engine.snapshot(&[plain, held]).unwrap();
    let restored: Engine<TestHost> = Engine::from_snapshot(&data).unwrap();
    let r1 = restored.register(VSHAPE, TestHost::default()).unwrap();
    let r2 = restored
        .register(&vshape_late(5), TestHost::default())
        .unwrap();
    restored.resume(&[r1, r2]).unwrap();
    assert_eq!(
        (restored.late_count(r1), restored.late_count(r2)),
        (Ok(1), Ok(0))
    );
}

#[test]
fn the_held_query_sees_the_sorted_input_and_an_event_late_for_every_reader_is_fed_to_none() {
    let engine = Engine::new();
    let plain = engine.register(VSHAPE, TestHost::default()).unwrap();
    let held = engine
        .register(&vshape_late(5), TestHost::default())
        .unwrap();
    let mut arrivals = [0, 2, 1, 3, 4, 0].into_iter().map(|n| {
        let (t, c, p) = INPUT[n];
        Next::Event(trade(&engine, n as u64, t, c, p), n as u64)
    });
    let first = arrivals.next().unwrap();
    let next = || arrivals.next().unwrap_or(Next::Idle);
    let fed = engine
        .feed_live(first, next, |_| TRADES, 100, |_| ())
        .unwrap();
    // acme@1 again, after acme@70: behind the held query's watermark (65) too
    assert_eq!((fed.fed, fed.dropped), (5, 1));
    assert_eq!(
        (engine.late_count(plain), engine.late_count(held)),
        (Ok(2), Ok(1))
    );
    assert_eq!(engine.clocks().dropped_late, 1);
    let late = engine.judge_time(TRADES, SECOND, false);
    assert_eq!((late.late_for, late.all), (vec![plain, held], true));
    let first = late.first.unwrap();
    assert_eq!((first.promise, first.at), (Promise::Watermark, 65 * SECOND));
    engine.close().unwrap();
    assert_eq!(matches(&engine, held), expected());
    assert_eq!(
        matches(&engine, plain),
        expected()[..1].to_vec(),
        "bolt@2 skipped"
    );
}

#[test]
fn under_the_error_policy_a_live_event_late_for_one_reader_stops_the_feed_whole() {
    let engine = Engine::new();
    engine.configure(Settings {
        late: LatePolicy::Error,
        ..Settings::default()
    });
    let plain = engine.register(VSHAPE, TestHost::default()).unwrap();
    let held = engine
        .register(&vshape_late(5), TestHost::default())
        .unwrap();
    let mut arrivals = [0, 2, 1].into_iter().map(|n| {
        let (t, c, p) = INPUT[n];
        Next::Event(trade(&engine, n as u64, t, c, p), 7 + n as u64)
    });
    let first = arrivals.next().unwrap();
    let next = || arrivals.next().unwrap_or(Next::Idle);
    let mut told = 0;
    let fed = engine
        .feed_live(first, next, |_| TRADES, 100, |_| told += 1)
        .unwrap();
    let (late, source, line) = fed.refused.expect("refused");
    assert_eq!(
        (late.promise, late.time, source, line),
        (Promise::Processed, 2 * SECOND, 0, 8)
    );
    assert_eq!((fed.fed, told), (2, 0));
    assert_eq!(
        (engine.late_count(plain), engine.late_count(held)),
        (Ok(0), Ok(0))
    );
}
