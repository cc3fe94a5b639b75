//! The overlay stack's door on the app: opening layers, closing the top one, finding
//! one of a kind, and asking the agent for fresh history snapshots while one shows them.

use crate::app::App;
use crate::layers::Layer;
use crate::layers::history::HistoryInspector;
use miniagent_protocol::Op;

impl App {
    /// Opens the help over whatever shows.
    pub(crate) fn open_help(&mut self) {
        crate::help::open(self);
    }

    /// Puts `layer` on top of the stack (below a waiting approval): it gets the keys first
    /// and is drawn last.
    pub fn open_layer(&mut self, layer: Box<dyn Layer<State = App>>) {
        self.layers.open(layer);
    }

    /// Closes the top layer.
    pub fn close_layer(&mut self) -> Option<Box<dyn Layer<State = App>>> {
        self.layers.close()
    }

    /// The top layer, when it is a `T`.
    pub fn top<T: 'static>(&self) -> Option<&T> {
        self.layers.top_as::<T>()
    }

    /// The top layer, when it is a `T`, to change.
    pub fn top_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.layers.top_as_mut::<T>()
    }

    /// Opens the history inspector and asks the agent for a fresh snapshot (the one
    /// kept from before may be stale).
    pub fn open_history(&mut self) {
        self.send(Op::InspectHistory);
        self.open_layer(Box::new(HistoryInspector::awaiting_snapshot()));
    }

    /// Opens `/stats`, asking for a fresh snapshot for its history figures.
    pub fn open_stats(&mut self) {
        crate::layers::stats::open(self);
    }

    /// Asks for a new snapshot when an open overlay shows one (the history just changed).
    pub(crate) fn refresh_history_views(&mut self) {
        let mut shown = false;
        for layer in self.layers.iter_mut() {
            if let Some(inspector) = layer.as_any_mut().downcast_mut::<HistoryInspector>() {
                inspector.waiting = true;
            }
            shown |= layer.shows_history();
        }
        if shown {
            self.send(Op::InspectHistory);
        }
    }

    /// Opens the welcome panel: no model is set up, and `first_run` says why.
    pub fn show_welcome(&mut self, first_run: crate::layers::first_run::FirstRun) {
        self.welcome = Some(first_run.clone());
        self.open_layer(Box::new(first_run));
    }

    /// A local model server answered: the welcome panel offers it, now and when reopened.
    pub fn local_server_found(&mut self, found: (String, String)) {
        if let Some(welcome) = &mut self.welcome {
            welcome.local_server = Some(found.clone());
        }
        for layer in self.layers.iter_mut() {
            if let Some(first_run) = layer
                .as_any_mut()
                .downcast_mut::<crate::layers::first_run::FirstRun>()
            {
                first_run.local_server = Some(found.clone());
            }
        }
    }
}
