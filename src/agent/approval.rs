//! Which tool calls run, which ask a person, and which are refused; and the pending
//! approvals awaiting an answer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::oneshot;

use crate::config::ApprovalMode;
use crate::protocol::{ApprovalRule, CallId, Decision};
use crate::tools::{Tool, ToolEffect};

/// What the policy says about one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Run,
    Ask,
    Refuse(String),
}

/// The approval mode plus what a person allowed for the rest of the session.
#[derive(Clone, Debug)]
pub struct ApprovalPolicy {
    mode: ApprovalMode,
    /// In the order they were given, for listing.
    rules: Vec<ApprovalRule>,
}

impl ApprovalPolicy {
    pub fn new(mode: ApprovalMode) -> Self {
        Self {
            mode,
            rules: Vec::new(),
        }
    }

    pub fn mode(&self) -> ApprovalMode {
        self.mode
    }

    pub fn set_mode(&mut self, mode: ApprovalMode) {
        self.mode = mode;
    }

    /// Whether a call of `tool` with `arguments` runs, asks, or is refused.
    pub fn check(&self, tool: &dyn Tool, arguments: &Value) -> Verdict {
        let effect = tool.effect();
        if effect == ToolEffect::ReadOnly {
            return Verdict::Run;
        }
        match self.mode {
            ApprovalMode::ReadOnly => Verdict::Refuse(format!(
                "the approval mode is read-only, which allows only tools that change nothing; `{}` {}",
                tool.name(),
                match effect {
                    ToolEffect::WritesFiles => "writes files",
                    ToolEffect::RunsCommands => "runs commands",
                    ToolEffect::External | ToolEffect::ReadOnly => "acts outside miniagent",
                }
            )),
            ApprovalMode::FullAuto => Verdict::Run,
            ApprovalMode::Ask | ApprovalMode::AutoEdit if tool.auto_approved() => Verdict::Run,
            ApprovalMode::AutoEdit if effect == ToolEffect::WritesFiles => Verdict::Run,
            ApprovalMode::Ask | ApprovalMode::AutoEdit => {
                let remembered = tool
                    .session_rule(arguments)
                    .is_some_and(|rule| self.rules.contains(&rule));
                if remembered { Verdict::Run } else { Verdict::Ask }
            }
        }
    }

    /// Remembers a rule; false when it was already there.
    pub fn remember(&mut self, rule: ApprovalRule) -> bool {
        if self.rules.contains(&rule) {
            return false;
        }
        self.rules.push(rule);
        true
    }

    /// Forgets a rule; false when there was no such rule.
    pub fn revoke(&mut self, rule: &ApprovalRule) -> bool {
        let before = self.rules.len();
        self.rules.retain(|kept| kept != rule);
        self.rules.len() != before
    }

    pub fn rules(&self) -> &[ApprovalRule] {
        &self.rules
    }
}

/// The policy, shared by the running turn (which consults it) and the op router (which
/// revokes rules while a turn runs).
#[derive(Clone, Debug)]
pub struct SharedPolicy(Arc<Mutex<ApprovalPolicy>>);

impl SharedPolicy {
    pub fn new(policy: ApprovalPolicy) -> Self {
        Self(Arc::new(Mutex::new(policy)))
    }

    /// Runs `f` with the policy locked (never across an await).
    pub fn with<T>(&self, f: impl FnOnce(&mut ApprovalPolicy) -> T) -> T {
        // Every change is one push or retain: a panic cannot leave it half-done.
        let mut policy = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut policy)
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

    struct FakeTool(ToolEffect);

    impl Tool for FakeTool {
        fn name(&self) -> &str {
            "fake"
        }
        fn description(&self) -> &str {
            "a tool for policy tests"
        }
        fn input_schema(&self) -> Value {
            serde_json::json!({"type": "object"})
        }
        fn effect(&self) -> ToolEffect {
            self.0
        }
        fn run(
            &self,
            _: Value,
            _: crate::tools::ToolContext,
        ) -> futures_util::future::BoxFuture<'_, crate::tools::ToolOutput> {
            Box::pin(async { crate::tools::ToolOutput::ok("") })
        }
    }

    #[test]
    fn modes_decide_by_effect() {
        let cases = [
            (ApprovalMode::ReadOnly, ToolEffect::ReadOnly, Verdict::Run),
            (ApprovalMode::Ask, ToolEffect::ReadOnly, Verdict::Run),
            (ApprovalMode::Ask, ToolEffect::WritesFiles, Verdict::Ask),
            (ApprovalMode::Ask, ToolEffect::RunsCommands, Verdict::Ask),
            (ApprovalMode::AutoEdit, ToolEffect::WritesFiles, Verdict::Run),
            (ApprovalMode::AutoEdit, ToolEffect::RunsCommands, Verdict::Ask),
            (ApprovalMode::AutoEdit, ToolEffect::External, Verdict::Ask),
            (ApprovalMode::FullAuto, ToolEffect::External, Verdict::Run),
        ];
        let args = serde_json::json!({});
        for (mode, effect, expected) in cases {
            assert_eq!(
                ApprovalPolicy::new(mode).check(&FakeTool(effect), &args),
                expected,
                "{mode} {effect}"
            );
        }
        assert_eq!(
            ApprovalPolicy::new(ApprovalMode::ReadOnly).check(&FakeTool(ToolEffect::WritesFiles), &args),
            Verdict::Refuse(
                "the approval mode is read-only, which allows only tools that change nothing; `fake` writes files".into()
            )
        );
    }

    #[test]
    fn remembered_rules_apply_until_revoked() {
        let tool = FakeTool(ToolEffect::RunsCommands);
        let args = serde_json::json!({});
        let rule = ApprovalRule::Tool { name: "fake".into() };
        let mut policy = ApprovalPolicy::new(ApprovalMode::Ask);
        assert!(policy.remember(rule.clone()));
        assert!(!policy.remember(rule.clone()));
        assert_eq!(policy.check(&tool, &args), Verdict::Run);
        assert!(policy.revoke(&rule));
        assert_eq!(policy.check(&tool, &args), Verdict::Ask);
        assert!(!policy.revoke(&rule));
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
