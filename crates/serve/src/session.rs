//! One live session: a task owns the agent's handle, numbers its events, keeps the latest
//! in a bounded ring for clients that reconnect, and fans them out to the SSE clients
//! through a broadcast channel. Nothing here waits on a client: a client that falls
//! behind loses its stream (it reconnects with `Last-Event-ID`), never the agent its pace.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use miniagent_api::Handle;
use miniagent_protocol::{ApprovalMode, CallId, Decision, Event, Op};
use serde::Deserialize;
use tokio::sync::{broadcast, mpsc, watch};

/// The most bytes of event JSON one session keeps for reconnecting clients, whatever
/// `serve.events_kept` says: a few large tool outputs must not hold megabytes per session.
pub const RING_BYTES: usize = 2 * 1024 * 1024;

/// Events a subscriber may fall behind by before it is dropped.
const FEED_CAPACITY: usize = 1024;

/// Why the agent is told a call was refused when nobody can answer it.
pub const NO_CLIENT: &str = "no client is connected to approve this call";

/// One event as clients receive it: its index in the session, its type and its JSON (the
/// same line `exec --json` prints).
#[derive(Debug)]
pub struct Indexed {
    pub index: u64,
    pub kind: String,
    pub json: String,
    /// The closing event of a turn a prompt started (the prompt's stream ends after it).
    pub closes_turn: bool,
}

/// Where the session's turn stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnState {
    Idle,
    /// A prompt was sent; its `TurnStarted` has not come yet.
    Accepted,
    Running,
}

/// What a session is, as lists and answers show it.
#[derive(Clone, Debug)]
pub struct SessionFacts {
    pub id: String,
    pub model: String,
    pub provider: String,
    pub workspace: String,
    pub approval: ApprovalMode,
    pub tools: Vec<String>,
}

struct Inner {
    ring: VecDeque<Arc<Indexed>>,
    ring_bytes: usize,
    next: u64,
    turn: TurnState,
    /// Approval requests a client may still answer, oldest first.
    waiting: Vec<CallId>,
    subscribers: usize,
    ended: bool,
}

/// A live session, shared by the handlers and its event task.
pub struct Live {
    pub facts: SessionFacts,
    ops: mpsc::UnboundedSender<Op>,
    feed: broadcast::Sender<Arc<Indexed>>,
    inner: Mutex<Inner>,
    events_kept: usize,
    done: watch::Receiver<bool>,
}

/// Why a prompt was not sent.
#[derive(Debug, PartialEq, Eq)]
pub enum PromptRefused {
    TurnRunning,
    Ended,
}

/// Why events cannot be replayed from where the client asked.
#[derive(Debug, PartialEq, Eq)]
pub struct TooOld {
    pub first_available: u64,
}

#[derive(Deserialize)]
struct Tag<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
}

