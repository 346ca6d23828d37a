//! Values dropped on a thread of their own: the replay reader's threads allocate each
//! event's terms, and the engine's thread, where interning finds most of them known already,
//! spent about a thousand instructions per event freeing them (issue 12). A `Disposal` keeps
//! what it is given and hands it over in batches; the thread starts with the first batch.

use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;

/// Values kept before they are handed over together.
const BATCH: usize = 4096;

/// Where values go to be dropped.
pub struct Disposal<T: Send + 'static> {
    kept: Vec<T>,
    /// The dropping thread, once started (None: not yet, or it could not be: then dropped
    /// here).
    thread: Option<(Sender<Vec<T>>, JoinHandle<()>)>,
}

impl<T: Send + 'static> Default for Disposal<T> {
    fn default() -> Self {
        Disposal {
            kept: Vec::new(),
            thread: None,
        }
    }
}

impl<T: Send + 'static> Disposal<T> {
    /// Drop `value`, later and elsewhere.
    pub fn put(&mut self, value: T) {
        self.kept.push(value);
        if self.kept.len() >= BATCH {
            self.hand_over();
        }
    }

    fn hand_over(&mut self) {
        let batch = std::mem::replace(&mut self.kept, Vec::with_capacity(BATCH));
        if self.thread.is_none() {
            let (tx, rx) = mpsc::channel::<Vec<T>>();
            let spawned = std::thread::Builder::new()
                .name("spaseq-disposal".into())
                .spawn(move || rx.into_iter().for_each(drop));
            match spawned {
                Ok(handle) => self.thread = Some((tx, handle)),
                Err(_) => return, // no thread: `batch` is dropped here
            }
        }
        if let Some((tx, _)) = &self.thread {
            let _ = tx.send(batch); // the thread only stops when `self` is dropped
        }
    }
}

impl<T: Send + 'static> Drop for Disposal<T> {
    fn drop(&mut self) {
        if let Some((tx, handle)) = self.thread.take() {
            drop(tx);
            let _ = handle.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Counts its drops, and on which thread they happened.
    struct Tracked(Arc<AtomicUsize>, Arc<AtomicUsize>, std::thread::ThreadId);

    impl Drop for Tracked {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
            if std::thread::current().id() != self.2 {
                self.1.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    #[test]
    fn everything_put_is_dropped_and_full_batches_elsewhere() {
        let (dropped, elsewhere) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let here = std::thread::current().id();
        let mut disposal = Disposal::default();
        for _ in 0..2 * BATCH + 10 {
            disposal.put(Tracked(dropped.clone(), elsewhere.clone(), here));
        }
        drop(disposal); // waits for the thread
        assert_eq!(dropped.load(Ordering::SeqCst), 2 * BATCH + 10);
        assert_eq!(elsewhere.load(Ordering::SeqCst), 2 * BATCH);
    }
}
