//! Streaming replay (io/src/stream): files merged by time with the CLI's ties and `seq`,
//! graphs in several blocks, timestamps before and after, out-of-order files sorted on disk
//! with a tiny memory budget, gzip, and errors after the usable events.

use flate2::write::GzEncoder;
use spaseq_io::replay::Format;
use spaseq_io::stream::file::Mode;
use spaseq_io::stream::{Options, ReplayStream, StreamEvent};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const AT: &str = "<http://www.w3.org/ns/prov#generatedAtTime>";

/// A fresh directory for one test's files.
fn dir() -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let d = std::env::temp_dir().join(format!(
        "spaseq-stream-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    if name.ends_with(".gz") {
        let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(text.as_bytes()).unwrap();
        std::fs::write(&path, gz.finish().unwrap()).unwrap();
    } else {
        std::fs::write(&path, text).unwrap();
    }
    path.to_string_lossy().into_owned()
}

/// N-Quads of events `(graph, seconds, values)`, the timestamp line first.
fn nquads(events: &[(&str, i64, &[i64])]) -> String {
    let mut out = String::new();
    for (g, t, values) in events {
        out += &format!(
            "<http://ex.org/{g}> {AT} \"{t}\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n"
        );
        for v in *values {
            out += &format!("<http://ex.org/s> <http://ex.org/v> \"{v}\"^^<http://www.w3.org/2001/XMLSchema#integer> <http://ex.org/{g}> .\n");
        }
    }
    out
}

fn options(memory_events: usize) -> Options {
    Options {
        memory_events,
        spill_dir: Some(dir()),
        ..Options::default()
    }
}

fn read(
    paths: &[String],
    memory_events: usize,
) -> (ReplayStream, Vec<StreamEvent>, Option<String>) {
    let mut stream = ReplayStream::open(paths, &options(memory_events)).unwrap();
    let mut events = Vec::new();
    let mut error = None;
    for item in stream.by_ref() {
        match item {
            Ok(e) => events.push(e),
            Err(e) => error = Some(e.to_string()),
        }
    }
    (stream, events, error)
}

/// An event's graph name after `prefix` (an IRI's).
fn local(e: &StreamEvent, prefix: &str) -> String {
    let g = e.graph.to_string();
    g.trim_start_matches('<')
        .trim_start_matches(prefix)
        .trim_end_matches('>')
        .to_owned()
}

/// (stream, seq, seconds, graph local name, triple count) of each event.
fn view(events: &[StreamEvent]) -> Vec<(usize, u64, i128, String, usize)> {
    events
        .iter()
        .map(|e| {
            (
                e.stream,
                e.seq,
                e.time_ns / 1_000_000_000,
                local(e, "http://ex.org/"),
                e.triples.len(),
            )
        })
        .collect()
}

#[test]
fn files_merge_by_time_with_ties_in_file_then_first_appearance_order() {
    let d = dir();
    let a = write(
        &d,
        "a.nq",
        &nquads(&[
            ("a1", 1, &[1]),
            ("a2", 2, &[2]),
            ("a3", 2, &[3]),
            ("a4", 5, &[4]),
        ]),
    );
    let b = write(
        &d,
        "b.nq",
        &nquads(&[("b1", 0, &[1]), ("b2", 2, &[2, 3]), ("b3", 9, &[])]),
    );
    for memory in [1, 2, 100] {
        let (stream, events, error) = read(&[a.clone(), b.clone()], memory);
        assert_eq!(error, None);
        // seq: file a from 0, file b from len(a) + 1 = 5, as the CLI numbers them
        assert_eq!(
            view(&events),
            vec![
                (1, 5, 0, "b1".into(), 1),
                (0, 0, 1, "a1".into(), 1),
                (0, 1, 2, "a2".into(), 1),
                (0, 2, 2, "a3".into(), 1),
                (1, 6, 2, "b2".into(), 2),
                (0, 3, 5, "a4".into(), 1),
            ],
            "memory_events = {memory}"
        );
        // an empty graph is no event (b3): as in the Python reader
        let expected = if memory >= 4 {
            Mode::Memory
        } else {
            Mode::Stream
        };
        assert_eq!(stream.modes[0], expected, "memory_events = {memory}");
        assert_eq!(stream.spilled_runs, 0);
    }
}