impl Live {
    /// Takes over `handle`: the events it gave before (`earlier`, read while the session
    /// started) are recorded first, then a task reads the rest. `on_end` runs when the
    /// agent has stopped.
    pub fn start(
        facts: SessionFacts,
        handle: Handle,
        earlier: Vec<Event>,
        events_kept: usize,
        on_end: impl FnOnce(&Arc<Live>) + Send + 'static,
    ) -> Arc<Self> {
        let Handle { ops, mut events } = handle;
        let (feed, _) = broadcast::channel(FEED_CAPACITY.min(events_kept.max(16)));
        let (finished, done) = watch::channel(false);
        let live = Arc::new(Self {
            facts,
            ops,
            feed,
            inner: Mutex::new(Inner {
                ring: VecDeque::new(),
                ring_bytes: 0,
                next: 1,
                turn: TurnState::Idle,
                waiting: Vec::new(),
                subscribers: 0,
                ended: false,
            }),
            events_kept: events_kept.max(1),
            done,
        });
        for event in earlier {
            live.record(&event);
        }
        let pump = Arc::clone(&live);
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                pump.record(&event);
            }
            pump.lock().ended = true;
            // The feed's sender lives as long as the session is shared: open streams learn
            // of the end here.
            let _ = finished.send(true);
            on_end(&pump);
        });
        live
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A handler that panicked holding the lock left consistent data (every change is
        // one step), so its poison is ignored.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Numbers `event`, keeps it, sends it to the subscribers, and answers an approval
    /// request nobody is connected to answer.
    fn record(&self, event: &Event) {
        // The history a resume restores is in the session's log already (exec leaves it
        // out too); it would be the ring's whole budget at once.
        if matches!(event, Event::HistoryRestored { .. }) {
            return;
        }
        let Ok(json) = serde_json::to_string(event) else {
            return;
        };
        let json = miniagent_text::escape_json_controls(json);
        let kind = serde_json::from_str::<Tag<'_>>(&json)
            .map(|tag| tag.kind.into_owned())
            .unwrap_or_default();
        let mut inner = self.lock();
        let index = inner.next;
        inner.next += 1;
        let mut closes_turn = false;
        match event {
            Event::TurnStarted { .. } if inner.turn == TurnState::Accepted => {
                inner.turn = TurnState::Running;
            }
            Event::TurnComplete { .. }
            | Event::TurnAborted { .. }
            | Event::StepLimitReached { .. }
            | Event::Error { .. }
                if inner.turn == TurnState::Running =>
            {
                inner.turn = TurnState::Idle;
                inner.waiting.clear();
                closes_turn = true;
            }
            _ => {}
        }
        let asked = match event {
            Event::SubAgent { event, .. } => event.as_ref(),
            event => event,
        };
        match asked {
            Event::ApprovalRequested { id, .. } if inner.subscribers == 0 => {
                self.refuse(id);
            }
            Event::ApprovalRequested { id, .. } => inner.waiting.push(id.clone()),
            Event::ToolCallStarted { id, .. } | Event::ToolCallFinished { id, .. } => {
                inner.waiting.retain(|waiting| waiting != id);
            }
            _ => {}
        }
        let indexed = Arc::new(Indexed {
            index,
            kind,
            json,
            closes_turn,
        });
        inner.ring_bytes += indexed.json.len();
        inner.ring.push_back(Arc::clone(&indexed));
        while inner.ring.len() > 1 && (inner.ring.len() > self.events_kept || inner.ring_bytes > RING_BYTES) {
            if let Some(old) = inner.ring.pop_front() {
                inner.ring_bytes -= old.json.len();
            }
        }
        // Under the lock, so a client subscribing now sees each event once: in the ring
        // copy it takes, or from the feed.
        let _ = self.feed.send(indexed);
    }

    fn refuse(&self, id: &CallId) {
        let _ = self.ops.send(Op::Approval {
            id: id.clone(),
            decision: Decision::Refuse {
                reason: NO_CLIENT.to_string(),
            },
        });
    }

    /// Where the turn stands, the last event's index, and whether calls wait.
    pub fn state(&self) -> (TurnState, u64, usize) {
        let inner = self.lock();
        (inner.turn, inner.next - 1, inner.waiting.len())
    }

    /// Subscribes, then sends `text` as the next turn: the subscription sees every event
    /// of that turn. Refused while a turn runs.
    pub fn prompt(self: &Arc<Self>, text: String) -> Result<Subscription, PromptRefused> {
        let mut inner = self.lock();
        if inner.ended {
            return Err(PromptRefused::Ended);
        }
        if inner.turn != TurnState::Idle {
            return Err(PromptRefused::TurnRunning);
        }
        if self.ops.send(Op::UserInput { text }).is_err() {
            return Err(PromptRefused::Ended);
        }
        inner.turn = TurnState::Accepted;
        Ok(self.subscribe_locked(&mut inner, VecDeque::new()))
    }

    /// Subscribes with the kept events after index `since` first; too old when some
    /// events after it are no longer kept.
    pub fn subscribe(self: &Arc<Self>, since: u64) -> Result<Subscription, TooOld> {
        let mut inner = self.lock();
        let first_available = inner.ring.front().map_or(inner.next, |first| first.index);
        if since.saturating_add(1) < first_available {
            return Err(TooOld { first_available });
        }
        let backlog = inner
            .ring
            .iter()
            .filter(|event| event.index > since)
            .cloned()
            .collect();
        Ok(self.subscribe_locked(&mut inner, backlog))
    }

    fn subscribe_locked(
        self: &Arc<Self>,
        inner: &mut Inner,
        backlog: VecDeque<Arc<Indexed>>,
    ) -> Subscription {
        inner.subscribers += 1;
        Subscription {
            live: Arc::clone(self),
            backlog,
            feed: self.feed.subscribe(),
            ended: inner.ended,
            done: self.done.clone(),
        }
    }

    fn unsubscribe(&self) {
        let mut inner = self.lock();
        inner.subscribers = inner.subscribers.saturating_sub(1);
        if inner.subscribers == 0 {
            // Calls waiting for an answer get one: nobody is left to give it.
            for id in std::mem::take(&mut inner.waiting) {
                self.refuse(&id);
            }
        }
    }

    /// Answers approval request `id`; false when it is not waiting.
    pub fn answer(&self, id: &str, decision: Decision) -> bool {
        let mut inner = self.lock();
        let Some(at) = inner.waiting.iter().position(|waiting| waiting == id) else {
            return false;
        };
        let id = inner.waiting.remove(at);
        self.ops.send(Op::Approval { id, decision }).is_ok()
    }

    /// Sends `op` to the agent; false when it has stopped.
    pub fn send(&self, op: Op) -> bool {
        self.ops.send(op).is_ok()
    }

    /// Waits until the agent has stopped.
    pub async fn finished(&self) {
        let mut done = self.done.clone();
        let _ = done.wait_for(|done| *done).await;
    }
}

