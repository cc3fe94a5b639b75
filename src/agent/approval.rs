//! Which tool calls run, which ask a person, and which are refused; and the pending
//! approvals awaiting an answer.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use crate::config::ApprovalMode;
use crate::protocol::{CallId, Decision};
use crate::tools::ToolEffect;

/// What the policy says about one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Run,
    Ask,
    Refuse(String),
}

/// The approval mode plus the tools a person allowed for the rest of the session.
#[derive(Clone, Debug)]
pub struct ApprovalPolicy {
    mode: ApprovalMode,
    allowed_for_session: HashSet<String>,
}

impl ApprovalPolicy {
    pub fn new(mode: ApprovalMode) -> Self {
        Self {
            mode,
            allowed_for_session: HashSet::new(),
        }
    }

    pub fn mode(&self) -> ApprovalMode {
        self.mode
    }

    pub fn check(&self, tool_name: &str, effect: ToolEffect) -> Verdict {
        if effect == ToolEffect::ReadOnly {
            return Verdict::Run;
        }
        match self.mode {
            ApprovalMode::ReadOnly => Verdict::Refuse(format!(
                "the approval mode is read-only, which allows only tools that change nothing; `{tool_name}` can change things"
            )),
            ApprovalMode::FullAuto => Verdict::Run,
            ApprovalMode::AutoEdit if effect == ToolEffect::Edit => Verdict::Run,
            ApprovalMode::Ask | ApprovalMode::AutoEdit => {
                if self.allowed_for_session.contains(tool_name) {
                    Verdict::Run
                } else {
                    Verdict::Ask
                }
            }
        }
    }

    /// Remembers "approve for this session" for a tool.
    pub fn allow_for_session(&mut self, tool_name: &str) {
        self.allowed_for_session.insert(tool_name.to_string());
    }
}

/// Approvals awaiting a decision, keyed by call id. Shared between the turn (which waits)
/// and the op router (which answers).
#[derive(Clone, Debug, Default)]
pub struct PendingApprovals {
    waiting: Arc<Mutex<HashMap<CallId, oneshot::Sender<Decision>>>>,
}

impl PendingApprovals {
    /// Registers a call and returns where its decision will arrive.
    pub fn register(&self, id: &str) -> oneshot::Receiver<Decision> {
        let (sender, receiver) = oneshot::channel();
        self.lock().insert(id.to_string(), sender);
        receiver
    }

    /// Delivers a decision; false when no call with that id is waiting.
    pub fn resolve(&self, id: &str, decision: Decision) -> bool {
        match self.lock().remove(id) {
            Some(sender) => sender.send(decision).is_ok(),
            None => false,
        }
    }

    /// Forgets a call (answered, or its turn ended).
    pub fn remove(&self, id: &str) {
        self.lock().remove(id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CallId, oneshot::Sender<Decision>>> {
        // A panic while holding this lock cannot leave the map half-updated (every
        // operation is a single insert or remove), so a poisoned lock is still usable.
        self.waiting
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn modes_decide_by_effect() {
        let cases = [
            (ApprovalMode::ReadOnly, ToolEffect::ReadOnly, Verdict::Run),
            (ApprovalMode::Ask, ToolEffect::Edit, Verdict::Ask),
            (ApprovalMode::Ask, ToolEffect::Execute, Verdict::Ask),
            (ApprovalMode::AutoEdit, ToolEffect::Edit, Verdict::Run),
            (ApprovalMode::AutoEdit, ToolEffect::Execute, Verdict::Ask),
            (ApprovalMode::AutoEdit, ToolEffect::External, Verdict::Ask),
            (ApprovalMode::FullAuto, ToolEffect::External, Verdict::Run),
        ];
        for (mode, effect, expected) in cases {
            assert_eq!(
                ApprovalPolicy::new(mode).check("t", effect),
                expected,
                "{mode} {effect:?}"
            );
        }
        assert!(matches!(
            ApprovalPolicy::new(ApprovalMode::ReadOnly).check("bash", ToolEffect::Execute),
            Verdict::Refuse(_)
        ));
    }

    #[test]
    fn session_approval_is_per_tool() {
        let mut policy = ApprovalPolicy::new(ApprovalMode::Ask);
        policy.allow_for_session("bash");
        assert_eq!(policy.check("bash", ToolEffect::Execute), Verdict::Run);
        assert_eq!(policy.check("write_file", ToolEffect::Edit), Verdict::Ask);
    }

    #[tokio::test]
    async fn pending_approvals_deliver_once() {
        let pending = PendingApprovals::default();
        let receiver = pending.register("c1");
        assert!(pending.resolve("c1", Decision::Approve));
        assert!(!pending.resolve("c1", Decision::Approve));
        assert_eq!(receiver.await.unwrap(), Decision::Approve);
    }
}
