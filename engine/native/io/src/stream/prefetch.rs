//! A stream of events read ahead on a thread of its own: the reader thread takes items from
//! the source and sends them in batches through a bounded channel, so that reading (parsing
//! the second pass, merging) runs on another core while the caller processes the items
//! already read. The items, their order and the error after them are the source's; memory
//! grows by at most `depth + 2` batches.

use super::{StreamError, StreamEvent};
use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::JoinHandle;

/// What a source yields: an item, an error after which it yields nothing more, and the
/// error standing for a reader that could not start or stopped.
pub trait Fallible: Send + 'static {
    fn is_error(&self) -> bool;
    fn stopped(message: String) -> Self;
}

impl Fallible for Result<StreamEvent, StreamError> {
    fn is_error(&self) -> bool {
        self.is_err()
    }

    fn stopped(message: String) -> Self {
        Err(StreamError {
            path: None,
            error: crate::replay::ReplayError {
                line: None,
                column: None,
                message,
            },
        })
    }
}

impl<T: Send + 'static> Fallible for std::io::Result<T> {
    fn is_error(&self) -> bool {
        self.is_err()
    }

    fn stopped(message: String) -> Self {
        Err(std::io::Error::other(message))
    }
}

/// Events per batch sent by the reader thread, by default.
pub const BATCH: usize = 256;
/// Batches the reader thread may be ahead by, by default.
pub const DEPTH: usize = 8;

enum Message<Item> {
    Items(Vec<Item>),
    End,
}

/// The source's items in the source's order, read on a thread.
pub struct Prefetched<Item: Fallible = Result<StreamEvent, StreamError>> {
    receiver: Receiver<Message<Item>>,
    batch: std::vec::IntoIter<Item>,
    reader: Option<JoinHandle<()>>,
    ended: bool,
}

impl<Item: Fallible> Prefetched<Item> {
    /// Start reading `source` on a new thread, `batch` items at a time, at most `depth`
    /// batches ahead of the caller.
    pub fn spawn<S>(source: S, batch: usize, depth: usize) -> Self
    where
        S: Iterator<Item = Item> + Send + 'static,
    {
        let (sender, receiver) = sync_channel(depth.max(1));
        let batch = batch.max(1);
        let reader = std::thread::Builder::new()
            .name("spaseq-replay".to_owned())
            .spawn(move || {
                let mut source = source;
                loop {
                    let mut items = Vec::with_capacity(batch);
                    let mut last = false;
                    while items.len() < batch {
                        match source.next() {
                            Some(item) => {
                                // after an error the source has nothing more
                                last = item.is_error();
                                items.push(item);
                                if last {
                                    break;
                                }
                            }
                            None => {
                                last = true;
                                break;
                            }
                        }
                    }
                    if !items.is_empty() && sender.send(Message::Items(items)).is_err() {
                        return; // the caller went away
                    }
                    if last {
                        let _ = sender.send(Message::End);
                        return;
                    }
                }
            });
        match reader {
            Ok(handle) => Prefetched {
                receiver,
                batch: Vec::new().into_iter(),
                reader: Some(handle),
                ended: false,
            },
            Err(e) => Prefetched {
                receiver,
                batch: vec![Item::stopped(format!(
                    "cannot start the replay reader: {e}"
                ))]
                .into_iter(),
                reader: None,
                ended: true,
            },
        }
    }
}

impl<Item: Fallible> Iterator for Prefetched<Item> {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        loop {
            if let Some(item) = self.batch.next() {
                return Some(item);
            }
            if self.ended {
                return None;
            }
            match self.receiver.recv() {
                Ok(Message::Items(items)) => self.batch = items.into_iter(),
                Ok(Message::End) => self.ended = true,
                Err(_) => {
                    // the reader thread stopped without saying it ended: it panicked
                    self.ended = true;
                    let reason = self
                        .reader
                        .take()
                        .and_then(|h| h.join().err())
                        .and_then(|p| {
                            p.downcast_ref::<String>()
                                .cloned()
                                .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        })
                        .unwrap_or_else(|| "unknown reason".to_owned());
                    return Some(Item::stopped(format!(
                        "the replay reader stopped: {reason}"
                    )));
                }
            }
        }
    }
}

impl<Item: Fallible> Drop for Prefetched<Item> {
    fn drop(&mut self) {
        // unblock the reader (its sends fail once the receiver is gone), then wait for it,
        // so that its files are closed when the stream is
        let (_, receiver) = sync_channel(0);
        drop(std::mem::replace(&mut self.receiver, receiver));
        if let Some(handle) = self.reader.take() {
            let _ = handle.join();
        }
    }
}
