//! The terminal's events, read on a thread of their own in batches: everything that has
//! arrived together is read together.
//!
//! crossterm's default reader on Unix waits for the terminal with an edge-triggered mio
//! poll and reads a kilobyte at a time; it handed out the first key of a longer burst and
//! then waited for the *next* arrival, so the rest of a 2 KB burst (Enter with it) sat in
//! the kernel until another key was pressed (crossterm PR #1057, open). The `use-dev-tty`
//! reader polls level-triggered and reads on until nothing is left, but its zero-timeout
//! poll (the one `EventStream` uses) never looks at keys it has already parsed, so a
//! stream over it would hand out one key per thread wake and lose the burst after an Esc
//! that `key_burst` puts back together. Here a thread blocks in `read` and then takes
//! what arrived with the key (a poll with a short timeout, which does look at parsed keys)
//! into the same batch.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use crossterm::event::Event;
use futures_util::Stream;
use tokio::sync::mpsc;

/// The most events in one batch: a long paste without bracketed paste still gets a frame
/// drawn every so many keys.
const BATCH: usize = 512;
/// How long a key that arrived with the previous one may take to be parsed: what comes
/// later belongs to the next batch.
const ARRIVED: Duration = Duration::from_millis(1);
/// How often the idle reader looks whether the workbench has stopped listening.
const IDLE_CHECK: Duration = Duration::from_millis(100);
/// Batches read ahead of the event loop; a full channel holds the reader (and the
/// terminal's own buffer then holds the typist).
const READ_AHEAD: usize = 4;
/// How often a paused reader looks whether it may read again.
const PAUSED_CHECK: Duration = Duration::from_millis(10);
/// How long pausing waits for the reader to leave the terminal: its idle poll ends
/// within [`IDLE_CHECK`]; a reader held by a full channel reads nothing either.
const PAUSE_WAIT: Duration = Duration::from_secs(1);

/// Whether the reader is to keep off the terminal (another program has it: Ctrl-G's
/// editor), and whether it does.
#[derive(Default)]
struct Pause {
    asked: AtomicBool,
    parked: AtomicBool,
}

type Batch = Vec<io::Result<Event>>;

/// The terminal's events, one at a time, from batches read together.
pub(crate) struct TerminalInput {
    batches: mpsc::Receiver<Batch>,
    /// The rest of the batch being handed out.
    batch: VecDeque<io::Result<Event>>,
    /// Tells the reader to stop (set when this is dropped).
    stop: Arc<AtomicBool>,
    pause: Arc<Pause>,
}

impl TerminalInput {
    /// Starts the reader thread.
    pub(crate) fn spawn() -> io::Result<TerminalInput> {
        let (sender, batches) = mpsc::channel(READ_AHEAD);
        let stop = Arc::new(AtomicBool::new(false));
        let pause = Arc::new(Pause::default());
        let (reader_stop, reader_pause) = (stop.clone(), pause.clone());
        std::thread::Builder::new()
            .name("terminal-input".into())
            .spawn(move || read_batches(&sender, &reader_stop, &reader_pause))?;
        Ok(TerminalInput::from_batches(batches, stop, pause))
    }

    fn from_batches(
        batches: mpsc::Receiver<Batch>,
        stop: Arc<AtomicBool>,
        pause: Arc<Pause>,
    ) -> TerminalInput {
        TerminalInput {
            batches,
            batch: VecDeque::new(),
            stop,
            pause,
        }
    }

    /// Stops reading the terminal until [`Self::resume`]: another program is about to
    /// read it, and every key it is typed is its. Returns once the reader is off it (or,
    /// failing that, after [`PAUSE_WAIT`]); whether it is.
    pub(crate) async fn pause(&self) -> bool {
        self.pause.asked.store(true, Ordering::SeqCst);
        let deadline = tokio::time::Instant::now() + PAUSE_WAIT;
        while !self.pause.parked.load(Ordering::SeqCst) {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(PAUSED_CHECK).await;
        }
        true
    }

