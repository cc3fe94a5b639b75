//! Opening the overlays the app fills itself (history inspector, `/stats`, the welcome
//! panel), and asking the agent for fresh history snapshots while they show.

use super::App;
use crate::protocol::Op;
use crate::tui::inspector::HistoryInspector;
use crate::tui::overlay::Overlay;

impl App {
    /// Opens the history inspector and asks the agent for a fresh snapshot (the one
    /// kept from before may be stale).
    pub fn open_history(&mut self) {
        self.send(Op::InspectHistory);
        self.overlays
            .push(Overlay::History(HistoryInspector::awaiting_snapshot()));
    }

    /// Opens `/stats`, asking for a fresh snapshot for its history figures.
    pub fn open_stats(&mut self) {
        self.send(Op::InspectHistory);
        self.overlays.push(Overlay::Stats {
            scroll: crate::tui::scroll::Scroll::default(),
        });
    }

    /// Asks for a new snapshot when an open overlay shows one (the history just changed).
    pub(super) fn refresh_history_views(&mut self) {
        let mut shown = false;
        for overlay in &mut self.overlays {
            match overlay {
                Overlay::History(inspector) => {
                    inspector.waiting = true;
                    shown = true;
                }
                Overlay::Stats { .. } => shown = true,
                Overlay::ToolDetail { .. }
                | Overlay::FilePreview(_)
                | Overlay::Sessions(_)
                | Overlay::Trust(_)
                | Overlay::ResumeQuestion(_)
                | Overlay::FirstRun(_)
                | Overlay::Layer(_) => {}
            }
        }
        if shown {
            self.send(Op::InspectHistory);
        }
    }

    /// Opens the welcome panel: no model is set up, and `first_run` says why.
    pub fn show_welcome(&mut self, first_run: crate::tui::overlay::FirstRun) {
        self.welcome = Some(first_run.clone());
        self.overlays.push(Overlay::FirstRun(first_run));
    }

    /// A local model server answered: the welcome panel offers it, now and when reopened.
    pub fn local_server_found(&mut self, found: (String, String)) {
        if let Some(welcome) = &mut self.welcome {
            welcome.local_server = Some(found.clone());
        }
        for overlay in &mut self.overlays {
            if let Overlay::FirstRun(first_run) = overlay {
                first_run.local_server = Some(found.clone());
            }
        }
    }
}