/// A client's stream of a session's events: the kept ones it asked for, then the live
/// ones. Dropping it is the client leaving.
pub struct Subscription {
    live: Arc<Live>,
    backlog: VecDeque<Arc<Indexed>>,
    feed: broadcast::Receiver<Arc<Indexed>>,
    ended: bool,
    done: watch::Receiver<bool>,
}

impl Subscription {
    /// The next event; `None` when the session ended or this client fell too far behind
    /// (it reconnects from the last index it got).
    pub async fn next(&mut self) -> Option<Arc<Indexed>> {
        if let Some(event) = self.backlog.pop_front() {
            return Some(event);
        }
        if self.ended {
            return self.feed.try_recv().ok();
        }
        tokio::select! {
            biased;
            event = self.feed.recv() => event.ok(),
            _ = self.done.wait_for(|done| *done) => {
                self.ended = true;
                self.feed.try_recv().ok()
            }
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.live.unsubscribe();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session over channels the test holds: what the face sends the agent, and the
    /// agent's side of the events.
    fn session(
        events_kept: usize,
    ) -> (
        Arc<Live>,
        mpsc::UnboundedReceiver<Op>,
        mpsc::UnboundedSender<Event>,
    ) {
        let (ops, sent) = mpsc::unbounded_channel();
        let (agent, events) = mpsc::unbounded_channel();
        let facts = SessionFacts {
            id: "s".into(),
            model: "m".into(),
            provider: "anthropic".into(),
            workspace: "/w".into(),
            approval: ApprovalMode::Ask,
            tools: vec![],
        };
        let live = Live::start(facts, Handle { ops, events }, vec![], events_kept, |_| {});
        (live, sent, agent)
    }

    fn notice(n: usize) -> Event {
        Event::Notice {
            message: format!("notice {n}"),
        }
    }

    async fn settle(live: &Live, last: u64) {
        while live.state().1 < last {
            tokio::task::yield_now().await;
        }
    }

    /// The ring keeps the newest `events_kept`; a client asking from before them is told
    /// the first it can have, one asking from within gets exactly the rest, then live ones.
    #[tokio::test]
    async fn the_ring_keeps_the_newest_and_says_what_is_gone() {
        let (live, _sent, agent) = session(3);
        for n in 1..=5 {
            agent.send(notice(n)).unwrap();
        }
        settle(&live, 5).await;
        assert_eq!(live.subscribe(1).err(), Some(TooOld { first_available: 3 }));
        assert_eq!(live.subscribe(0).err(), Some(TooOld { first_available: 3 }));
        let mut from_two = live.subscribe(2).unwrap();
        agent.send(notice(6)).unwrap();
        let mut got = Vec::new();
        for _ in 0..4 {
            let event = from_two.next().await.unwrap();
            got.push((event.index, event.kind.clone(), event.json.clone()));
        }
        let expected: Vec<_> = (3..=6)
            .map(|n| {
                let json = format!(r#"{{"type":"notice","message":"notice {n}"}}"#);
                (n as u64, "notice".to_string(), json)
            })
            .collect();
        assert_eq!(got, expected);
        // A client that has everything gets only what comes next.
        assert!(live.subscribe(6).is_ok());
    }

    /// The byte cap holds whatever `events_kept` says: big events push out old ones.
    #[tokio::test]
    async fn the_ring_is_capped_in_bytes() {
        let (live, _sent, agent) = session(4096);
        let big = "x".repeat(RING_BYTES / 4);
        for _ in 0..8 {
            agent.send(Event::Notice { message: big.clone() }).unwrap();
        }
        settle(&live, 8).await;
        let inner = live.lock();
        assert!(inner.ring_bytes <= RING_BYTES, "{}", inner.ring_bytes);
        assert_eq!(inner.ring.len(), 3);
        assert_eq!(inner.ring.front().map(|event| event.index), Some(6));
    }

    /// An approval request with nobody subscribed is refused at once; one that waits is
    /// refused when the last subscriber leaves; a subscriber's answer goes through.
    #[tokio::test]
    async fn approvals_are_refused_without_a_client() {
        let (live, mut sent, agent) = session(64);
        let asked = |id: &str| Event::ApprovalRequested {
            id: id.to_string(),
            name: "bash".into(),
            preview: "ls".into(),
            request: None,
            notes: vec![],
            session_rule: None,
        };
        let refused = |id: &str| Op::Approval {
            id: id.to_string(),
            decision: Decision::Refuse {
                reason: NO_CLIENT.to_string(),
            },
        };
        agent.send(asked("c1")).unwrap();
        assert_eq!(sent.recv().await, Some(refused("c1")));
        let first = live.subscribe(1).unwrap();
        let second = live.subscribe(1).unwrap();
        agent.send(asked("c2")).unwrap();
        agent.send(asked("c3")).unwrap();
        settle(&live, 3).await;
        assert!(live.answer("c2", Decision::Approve));
        assert_eq!(
            sent.recv().await,
            Some(Op::Approval {
                id: "c2".into(),
                decision: Decision::Approve
            })
        );
        assert!(!live.answer("c2", Decision::Approve), "answered once");
        drop(first);
        assert!(sent.try_recv().is_err(), "a client is still there");
        drop(second);
        assert_eq!(sent.recv().await, Some(refused("c3")));
        assert!(!live.answer("c3", Decision::Approve));
    }

    /// A second prompt while a turn runs is refused; the turn's closing event frees the
    /// session, and the prompt's stream ends with it.
    #[tokio::test]
    async fn one_turn_at_a_time() {
        let (live, mut sent, agent) = session(64);
        let mut stream = live.prompt("one".into()).unwrap();
        assert_eq!(sent.recv().await, Some(Op::UserInput { text: "one".into() }));
        assert_eq!(live.prompt("two".into()).err(), Some(PromptRefused::TurnRunning));
        // A closing event before this turn started (a resumed log's) is not its end.
        agent.send(Event::TurnAborted { reason: "old".into() }).unwrap();
        agent.send(Event::TurnStarted { text: "one".into() }).unwrap();
        agent.send(Event::TurnComplete { text: "done".into() }).unwrap();
        let kinds: Vec<(String, bool)> = [
            stream.next().await.unwrap(),
            stream.next().await.unwrap(),
            stream.next().await.unwrap(),
        ]
        .iter()
        .map(|event| (event.kind.clone(), event.closes_turn))
        .collect();
        assert_eq!(
            kinds,
            vec![
                ("turn_aborted".to_string(), false),
                ("turn_started".to_string(), false),
                ("turn_complete".to_string(), true)
            ]
        );
        assert_eq!(live.state().0, TurnState::Idle);
        assert!(live.prompt("two".into()).is_ok());
        // The agent stopping ends every stream.
        drop(agent);
        live.finished().await;
        let mut late = live.subscribe(0).unwrap();
        for _ in 0..3 {
            assert!(late.next().await.is_some());
        }
        assert!(late.next().await.is_none());
        assert_eq!(live.prompt("three".into()).err(), Some(PromptRefused::Ended));
    }

    /// A client that stops reading never holds the agent back: once it is more than the
    /// feed's capacity behind, its stream ends, and it reconnects from the last index it
    /// got without losing any event that is still kept.
    #[tokio::test]
    async fn a_client_that_falls_behind_is_dropped_and_reconnects() {
        let (live, _sent, agent) = session(256);
        let mut slow = live.subscribe(0).unwrap();
        for n in 1..=200 {
            agent.send(notice(n)).unwrap();
        }
        settle(&live, 200).await;
        // The feed holds 256 events at most (events_kept), so 200 fit: make it overflow.
        for n in 201..=600 {
            agent.send(notice(n)).unwrap();
        }
        settle(&live, 600).await;
        assert!(slow.next().await.is_none(), "the lagging client's stream ends");
        drop(slow);
        let mut again = live.subscribe(400).unwrap();
        let first = again.next().await.unwrap();
        assert_eq!(first.index, 401);
        assert_eq!(live.subscribe(300).err(), Some(TooOld { first_available: 345 }));
    }
}
