//! External merge sort in bounded memory: records are buffered up to a budget, each full
//! buffer is sorted and written as a run to an unlinked temporary file, and the runs are
//! merged lazily by a heap. Too many runs are merged into one first (open files stay few).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Runs merged into one when there are this many, so a sort holds few files open.
const MAX_RUNS: usize = 64;

/// A record that can be spilled: ordered, written and read back compactly.
pub trait Record: Ord + Sized {
    fn write(&self, out: &mut impl Write) -> io::Result<()>;
    /// The next record, or None at the end of the run.
    fn read(input: &mut impl BufRead) -> io::Result<Option<Self>>;
}

impl Record for u64 {
    fn write(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.to_le_bytes())
    }

    fn read(input: &mut impl BufRead) -> io::Result<Option<Self>> {
        if input.fill_buf()?.is_empty() {
            return Ok(None);
        }
        let mut bytes = [0; 8];
        input.read_exact(&mut bytes)?;
        Ok(Some(u64::from_le_bytes(bytes)))
    }
}

/// A new temporary file in `dir`, already unlinked: it goes when it is closed.
fn temp_file(dir: &Path) -> io::Result<File> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("spaseq-spill-{}-{n}", std::process::id()));
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => {
                let _ = std::fs::remove_file(&path);
                return Ok(file);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Sorts records pushed in any order, holding at most `budget` of them in memory.
pub struct Sorter<R> {
    dir: PathBuf,
    budget: usize,
    buffer: Vec<R>,
    runs: Vec<File>,
    /// Runs written so far (merges of runs included).
    pub spilled: usize,
}

impl<R: Record> Sorter<R> {
    pub fn new(dir: &Path, budget: usize) -> Self {
        Sorter {
            dir: dir.to_owned(),
            budget: budget.max(1),
            buffer: Vec::new(),
            runs: Vec::new(),
            spilled: 0,
        }
    }

    pub fn push(&mut self, record: R) -> io::Result<()> {
        self.buffer.push(record);
        if self.buffer.len() >= self.budget {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> io::Result<()> {
        self.buffer.sort_unstable();
        let records = std::mem::take(&mut self.buffer);
        self.write_run(records.into_iter().map(Ok))?;
        if self.runs.len() >= MAX_RUNS {
            let merged = Merge::new(std::mem::take(&mut self.runs))?;
            self.write_run(merged)?;
        }
        Ok(())
    }

    fn write_run(&mut self, records: impl Iterator<Item = io::Result<R>>) -> io::Result<()> {
        let mut file = BufWriter::new(temp_file(&self.dir)?);
        for record in records {
            record?.write(&mut file)?;
        }
        let mut file = file.into_inner().map_err(|e| e.into_error())?;
        file.seek(SeekFrom::Start(0))?;
        self.runs.push(file);
        self.spilled += 1;
        Ok(())
    }

    /// Every record pushed, in order: from memory if nothing was spilled, else merged runs.
    pub fn finish(mut self) -> io::Result<Sorted<R>> {
        if self.runs.is_empty() {
            self.buffer.sort_unstable();
            return Ok(Sorted::Memory(self.buffer.into_iter()));
        }
        if !self.buffer.is_empty() {
            self.spill()?;
        }
        Ok(Sorted::Runs(Merge::new(self.runs)?))
    }
}

/// Sorted records: still in memory, or merged from runs on disk.
pub enum Sorted<R> {
    Memory(std::vec::IntoIter<R>),
    Runs(Merge<R>),
}

impl<R: Record> Iterator for Sorted<R> {
    type Item = io::Result<R>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Sorted::Memory(records) => records.next().map(Ok),
            Sorted::Runs(merge) => merge.next(),
        }
    }
}

/// The k-way merge of sorted runs: the smallest head first (ties: the earlier run).
pub struct Merge<R> {
    runs: Vec<BufReader<File>>,
    heap: BinaryHeap<Reverse<(R, usize)>>,
}

impl<R: Record> Merge<R> {
    fn new(files: Vec<File>) -> io::Result<Self> {
        let mut merge = Merge {
            runs: files.into_iter().map(BufReader::new).collect(),
            heap: BinaryHeap::new(),
        };
        for i in 0..merge.runs.len() {
            merge.refill(i)?;
        }
        Ok(merge)
    }

    fn refill(&mut self, run: usize) -> io::Result<()> {
        if let Some(record) = R::read(&mut self.runs[run])? {
            self.heap.push(Reverse((record, run)));
        }
        Ok(())
    }
}

impl<R: Record> Iterator for Merge<R> {
    type Item = io::Result<R>;

    fn next(&mut self) -> Option<Self::Item> {
        let Reverse((record, run)) = self.heap.pop()?;
        Some(self.refill(run).map(|()| record))
    }
}