    /// Reads the terminal again after [`Self::pause`].
    pub(crate) fn resume(&self) {
        self.pause.asked.store(false, Ordering::SeqCst);
    }

    /// Whether events read with the last one are still to be handed out (a frame waits
    /// for them: one frame for a burst, not one a key).
    pub(crate) fn has_waiting(&self) -> bool {
        !self.batch.is_empty()
    }
}

impl Drop for TerminalInput {
    fn drop(&mut self) {
        // Keys typed after the workbench stopped listening are the shell's.
        self.stop.store(true, Ordering::SeqCst);
    }
}

impl Stream for TerminalInput {
    type Item = io::Result<Event>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(event) = this.batch.pop_front() {
            return Poll::Ready(Some(event));
        }
        match this.batches.poll_recv(cx) {
            Poll::Ready(Some(batch)) => {
                this.batch = batch.into();
                Poll::Ready(this.batch.pop_front())
            }
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The reader thread: waits for an event, takes what arrived with it, sends the batch.
/// Ends when the workbench stops listening or the terminal fails.
fn read_batches(sender: &mpsc::Sender<Batch>, stop: &AtomicBool, pause: &Pause) {
    while !stop.load(Ordering::SeqCst) {
        // Said before `asked` is read (both SeqCst): a pause that finds `parked` set
        // cannot have been missed by this pass, which then never polls.
        pause.parked.store(false, Ordering::SeqCst);
        if pause.asked.load(Ordering::SeqCst) {
            pause.parked.store(true, Ordering::SeqCst);
            std::thread::sleep(PAUSED_CHECK);
            continue;
        }
        match crossterm::event::poll(IDLE_CHECK) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(err) => {
                let _ = sender.blocking_send(vec![Err(err)]);
                return;
            }
        }
        let batch = read_batch();
        let failed = batch.last().is_some_and(|event| event.is_err());
        if sender.blocking_send(batch).is_err() || failed {
            return;
        }
    }
}

/// The event that is ready and those that arrived with it, up to [`BATCH`]; an error
/// ends the batch.
fn read_batch() -> Batch {
    let mut batch = Vec::new();
    loop {
        let event = crossterm::event::read();
        let failed = event.is_err();
        batch.push(event);
        if failed || batch.len() >= BATCH {
            return batch;
        }
        match crossterm::event::poll(ARRIVED) {
            Ok(true) => {}
            Ok(false) => return batch,
            Err(err) => {
                batch.push(Err(err));
                return batch;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use futures_util::{FutureExt, StreamExt};
    use pretty_assertions::assert_eq;

    fn key(c: char) -> io::Result<Event> {
        Ok(Event::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)))
    }

    fn chars(input: &mut TerminalInput) -> Vec<char> {
        let mut seen = Vec::new();
        while let Some(Some(Ok(Event::Key(key)))) = input.next().now_or_never() {
            if let KeyCode::Char(c) = key.code {
                seen.push(c);
            }
        }
        seen
    }

    /// Batches come out one event at a time, in order; while a batch has events left the
    /// input says so; a batch not yet sent is not waited for; the reader's end ends it.
    #[test]
    fn batches_come_out_in_order_and_say_when_more_wait() {
        let (sender, batches) = mpsc::channel(READ_AHEAD);
        let stop = Arc::new(AtomicBool::new(false));
        let mut input = TerminalInput::from_batches(batches, stop.clone(), Arc::default());
        assert!(input.next().now_or_never().is_none(), "nothing read yet");
        sender.try_send(vec![key('a'), key('b')]).unwrap();
        sender.try_send(vec![key('c')]).unwrap();
        let first = input.next().now_or_never().flatten().unwrap().unwrap();
        assert_eq!(first, key('a').unwrap());
        assert!(input.has_waiting(), "b was read with a");
        assert_eq!(chars(&mut input), vec!['b', 'c']);
        assert!(!input.has_waiting());
        drop(sender);
        assert!(
            matches!(input.next().now_or_never(), Some(None)),
            "the reader ended"
        );
        drop(input);
        assert!(stop.load(Ordering::SeqCst), "the reader is told to stop");
    }
}