#[test]
fn a_graph_in_several_blocks_is_one_event_stamped_before_or_after() {
    let d = dir();
    let trig = r#"@prefix : <http://ex.org/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
:g1 prov:generatedAtTime 1 .
:g1 { :s :v 1 . }
:g2 { :s :v 2 . }
:g1 { :s :v 3 . :s :v 1 . }
:g2 prov:generatedAtTime 2 .
:g3 { :s :v 4 . }
:g3 prov:generatedAtTime "3.0"^^<http://www.w3.org/2001/XMLSchema#decimal> .
:g3 prov:generatedAtTime 3 .
:g4 prov:generatedAtTime 4 .
:g4 { :s :v 5 . }
:g5 { :s :v 6 . }
:g5 prov:generatedAtTime 5 .
"#;
    let path = write(&d, "blocks.trig", trig);
    for memory in [2, 3, 100] {
        let (_, events, error) = read(std::slice::from_ref(&path), memory);
        assert_eq!(error, None, "memory_events = {memory}");
        let got: Vec<_> = view(&events).into_iter().map(|v| (v.2, v.3, v.4)).collect();
        assert_eq!(
            got,
            vec![
                (1, "g1".into(), 2),
                (2, "g2".into(), 1),
                (3, "g3".into(), 1),
                (4, "g4".into(), 1),
                (5, "g5".into(), 1),
            ],
            "memory_events = {memory}"
        );
    }
}

#[test]
fn a_graph_written_again_beyond_the_window_is_read_whole_with_a_note() {
    let d = dir();
    let mut text = nquads(&[
        ("g0", 0, &[1]),
        ("g1", 1, &[1]),
        ("g2", 2, &[1]),
        ("g3", 3, &[1]),
    ]);
    text += "<http://ex.org/s> <http://ex.org/w> \"late\" <http://ex.org/g0> .\n";
    let path = write(&d, "late.nq", &text);
    let (stream, events, error) = read(std::slice::from_ref(&path), 1);
    assert_eq!(error, None);
    assert_eq!(stream.modes, vec![Mode::Whole]);
    assert!(stream.notes[0].contains("read whole"), "{:?}", stream.notes);
    assert_eq!(events.len(), 4);
    assert_eq!(events[0].triples.len(), 2, "both blocks of g0 in one event");
    // the same file with a window that sees it all is read in memory, no note
    let (stream, again, _) = read(&[path], 8);
    assert_eq!((stream.modes, stream.notes.len()), (vec![Mode::Memory], 0));
    assert_eq!(again, events);
}

#[test]
fn an_out_of_order_file_is_sorted_on_disk_in_runs() {
    let d = dir();
    let times: Vec<i64> = (0..40).map(|i| (i * 17) % 40 / 2).collect(); // ties too
    let events: Vec<(String, i64)> = times
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("e{i}"), *t))
        .collect();
    let spec: Vec<(&str, i64, &[i64])> = events
        .iter()
        .map(|(g, t)| (g.as_str(), *t, &[7i64][..]))
        .collect();
    let path = write(&d, "shuffled.nq", &nquads(&spec));
    let (stream, sorted, error) = read(std::slice::from_ref(&path), 3);
    assert_eq!(error, None);
    assert_eq!(stream.modes, vec![Mode::Sorted]);
    assert!(
        stream.spilled_runs >= 40 / 3,
        "{} runs",
        stream.spilled_runs
    );
    assert!(
        stream.notes[0].contains("out of time order"),
        "{:?}",
        stream.notes
    );
    let (_, in_memory, _) = read(&[path], 1000);
    assert_eq!(sorted, in_memory);
    let keys: Vec<(i128, u64)> = sorted.iter().map(|e| (e.time_ns, e.seq)).collect();
    let mut expected = keys.clone();
    expected.sort();
    assert_eq!(keys, expected, "by time, ties by first appearance");
}

#[test]
fn gzip_files_stream_like_plain_ones() {
    let d = dir();
    let text = nquads(&[
        ("a", 1, &[1, 2]),
        ("b", 2, &[3]),
        ("c", 2, &[]),
        ("d", 3, &[4]),
    ]);
    let plain = write(&d, "x.nq", &text);
    let packed = write(&d, "x.nq.gz", &text);
    let (_, a, _) = read(&[plain], 1);
    let (_, b, _) = read(&[packed], 1);
    assert_eq!(a, b);
    assert_eq!(a.len(), 3);
}

