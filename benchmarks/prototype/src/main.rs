//! The benchmarks' prototype row (issue 29): what a program written for one query does on the
//! hardware, beside `spaseq run`. It reads a generated stock replay file (N-Quads, one event per
//! graph, its `prov:generatedAtTime` line first, as `benchmarks/generators.py` writes them), and
//! finds every V-shape `SEQ(A op B op C)` of one company within the window, with the FILTERs
//! and the strategy of `--query`:
//!
//! - `vshape-any` (`queries/vshape_any.rq`): `?p2 > ?p1`, `?p3 < ?p2`, skip-till-any `:`;
//! - `vshape-many` (`queries/vshape_many.rq`): `?p2 <= ?p1 * 0.98`, `?p3 > ?p1`, `:`;
//! - `vshape-next` (`queries/vshape_next.rq`): vshape-any's FILTERs, skip-till-next `;` (a
//!   partial match takes the first later trade of its company that fits, and only that);
//! - `vshape-strict` (`queries/vshape_strict.rq`): vshape-any's FILTERs, strict contiguity `,`
//!   (the next event of the stream, of any company, or the partial match dies);
//! - `vshape-any-matched` (`queries/vshape_any_matched.rq`): vshape-any with `CONSUMPTION
//!   MATCHED` (every GPM reads both of its event's triples, so a trade takes part in one match
//!   at most: a trade completes the first match in start order, then B's, and that match's
//!   three trades are used up).
//!
//! The generated streams have one event per timestamp, which is what makes these rules this
//! simple (docs/semantics.md has the general ones). Prices are exact decimals compared as
//! integers scaled once when read; `:` keeps a company's trades in the window as a queue
//! expired from the front, `;` each company's waiting partial matches, `,` the previous
//! event's. Each match is written as its three graph IRIs on a line (`--out`); the counts go
//! to stdout as JSON. No engine code, std only.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};

const GENERATED: &[u8] = b"<http://www.w3.org/ns/prov#generatedAtTime>";
const PRICE: &[u8] = b"<http://example/price>";
/// Prices kept in millionths: every generated decimal is exact at that scale.
const SCALE: i64 = 1_000_000;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Query {
    Any,
    Many,
}

/// How B follows A and C follows B.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Strategy {
    /// `:` every later trade of the company.
    Any,
    /// `;` the first later trade of the company that fits.
    Next,
    /// `,` the next event of the stream.
    Strict,
    /// `:` with `CONSUMPTION MATCHED`: every later unused trade of the company.
    Matched,
}

/// A partial match: A's trade, and B's once taken.
#[derive(Clone, Copy)]
struct Partial {
    a: Trade,
    b: Option<Trade>,
}

impl Query {
    /// Whether trades priced `p1`, `p2`, `p3` (in millionths) form the query's V-shape.
    fn b_fits(self, p1: i64, p2: i64) -> bool {
        match self {
            Query::Any => p2 > p1,
            Query::Many => p2 * 100 <= p1 * 98,
        }
    }
    fn c_fits(self, p1: i64, p2: i64, p3: i64) -> bool {
        match self {
            Query::Any => p3 < p2,
            Query::Many => p3 > p1,
        }
    }
}

/// One trade: its time (ns), price (millionths) and graph name (an index into `names`).
#[derive(Clone, Copy)]
struct Trade {
    time: i64,
    price: i64,
    name: usize,
}

