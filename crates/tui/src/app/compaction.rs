//! The context being compacted, and the conversation cleared: the agent's events that
//! shrink what the model sees, and the notices that report them.

use super::App;
use crate::conversation::NoticeKind;
use miniagent_protocol::CompactionOutcome;

impl App {
    pub(crate) fn on_compaction_started(&mut self, reason: &str) {
        self.turn.compaction_started();
        self.figures.summary_called();
        self.notice(NoticeKind::Info, format!("compacting: {reason}"));
        self.turn
            .compaction_progress_at(self.conversation.entries().len().checked_sub(1));
    }

    pub(crate) fn on_context_compacted(&mut self, tokens_before: u64, tokens_after: u64) {
        self.figures.compacted(tokens_before, tokens_after);
        self.turn.compaction_over(self.now);
        self.refresh_history_views();
        // Outside a turn it is `/compact`'s, whose report says the same and more.
        if self.turn.running() {
            self.notice(
                NoticeKind::Info,
                format!("context compacted: {tokens_before} → {tokens_after} tokens"),
            );
        }
    }

    pub(crate) fn on_compaction_ended(&mut self, outcome: CompactionOutcome, reason: &str) {
        self.turn.compaction_over(self.now);
        let (kind, what) = match outcome {
            CompactionOutcome::Failed => (NoticeKind::Warning, "compaction failed"),
            CompactionOutcome::Cancelled => (NoticeKind::Info, "compaction cancelled"),
        };
        self.notice(kind, format!("{what}: {reason}"));
    }

    pub(crate) fn on_notice(&mut self, message: String) {
        self.turn.agent_noticed();
        self.notice(NoticeKind::Info, message);
    }

    pub(crate) fn on_history_cleared(&mut self) {
        self.conversation.clear();
        self.thinking.clear();
        self.timeline.clear();
        // The model starts over without its plan.
        self.plan.clear();
        self.figures.history_cleared();
        self.turn.history_cleared();
        self.session.history_cleared();
        self.notice(NoticeKind::Info, "the conversation was cleared".to_string());
    }
}