#[test]
fn errors_come_after_the_usable_events_and_say_where() {
    let d = dir();
    let mut bad = nquads(&[("a1", 1, &[1]), ("a2", 3, &[2]), ("a3", 4, &[3])]);
    bad += "<http://ex.org/s> <http://ex.org/v> oops <http://ex.org/a3> .\n";
    let bad = write(&d, "bad.nq", &bad);
    let good = write(
        &d,
        "good.nq",
        &nquads(&[("b1", 2, &[1]), ("b2", 3, &[1]), ("b3", 4, &[1])]),
    );
    for memory in [1, 100] {
        let (_, events, error) = read(&[bad.clone(), good.clone()], memory);
        // a3 was being read at the error: left out; the cutoff is a2's time (3)
        let got: Vec<_> = view(&events).into_iter().map(|v| (v.1, v.3)).collect();
        assert_eq!(
            got,
            vec![
                (0, "a1".into()),
                (3, "b1".into()),
                (1, "a2".into()),
                (4, "b2".into())
            ]
        );
        let error = error.expect("an error");
        assert!(error.starts_with(&format!("{bad}:7:")), "{error}");
    }
    let missing = write(
        &d,
        "missing.trig",
        "<http://ex.org/g> { <http://ex.org/s> <http://ex.org/p> 1 . }\n",
    );
    let (_, events, error) = read(std::slice::from_ref(&missing), 1);
    assert!(events.is_empty());
    assert_eq!(
        error.unwrap(),
        format!("{missing}:1: event <http://ex.org/g> has no timestamp (expected a \
             <http://www.w3.org/ns/prov#generatedAtTime> triple on the graph name in the default graph)")
    );
    let (_, _, error) = read(&[d.join("nope.nq").to_string_lossy().into_owned()], 1);
    assert!(error.unwrap().ends_with("nope.nq: no such file"));
}

#[test]
fn a_directory_is_named_as_such_and_a_given_format_overrides_the_name() {
    let d = dir();
    let sub = d.join("recording");
    std::fs::create_dir_all(&sub).unwrap();
    let (_, _, error) = read(&[sub.to_string_lossy().into_owned()], 1);
    assert!(error
        .unwrap()
        .ends_with("recording: is a directory, not a replay file"));
    let text = nquads(&[("a", 1, &[1]), ("b", 2, &[2])]);
    let odd = write(&d, "events.txt", &text);
    let (_, _, error) = read(std::slice::from_ref(&odd), 10);
    assert!(error
        .unwrap()
        .contains("cannot tell the replay file's format"));
    let options = Options {
        format: Some(Format::NQuads),
        ..options(10)
    };
    let stream = ReplayStream::open(std::slice::from_ref(&odd), &options).unwrap();
    let times: Vec<i128> = stream.map(|e| e.unwrap().time_ns).collect();
    assert_eq!(times, vec![1_000_000_000, 2_000_000_000]);
}

/// What the first pass would stop at before a file's first line, told without reading it
/// (`spaseq run` asks before it writes anything): the same words as the first pass's.
#[test]
fn a_file_that_cannot_be_read_at_all_is_told_without_reading_it() {
    use spaseq_io::stream::file::unreadable;
    let d = dir();
    let sub = d.join("recording");
    std::fs::create_dir_all(&sub).unwrap();
    let message =
        |path: &Path, format| unreadable(&path.to_string_lossy(), format).map(|e| e.message);
    assert_eq!(
        message(&d.join("nope.nq"), None).as_deref(),
        Some("no such file")
    );
    assert_eq!(
        message(&sub, None).as_deref(),
        Some("is a directory, not a replay file")
    );
    let odd = write(&d, "events.txt", &nquads(&[("a", 1, &[1])]));
    assert!(message(Path::new(&odd), None)
        .unwrap()
        .starts_with("cannot tell the replay file's format"));
    assert_eq!(message(Path::new(&odd), Some(Format::NQuads)), None);
    let good = write(&d, "good.nq", &nquads(&[("a", 1, &[1])]));
    assert_eq!(message(Path::new(&good), None), None);
}

#[test]
fn a_bad_time_predicate_is_refused_at_once() {
    let options = Options {
        time_predicate: "not an iri".into(),
        ..Options::default()
    };
    assert!(ReplayStream::open(&[], &options).is_err());
}

#[test]
fn a_late_block_is_found_among_fingerprints_spilled_to_disk() {
    let d = dir();
    let names: Vec<String> = (0..5000).map(|i| format!("e{i}")).collect();
    let spec: Vec<(&str, i64, &[i64])> = names
        .iter()
        .enumerate()
        .map(|(i, g)| (g.as_str(), i as i64, &[1i64][..]))
        .collect();
    let mut text = nquads(&spec);
    text += "<http://ex.org/s> <http://ex.org/w> \"late\" <http://ex.org/e0> .\n";
    let path = write(&d, "late.nq", &text);
    // a window of 1: 5000 closed names, more than one run of fingerprints (4096)
    let (stream, events, error) = read(&[path], 1);
    assert_eq!(error, None);
    assert_eq!(stream.modes, vec![Mode::Whole]);
    assert_eq!((events.len(), events[0].triples.len()), (5000, 2));
}

