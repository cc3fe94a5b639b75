//! With no API key the workbench still opens: this panel says how to set one, and offers
//! an OpenAI-compatible server found answering on this machine (the core looks for it:
//! `miniagent_api::find_local_server`).

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::keys::KeyHint;
use crate::keys::{OverlayAction, OverlayContext};
use crate::popup::{centered, popup};
use crate::text::wrap;
use crate::theme::Theme;

/// The panel's text.
pub fn lines(first_run: &FirstRun, theme: &Theme) -> Vec<Line<'static>> {
    let text = |s: &str| Line::from(Span::styled(s.to_string(), theme.text));
    let mut lines = vec![
        Line::from(Span::styled(first_run.problem.clone(), theme.warning)),
        Line::default(),
        text("To use a hosted model, set a key in the environment and start miniagent again:"),
        Line::from(Span::styled(
            "  export ANTHROPIC_API_KEY=…      (Anthropic's API, the default)",
            theme.code,
        )),
        Line::from(Span::styled(
            "  export OPENAI_API_KEY=…         (OpenAI's, with --provider openai)",
            theme.code,
        )),
        Line::from(Span::styled(
            "  export MINIMAX_API_KEY=…        (with --base-url https://api.minimax.io)",
            theme.code,
        )),
        Line::from(Span::styled(
            "  export MINIAGENT_API_KEY=…      (any server, gateways too)",
            theme.code,
        )),
        text("or name your own variable with --api-key-env VAR, or api_key_env in"),
        Line::from(Span::styled(format!("  {}", first_run.config_path), theme.code)),
        Line::default(),
    ];
    match &first_run.local_server {
        Some((url, model)) => {
            lines.push(Line::from(vec![
                Span::styled("A local model server answers at ", theme.text),
                Span::styled(url.clone(), theme.accent),
                Span::styled(format!(" (model {model})."), theme.text),
            ]));
            lines.push(without_a_key(theme));
            lines.push(Line::from(vec![
                Span::styled("Enter", theme.key),
                Span::styled(" uses it now   ", theme.text),
                Span::styled("Esc", theme.key),
                Span::styled(" closes this panel   ", theme.text),
                Span::styled("Ctrl-C", theme.key),
                Span::styled(" twice quits", theme.text),
            ]));
        }
        None => {
            lines.push(Line::from(Span::styled(
                format!(
                    "No local model server answers on {}.",
                    miniagent_api::local_server_addresses().join(" or ")
                ),
                theme.dim,
            )));
            lines.push(without_a_key(theme));
            lines.push(Line::from(vec![
                Span::styled("Esc", theme.key),
                Span::styled(" closes this panel   ", theme.text),
                Span::styled("Ctrl-C", theme.key),
                Span::styled(" twice quits", theme.text),
            ]));
        }
    }
    lines
}

fn without_a_key(theme: &Theme) -> Line<'static> {
    Line::from(Span::styled(
        "Without a key, the files, /resume and replays still work.",
        theme.text,
    ))
}

/// The panel's facts are the app's (it opens the panel again when a prompt cannot be
/// sent); this file draws them and takes the keys.
pub use crate::app::FirstRun;

impl crate::layers::Layer for FirstRun {
    type State = crate::app::App;

    fn title(&self) -> String {
        "Welcome to miniagent".to_string()
    }

    fn key_hints(&self) -> Vec<KeyHint> {
        if self.local_server.is_some() {
            vec![
                KeyHint::new("Enter", "use the local server"),
                KeyHint::new("Esc", "close"),
                KeyHint::new("Ctrl-C twice", "quit"),
            ]
        } else {
            vec![
                KeyHint::new("Esc/Enter", "close"),
                KeyHint::new("Ctrl-C twice", "quit"),
            ]
        }
    }

    fn on_key(&mut self, key: KeyEvent, _context: OverlayContext<'_>) -> OverlayAction {
        // Every key a person tries to get out with gets them out; the workbench works on
        // without a model (the app opens help after F1 and types the `/`).
        match key.code {
            KeyCode::Enter => match &self.local_server {
                Some((base_url, model)) => OverlayAction::UseLocalServer {
                    base_url: base_url.clone(),
                    model: model.clone(),
                },
                None => OverlayAction::Close,
            },
            KeyCode::Esc | KeyCode::F(1) | KeyCode::Char('q' | '/') => OverlayAction::Close,
            _ => OverlayAction::Ignored,
        }
    }

    fn render(&self, app: &crate::app::App, size: Rect, buf: &mut Buffer) {
        let lines = lines(self, app.look.theme());
        let width = 90.min(size.width);
        let rows = wrap::wrap_lines(&lines, width.saturating_sub(2)).len();
        let small = centered(
            crate::popup::between_bars(size),
            width,
            u16::try_from(rows + 2).unwrap_or(u16::MAX),
        );
        popup(buf, small, &self.title(), lines, 0, app, true);
    }
}