fn main() {
    let (mut query, mut strategy) = (Query::Any, Strategy::Any);
    let mut window_ns: i64 = 60 * 1_000_000_000;
    let mut out_path: Option<String> = None;
    let mut files: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--query" => {
                (query, strategy) = match args.next().as_deref() {
                    Some("vshape-any") => (Query::Any, Strategy::Any),
                    Some("vshape-many") => (Query::Many, Strategy::Any),
                    Some("vshape-next") => (Query::Any, Strategy::Next),
                    Some("vshape-strict") => (Query::Any, Strategy::Strict),
                    Some("vshape-any-matched") => (Query::Any, Strategy::Matched),
                    other => fail(&format!(
                        "--query {other:?}: vshape-any, vshape-many, vshape-next, vshape-strict \
                         or vshape-any-matched"
                    )),
                }
            }
            "--window-seconds" => {
                let s: i64 = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| fail("--window-seconds N"));
                window_ns = s * 1_000_000_000;
            }
            "--out" => out_path = args.next(),
            _ => files.push(arg),
        }
    }
    if files.len() != 1 {
        fail("one stock replay file");
    }
    let mut out: Box<dyn Write> = match &out_path {
        Some(p) => Box::new(BufWriter::with_capacity(
            1 << 20,
            File::create(p).unwrap_or_else(|e| fail(&e.to_string())),
        )),
        None => Box::new(std::io::sink()),
    };
    let reader = BufReader::with_capacity(
        1 << 20,
        File::open(&files[0]).unwrap_or_else(|e| fail(&e.to_string())),
    );
    let mut names: Vec<String> = Vec::new();
    let mut companies: HashMap<Vec<u8>, VecDeque<Trade>> = HashMap::new();
    // `;`: each company's partial matches, oldest first; `,`: the previous event's
    let mut waiting: HashMap<Vec<u8>, Vec<Partial>> = HashMap::new();
    let mut previous: Vec<(Vec<u8>, Partial)> = Vec::new();
    // `vshape-any-matched`: the highest price after each unused trade of a company
    let mut highest: Vec<i64> = Vec::new();
    let (mut events, mut matches) = (0u64, 0u64);
    let mut time: i64 = 0;
    let mut found = |a: Trade, b: Trade, c: Trade, names: &[String]| {
        matches += 1;
        writeln!(out, "{} {} {}", names[a.name], names[b.name], names[c.name]).expect("write");
    };
    for line in reader.split(b'\n') {
        let line = line.unwrap_or_else(|e| fail(&e.to_string()));
        let mut terms = line.splitn(4, |&b| b == b' ');
        let (Some(s), Some(p), Some(rest)) = (terms.next(), terms.next(), terms.next()) else {
            continue;
        };
        if p == GENERATED {
            time = parse_datetime(literal(rest));
            events += 1;
            continue;
        }
        if p != PRICE {
            continue;
        }
        let graph = terms
            .next()
            .and_then(|g| g.split(|&b| b == b' ').next())
            .unwrap_or_else(|| fail("a quad"));
        let price = parse_decimal(literal(rest));
        names.push(String::from_utf8_lossy(&graph[1..graph.len() - 1]).into_owned());
        let trade = Trade {
            time,
            price,
            name: names.len() - 1,
        };
        let in_window = |a: &Trade| a.time >= time - window_ns;
        match strategy {
            Strategy::Any => {
                let window = companies.entry(s.to_vec()).or_default();
                while window.front().is_some_and(|a| !in_window(a)) {
                    window.pop_front();
                }
                // the new trade as C: every (A, B) of the company before it, in the window
                for (i, a) in window.iter().enumerate() {
                    for b in window.iter().skip(i + 1) {
                        if b.time > a.time
                            && time > b.time
                            && query.b_fits(a.price, b.price)
                            && query.c_fits(a.price, b.price, price)
                        {
                            found(*a, *b, trade, &names);
                        }
                    }
                }
                window.push_back(trade);
            }
            Strategy::Matched => {
                // the company's unused trades in the window; B must top both A and this trade
                // (`?p2 > ?p1`, `?p3 < ?p2`): the first A, in time order, with a higher trade
                // after it, then the first such B
                let window = companies.entry(s.to_vec()).or_default();
                while window.front().is_some_and(|a| !in_window(a)) {
                    window.pop_front();
                }
                highest.clear();
                highest.resize(window.len() + 1, i64::MIN);
                for i in (0..window.len()).rev() {
                    highest[i] = highest[i + 1].max(window[i].price);
                }
                let pair = (0..window.len()).find_map(|i| {
                    let floor = window[i].price.max(price);
                    (highest[i + 1] > floor)
                        .then(|| (i, (i + 1..window.len()).find(|&j| window[j].price > floor)))
                });
                match pair {
                    Some((i, Some(j))) => {
                        found(window[i], window[j], trade, &names);
                        window.remove(j);
                        window.remove(i);
                    }
                    _ => window.push_back(trade),
                }
            }
            Strategy::Next => {
                // each waiting partial match of the company takes this trade if it fits (as C,
                // completing it, or as B), else goes on waiting; past the window it dies
                let partials = waiting.entry(s.to_vec()).or_default();
                partials.retain_mut(|m| {
                    if !in_window(&m.a) {
                        return false;
                    }
                    match m.b {
                        Some(b) if query.c_fits(m.a.price, b.price, price) => {
                            found(m.a, b, trade, &names);
                            false
                        }
                        None if query.b_fits(m.a.price, price) => {
                            m.b = Some(trade);
                            true
                        }
                        _ => true,
                    }
                });
                partials.push(Partial { a: trade, b: None });
            }
            Strategy::Strict => {
                // the previous event's partial matches take this one or die
                let mut next = Vec::with_capacity(2);
                for (company, m) in previous.drain(..) {
                    if company.as_slice() != s || !in_window(&m.a) {
                        continue;
                    }
                    match m.b {
                        Some(b) if query.c_fits(m.a.price, b.price, price) => {
                            found(m.a, b, trade, &names)
                        }
                        None if query.b_fits(m.a.price, price) => next.push((
                            company,
                            Partial {
                                b: Some(trade),
                                ..m
                            },
                        )),
                        _ => {}
                    }
                }
                next.push((s.to_vec(), Partial { a: trade, b: None }));
                previous = next;
            }
        }
    }
    out.flush().expect("write");
    println!("{{\"events\": {events}, \"matches\": {matches}}}");
}

