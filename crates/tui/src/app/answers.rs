//! What the agent tells the workbench about files: a finished call's effects (files it
//! changed, marked in the tree), and its answers to `/notes` and to opening a call whose
//! result the timeline let go of. The workbench reads none of the agent's files itself.

use super::App;
use crate::conversation::NoticeKind;
use crate::output_buffer::{FINISHED_OUTPUT_BYTES, OutputBuffer};
use miniagent_protocol::{CallEffect, Event, RecordedOutput};

impl App {
    /// Marks the files a finished call changed.
    pub(crate) fn apply_effects(&mut self, effects: &[CallEffect]) {
        let paths = effects.iter().map(|effect| match effect {
            CallEffect::FileChanged { path, .. } => std::path::Path::new(path),
        });
        self.tree.mark_all_touched(paths);
    }

    /// An answer the open layers may be waiting for (the notes).
    pub(crate) fn layers_take(&mut self, event: &Event) {
        for layer in self.layers.iter_mut() {
            layer.on_event(event);
        }
    }

    /// A call's recorded result arrived: the timeline holds it again, and its open
    /// detail view shows it.
    pub(crate) fn recorded_call_arrived(
        &mut self,
        id: &str,
        result: Option<String>,
        output: Option<RecordedOutput>,
        error: Option<String>,
    ) {
        match (result, error) {
            (_, Some(why)) => self.notice(
                NoticeKind::Warning,
                format!("cannot read the result of `{id}` back: {why}"),
            ),
            (Some(result), None) => {
                let output = output.map(|output| {
                    OutputBuffer::recorded(FINISHED_OUTPUT_BYTES, &output.head, &output.tail, output.dropped)
                });
                self.timeline.restore(id, result, output);
            }
            (None, None) => self.notice(
                NoticeKind::Warning,
                format!("the result of `{id}` is not in the session log"),
            ),
        }
    }
}
