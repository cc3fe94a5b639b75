//! The names the overlays are known by, in one place
//! (each is a `layers::Layer` in a file of its own; the stack is
//! `App::overlays`, the top one gets keys first). The approval overlay is the app's own,
//! above all of these.

pub use super::keys::{OverlayAction, OverlayContext};
pub use super::layers::file_preview::FilePreviewLayer;
pub use super::layers::first_run::FirstRun;
pub use super::layers::history::HistoryInspector;
pub use super::layers::resume_question::ResumeQuestion;
pub use super::layers::sessions::SessionPicker;
pub use super::layers::stats::Stats;
pub use super::layers::tool_detail::ToolDetail;
pub use super::layers::trust::{TrustPrompt, TrustView};