fn fail(message: &str) -> ! {
    eprintln!("vshape-prototype: {message}");
    std::process::exit(2)
}

/// The lexical form of a literal term `"..."^^<...>` (the rest of the line after it ignored).
fn literal(term: &[u8]) -> &[u8] {
    let end = term[1..]
        .iter()
        .position(|&b| b == b'"')
        .map_or(term.len(), |e| e + 1);
    &term[1..end]
}

/// An exact decimal (`-12.345`) in millionths.
fn parse_decimal(text: &[u8]) -> i64 {
    let (negative, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        _ => (false, text),
    };
    let (mut value, mut scale, mut fraction) = (0i64, SCALE, false);
    for &d in digits {
        if d == b'.' {
            fraction = true;
            continue;
        }
        value = value * 10 + i64::from(d - b'0');
        if fraction {
            scale /= 10;
        }
    }
    let v = value * scale;
    if negative {
        -v
    } else {
        v
    }
}

/// An `xsd:dateTime` in UTC (`2026-01-01T00:00:00.5Z`) as nanoseconds since the epoch.
fn parse_datetime(text: &[u8]) -> i64 {
    let num = |r: std::ops::Range<usize>| -> i64 {
        text[r].iter().fold(0, |n, &d| n * 10 + i64::from(d - b'0'))
    };
    let (y, m, d) = (num(0..4), num(5..7), num(8..10));
    let (hh, mm, ss) = (num(11..13), num(14..16), num(17..19));
    let mut nanos = 0i64;
    if text.get(19) == Some(&b'.') {
        let digits: Vec<u8> = text[20..]
            .iter()
            .copied()
            .take_while(u8::is_ascii_digit)
            .collect();
        let mut scale = 100_000_000i64;
        for dgt in digits.into_iter().take(9) {
            nanos += i64::from(dgt - b'0') * scale;
            scale /= 10;
        }
    }
    // days from the civil date (Howard Hinnant's algorithm)
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    ((days * 86_400 + hh * 3600 + mm * 60 + ss) * 1_000_000_000) + nanos
}