/// A graph written again after the window closed it, then a syntax error while reading it:
/// the Python reader cuts at that graph's first appearance (the file's first graph here), so
/// nothing is delivered and the syntax error is the error, whatever the closed graphs'
/// timestamps (found by the differential test in tests/native/test_stream.py).
#[test]
fn a_graph_written_again_then_broken_cuts_at_its_first_appearance() {
    let d = dir();
    let quad =
        |g: u32| format!("<http://ex.org/s> <http://ex.org/v> \"0\" <http://ex.org/g{g}> .\n");
    for (i, stamp) in ["\"x\"", "\"0\"^^<http://www.w3.org/2001/XMLSchema#decimal>"]
        .iter()
        .enumerate()
    {
        let text = format!(
            "{}{}{}<http://ex.org/g0> {AT} {stamp} .\n{}<http://ex.org/s> <http://ex.org/v> oops\n",
            quad(2),
            quad(0),
            quad(1),
            quad(2)
        );
        let path = write(&d, &format!("again{i}.nq"), &text);
        for memory in [1, 2, 3, 100] {
            let (stream, events, error) = read(std::slice::from_ref(&path), memory);
            assert!(events.is_empty(), "{stamp}, memory_events = {memory}");
            let error = error.expect("an error");
            assert!(
                error.starts_with(&format!("{path}:6:37: N-Quads syntax error")),
                "{stamp}, memory_events = {memory}: {error}"
            );
            let expected = if memory < 3 {
                Mode::Whole
            } else {
                Mode::Memory
            };
            assert_eq!(stream.modes, vec![expected], "memory_events = {memory}");
        }
    }
}

#[test]
fn whether_a_stamp_was_a_datetime_survives_every_mode() {
    // odd graphs stamped with an xsd:dateTime, even ones with a number (decision 43)
    let d = dir();
    let stamp = |i: i64| {
        if i % 2 == 1 {
            format!("\"1970-01-01T00:00:{i:02}Z\"^^<http://www.w3.org/2001/XMLSchema#dateTime>")
        } else {
            format!("\"{i}\"^^<http://www.w3.org/2001/XMLSchema#integer>")
        }
    };
    let file = |order: &[i64]| {
        order
            .iter()
            .map(|i| {
                format!(
                    "<http://ex.org/g{i}> {AT} {} .\n<http://ex.org/s> <http://ex.org/v> \"{i}\" <http://ex.org/g{i}> .\n",
                    stamp(*i)
                )
            })
            .collect::<String>()
    };
    let in_order: Vec<i64> = (1..=30).collect();
    let shuffled: Vec<i64> = (1..=30).map(|i| (i * 7) % 31).collect();
    for (name, order, memory, mode) in [
        ("memory.nq", &in_order, 1000, Mode::Memory),
        ("stream.nq", &in_order, 3, Mode::Stream),
        ("sorted.nq", &shuffled, 3, Mode::Sorted),
    ] {
        let path = write(&d, name, &file(order));
        let (stream, events, error) = read(&[path], memory);
        assert_eq!(error, None);
        assert_eq!(stream.modes, vec![mode]);
        let dated: Vec<(i128, bool)> = events
            .iter()
            .map(|e| (e.time_ns / 1_000_000_000, e.dated))
            .collect();
        let expected: Vec<(i128, bool)> = (1..=30).map(|i| (i, i % 2 == 1)).collect();
        assert_eq!(dated, expected, "{name}");
    }
}

/// N-Quads of events `(graph, start, end)` in seconds, the start and end lines after a
/// triple of the graph; `end` by `prov:endedAtTime` for odd graphs, the time predicate for
/// even ones, and a point event written as before when the two are equal.
fn intervals(events: &[(i64, i64, i64)]) -> String {
    let int = |v: i64| format!("\"{v}\"^^<http://www.w3.org/2001/XMLSchema#integer>");
    let prov = |p: &str| format!("<http://www.w3.org/ns/prov#{p}>");
    let mut out = String::new();
    for (g, start, end) in events {
        out += &format!(
            "<http://ex.org/s> <http://ex.org/v> {} <http://ex.org/g{g}> .\n",
            int(*g)
        );
        if start == end {
            out += &format!("<http://ex.org/g{g}> {AT} {} .\n", int(*end));
            continue;
        }
        out += &format!(
            "<http://ex.org/g{g}> {} {} .\n",
            prov("startedAtTime"),
            int(*start)
        );
        let ended = if g % 2 == 1 {
            prov("endedAtTime")
        } else {
            AT.to_owned()
        };
        out += &format!("<http://ex.org/g{g}> {ended} {} .\n", int(*end));
    }
    out
}

