//! The event stream: the sink a reporter implements, run on its own thread, and the
//! senders the core and each task send on without waiting.

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot};

use super::{Event, Level, LogLine};
use crate::record::StepRecord;
use crate::task::TaskId;
use crate::units::Timestamp;

/// Receives every event of a run, in order (see the lifecycle above). The reporters
/// implement it; the core hands it events through [`spawn_sink`] and never waits for it.
pub(crate) trait EventSink: Send + 'static {
    /// Handles one event.
    fn handle(&mut self, event: &Event);
}

/// A sink running on its own thread.
pub(crate) struct SinkThread<S>(std::thread::JoinHandle<S>);

impl<S> SinkThread<S> {
    /// Waits until every sender is gone and the sink has handled the last event; gives
    /// the sink back (`None` if it panicked).
    pub(crate) fn join(self) -> Option<S> {
        self.0.join().ok()
    }
}

/// How long the sink's thread lets events gather once it has handled all there were:
/// in a busy run they come thousands a second, a few for each task, and waking the
/// thread for each costs more than handling it (and the writers it feeds then wake for
/// a batch each, not a file each). It delays what the sink does by about this much.
const GATHER: std::time::Duration = std::time::Duration::from_millis(1);

/// Runs `sink` on its own thread, fed by the returned sender (and its clones).
pub(crate) fn spawn_sink<S: EventSink>(mut sink: S) -> (EventSender, SinkThread<S>) {
    let (tx, mut rx) = channel();
    let handle = std::thread::Builder::new()
        .name("reporter".into())
        .spawn(move || {
            crate::priority::lower_this_thread();
            while let Some(event) = rx.blocking_recv() {
                sink.handle(&event);
                // (After the run's last event, nothing more is to gather.)
                if rx.0.is_empty() && !matches!(event, Event::RunFinished(_)) {
                    std::thread::sleep(GATHER);
                }
            }
            sink
        })
        .expect("spawning the reporter thread");
    (tx, SinkThread(handle))
}

/// What travels on the stream: an event, or a request to say when everything sent
/// before it has been handled.
#[derive(Debug)]
enum Message {
    Event(Event),
    Barrier(oneshot::Sender<()>),
}

/// The sending end of the event stream. Cheap to clone; sending never blocks.
#[derive(Clone, Debug)]
pub(crate) struct EventSender(mpsc::UnboundedSender<Message>);

/// The receiving end, owned by the reporter.
#[derive(Debug)]
pub(crate) struct EventReceiver(mpsc::UnboundedReceiver<Message>);

/// A new event stream.
pub(crate) fn channel() -> (EventSender, EventReceiver) {
    let (tx, rx) = mpsc::unbounded_channel();
    (EventSender(tx), EventReceiver(rx))
}

impl EventReceiver {
    /// The next event, waiting for it; `None` once every sender is gone. A barrier is
    /// answered here: every event before it has been handled by then.
    pub(crate) fn blocking_recv(&mut self) -> Option<Event> {
        loop {
            match self.0.blocking_recv()? {
                Message::Event(event) => return Some(event),
                Message::Barrier(ack) => {
                    let _ = ack.send(());
                }
            }
        }
    }

    /// The next event if one is waiting.
    #[cfg(test)]
    pub(crate) fn try_recv(&mut self) -> Result<Event, mpsc::error::TryRecvError> {
        loop {
            match self.0.try_recv()? {
                Message::Event(event) => return Ok(event),
                Message::Barrier(ack) => {
                    let _ = ack.send(());
                }
            }
        }
    }
}

impl EventSender {
    /// Sends an event; if the reporter is gone there is nobody to tell, so it is dropped.
    pub(crate) fn send(&self, event: Event) {
        let _ = self.0.send(Message::Event(event));
    }

    /// Returns once the reporter has handled every event sent before this call (at
    /// once if the reporter is gone).
    pub(crate) async fn handled(&self) {
        let (ack, done) = oneshot::channel();
        if self.0.send(Message::Barrier(ack)).is_ok() {
            let _ = done.await;
        }
    }

    /// A handle for one task's log lines and steps.
    pub(crate) fn for_task(&self, id: TaskId) -> TaskEvents {
        TaskEvents {
            id,
            tx: self.clone(),
        }
    }
}

/// Sends one task's log lines and steps.
#[derive(Clone, Debug)]
pub(crate) struct TaskEvents {
    id: TaskId,
    tx: EventSender,
}

impl TaskEvents {
    /// A log line.
    pub(crate) fn log(&self, level: Level, message: impl Into<String>) {
        self.tx.send(Event::TaskLog {
            id: self.id.clone(),
            line: LogLine {
                at: Timestamp::now(),
                level,
                message: message.into(),
            },
        });
    }

    /// An info line.
    pub(crate) fn info(&self, message: impl Into<String>) {
        self.log(Level::Info, message);
    }

    /// A warning line.
    pub(crate) fn warn(&self, message: impl Into<String>) {
        self.log(Level::Warn, message);
    }

    /// The attempt runs on `device`.
    pub(crate) fn on_device(&self, device: &str) {
        self.tx.send(Event::TaskOnDevice {
            id: self.id.clone(),
            device: device.to_string(),
        });
    }

    /// A finished step.
    pub(crate) fn step(&self, step: StepRecord) {
        self.tx.send(Event::StepFinished {
            id: self.id.clone(),
            step: Arc::new(step),
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A slow reporter that counts what it handled.
    struct Slow(Arc<AtomicUsize>);

    impl EventSink for Slow {
        fn handle(&mut self, _event: &Event) {
            std::thread::sleep(std::time::Duration::from_millis(50));
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[tokio::test]
    async fn handled_waits_for_everything_sent_before() {
        let count = Arc::new(AtomicUsize::new(0));
        let (events, sink) = spawn_sink(Slow(Arc::clone(&count)));
        for _ in 0..3 {
            events.send(Event::Stopping {
                reason: "r".into(),
                grace_s: None,
            });
        }
        events.handled().await;
        assert_eq!(count.load(Ordering::SeqCst), 3);
        drop(events);
        assert!(sink.join().is_some());
    }
}
