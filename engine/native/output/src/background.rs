//! A `Formatter` on a thread of its own: the runtime's thread collects each batch of
//! released matches (`Collector`) and sends it here, where it is spelled and written, so a
//! run's writing overlaps its matching instead of following it (issue 12).

use super::collect::Batch;
use super::formatter::Formatter;
use std::io::{self, Write};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};
use std::thread::JoinHandle;

/// Batches sent and not yet written before the sender waits (memory stays bounded when the
/// writing falls behind).
const IN_FLIGHT: usize = 16;

/// Text kept before it is written (it is also written whenever nothing more is waiting).
const CHUNK: usize = 1 << 20;

enum Message {
    Start,
    Rows(Box<Batch>),
    /// What follows the rows: of a run that ended (false) or that an error stopped (true).
    Finish(bool),
}

/// The writing thread and the way to it.
pub struct Background {
    tx: Option<SyncSender<Message>>,
    thread: Option<JoinHandle<io::Result<()>>>,
    /// Batches written, sent back to be filled again (their buffers kept).
    spare: Receiver<Box<Batch>>,
}

impl Background {
    /// Start the thread writing what `formatter` spells to `out`.
    pub fn spawn<W: Write + Send + 'static>(
        mut formatter: Formatter,
        mut out: W,
    ) -> io::Result<Background> {
        let (tx, rx) = mpsc::sync_channel::<Message>(IN_FLIGHT);
        let (spare_tx, spare) = mpsc::channel::<Box<Batch>>();
        let thread = std::thread::Builder::new()
            .name("spaseq-writer".into())
            .spawn(move || -> io::Result<()> {
                let mut buf = String::new();
                loop {
                    let message = match rx.try_recv() {
                        Ok(message) => message,
                        Err(TryRecvError::Disconnected) => break,
                        Err(TryRecvError::Empty) => {
                            // nothing waiting: what is spelled goes out now
                            out.write_all(buf.as_bytes())?;
                            out.flush()?;
                            buf.clear();
                            match rx.recv() {
                                Ok(message) => message,
                                Err(_) => break,
                            }
                        }
                    };
                    match message {
                        Message::Start => formatter.start(&mut buf),
                        Message::Rows(batch) => {
                            formatter.write(&batch, &mut buf);
                            let _ = spare_tx.send(batch);
                        }
                        Message::Finish(false) => formatter.finish(&mut buf),
                        Message::Finish(true) => formatter.stopped(&mut buf),
                    }
                    if buf.len() >= CHUNK {
                        out.write_all(buf.as_bytes())?;
                        buf.clear();
                    }
                }
                out.write_all(buf.as_bytes())?;
                out.flush()
            })?;
        Ok(Background {
            tx: Some(tx),
            thread: Some(thread),
            spare,
        })
    }

    /// An empty batch to fill (one the thread is done with, when there is one).
    pub fn batch(&self) -> Box<Batch> {
        self.spare.try_recv().unwrap_or_default()
    }

    /// Write what precedes the rows.
    pub fn start(&mut self) -> io::Result<()> {
        self.send(Message::Start)
    }

    /// Write `batch`'s rows (after what was sent before); the writing's error if the thread
    /// stopped on one.
    pub fn write(&mut self, batch: Box<Batch>) -> io::Result<()> {
        self.send(Message::Rows(batch))
    }

    /// Write what follows the rows, then wait until everything is written.
    pub fn finish(&mut self) -> io::Result<()> {
        self.send(Message::Finish(false))?;
        self.close()
    }

    /// `finish` for a run an error stopped (`Formatter::stopped`).
    pub fn stopped(&mut self) -> io::Result<()> {
        self.send(Message::Finish(true))?;
        self.close()
    }

    /// Wait until everything sent is written, and stop the thread; its error if it met one
    /// (nothing more can be sent afterwards).
    pub fn close(&mut self) -> io::Result<()> {
        self.tx = None;
        match self.thread.take() {
            None => Ok(()),
            Some(thread) => thread
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the writing thread panicked"))),
        }
    }

    fn send(&mut self, message: Message) -> io::Result<()> {
        let sent = match &self.tx {
            Some(tx) => tx.send(message).is_ok(),
            None => false,
        };
        if sent {
            return Ok(());
        }
        // the thread stopped: on an error of the writing
        self.close()?;
        Err(io::Error::other("the results were already finished"))
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A `Write` whose bytes the test reads afterwards, failing after `limit` bytes.
    #[derive(Clone)]
    struct Shared(Arc<Mutex<Vec<u8>>>, usize);

    impl Write for Shared {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            let mut bytes = self.0.lock().unwrap();
            if bytes.len() + data.len() > self.1 {
                return Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed"));
            }
            bytes.extend_from_slice(data);
            Ok(data.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn json_formatter() -> Formatter {
        Formatter::new(super::super::Format::Json, vec!["x".into()], false)
    }

    #[test]
    fn writes_start_and_finish_in_order() {
        let out = Shared(Arc::default(), usize::MAX);
        let mut bg = Background::spawn(json_formatter(), out.clone()).unwrap();
        bg.start().unwrap();
        let batch = bg.batch();
        bg.write(batch).unwrap();
        bg.finish().unwrap();
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "{\"head\": {\"vars\": [\"x\"]}, \"results\": {\"bindings\": [\n\n]}}\n"
        );
        assert!(bg.start().is_err(), "nothing is sent after the end");
    }

    #[test]
    fn the_writing_error_reaches_the_sender() {
        let out = Shared(Arc::default(), 3);
        let mut bg = Background::spawn(json_formatter(), out).unwrap();
        let mut failed = bg.start().err();
        for _ in 0..1000 {
            if failed.is_some() {
                break;
            }
            failed = bg.write(Box::default()).err();
        }
        let err = failed.or_else(|| bg.finish().err()).expect("an error");
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe);
    }
}
