//! Time ingest phases on a replay file: `cargo run --release --example ingest -- FILE`.
use spaseq_io::dictionary::Dictionary;
use spaseq_io::replay::{self, Format, GENERATED_AT_TIME};
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("a replay file");
    let format = Format::of_path(&path).expect("a .trig or .nq file");
    let t = Instant::now();
    let n = match format {
        Format::NQuads => oxttl::NQuadsParser::new()
            .for_reader(replay::open(&path).unwrap())
            .count(),
        Format::TriG => oxttl::TriGParser::new()
            .for_reader(replay::open(&path).unwrap())
            .count(),
    };
    println!("parse only: {n} quads in {:?}", t.elapsed());
    let t = Instant::now();
    let bytes = std::fs::read(&path).unwrap();
    let n = match format {
        Format::NQuads => oxttl::NQuadsParser::new().for_slice(&bytes).count(),
        Format::TriG => oxttl::TriGParser::new().for_slice(&bytes).count(),
    };
    println!(
        "parse only (whole file as a slice): {n} quads in {:?}",
        t.elapsed()
    );
    // the replay reader's own readings at full speed: oxttl strictly, and by bytes (which
    // gives up, `unverified`, on text it does not read)
    for scanned in [false, true] {
        let t = Instant::now();
        let source = std::io::BufReader::with_capacity(1 << 16, replay::open(&path).unwrap());
        let quads = replay::Quads::new(source, format).without_lines();
        let mut quads = if scanned { quads.scanned() } else { quads };
        let n = quads.by_ref().count();
        let how = if scanned {
            "by bytes"
        } else {
            "by oxttl, strictly"
        };
        let given_up = if quads.unverified() { " (gave up)" } else { "" };
        println!("read {how}: {n} quads{given_up} in {:?}", t.elapsed());
    }
    let t = Instant::now();
    let mut dict = Dictionary::new();
    let events = replay::read_events(
        replay::open(&path).unwrap(),
        format,
        GENERATED_AT_TIME,
        &mut dict,
    )
    .unwrap();
    println!(
        "events: {} ({} terms) in {:?}",
        events.len(),
        dict.len(),
        t.elapsed()
    );
}