/// (graph number, start, end) in seconds of each event.
fn spans(events: &[StreamEvent]) -> Vec<(i64, i128, i128)> {
    events
        .iter()
        .map(|e| {
            (
                local(e, "http://ex.org/g").parse().unwrap(),
                e.start_ns / 1_000_000_000,
                e.time_ns / 1_000_000_000,
            )
        })
        .collect()
}

/// Events that last keep their start in every mode (the sorted one writes it to disk), in
/// N-Quads (read by the scanner) and in TriG, ordered by their ends, ties by first
/// appearance.
#[test]
fn events_that_last_keep_their_start_in_every_mode() {
    let d = dir();
    let in_order: Vec<(i64, i64, i64)> = (1..=30).map(|i| (i, i - (i % 4), i)).collect();
    // ends shuffled, with ties (g and g + 15 end together)
    let shuffled: Vec<(i64, i64, i64)> = (1..=30)
        .map(|i| (i, (i * 7) % 15 - (i % 3), (i * 7) % 15))
        .collect();
    let mut expected_shuffled: Vec<(i64, i128, i128)> = shuffled
        .iter()
        .map(|(g, b, e)| (*g, i128::from(*b), i128::from(*e)))
        .collect();
    expected_shuffled.sort_by_key(|(_, _, e)| *e); // stable: ties by first appearance
    for (name, order, memory, mode) in [
        ("memory.nq", &in_order, 1000, Mode::Memory),
        ("stream.nq", &in_order, 3, Mode::Stream),
        ("sorted.nq", &shuffled, 3, Mode::Sorted),
        ("sorted.nq.gz", &shuffled, 1000, Mode::Memory),
    ] {
        let path = write(&d, name, &intervals(order));
        let (stream, events, error) = read(&[path], memory);
        assert_eq!(error, None, "{name}");
        assert_eq!(stream.modes, vec![mode], "{name}");
        let expected: Vec<(i64, i128, i128)> = if order == &in_order {
            in_order
                .iter()
                .map(|(g, b, e)| (*g, i128::from(*b), i128::from(*e)))
                .collect()
        } else {
            expected_shuffled.clone()
        };
        assert_eq!(spans(&events), expected, "{name}");
    }
    let trig = "@prefix : <http://ex.org/> .\n@prefix prov: <http://www.w3.org/ns/prov#> .\n\
                :g1 { :s :v 1 } :g1 prov:startedAtTime 2 ; prov:endedAtTime 6 .\n\
                :g2 { :s :v 2 } :g2 prov:generatedAtTime 5 .\n\
                :g3 prov:startedAtTime 1 ; prov:generatedAtTime 5 . :g3 { :s :v 3 }\n";
    let path = write(&d, "x.trig", trig);
    for memory in [1, 1000] {
        let (_, events, error) = read(std::slice::from_ref(&path), memory);
        assert_eq!(error, None);
        assert_eq!(spans(&events), vec![(2, 5, 5), (3, 1, 5), (1, 2, 6)]);
    }
}

/// A bad interval ends a file's events as a bad timestamp does: those before it are
/// delivered, then its error at its line.
#[test]
fn a_bad_interval_comes_after_the_usable_events_and_says_where() {
    let d = dir();
    let mut text = intervals(&[(1, 0, 1), (2, 2, 2), (3, 1, 3)]);
    text += "<http://ex.org/g4> <http://www.w3.org/ns/prov#startedAtTime> \"9\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n\
             <http://ex.org/s> <http://ex.org/v> \"4\" <http://ex.org/g4> .\n\
             <http://ex.org/g4> <http://www.w3.org/ns/prov#endedAtTime> \"8\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n";
    let path = write(&d, "bad.nq", &text);
    for memory in [1, 1000] {
        let (_, events, error) = read(std::slice::from_ref(&path), memory);
        assert_eq!(spans(&events), vec![(1, 0, 1), (2, 2, 2), (3, 1, 3)]);
        let error = error.expect("an error");
        assert!(
            error.starts_with(&format!(
                "{path}:11: event <http://ex.org/g4> starts (prov:startedAtTime \"9\""
            )),
            "{error}"
        );
        assert!(error.ends_with("line 11)"), "{error}");
    }
}
