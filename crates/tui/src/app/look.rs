//! How the workbench looks: the theme, the name it was chosen by, and what the terminal
//! can show (`NO_COLOR`, its colour depth).

use crate::palette::ColorDepth;
use crate::theme::Theme;

/// The theme and the terminal's colours.
#[derive(Debug)]
pub struct Look {
    theme: Theme,
    /// The name the theme was chosen by (`Theme::name` is the file's own, and
    /// `monochrome` under `NO_COLOR`).
    name: String,
    no_color: bool,
    /// The colours the terminal shows; each frame is brought down to them.
    color_depth: ColorDepth,
    /// Whether the workbench takes the mouse (`/mouse` turns it off so the terminal's
    /// own selection works).
    mouse_released: bool,
}

impl Look {
    /// `theme`, under its own name, in true colour.
    pub(crate) fn new(theme: Theme) -> Self {
        Self {
            name: theme.name.clone(),
            theme,
            no_color: false,
            color_depth: ColorDepth::TrueColor,
            mouse_released: false,
        }
    }

    /// Whether the workbench takes the mouse now.
    pub fn mouse_captured(&self) -> bool {
        !self.mouse_released
    }

    pub(crate) fn set_mouse_captured(&mut self, captured: bool) {
        self.mouse_released = !captured;
    }

    pub fn theme(&self) -> &Theme {
        &self.theme
    }

    /// The name `/theme` shows as chosen.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether `NO_COLOR` is set: every theme loads as monochrome.
    pub fn no_color(&self) -> bool {
        self.no_color
    }

    pub fn color_depth(&self) -> ColorDepth {
        self.color_depth
    }

    /// Draws with `theme` from now on (the app also redraws what it cached).
    pub(crate) fn set_theme(&mut self, theme: Theme) {
        self.theme = theme;
    }

    pub(crate) fn set_name(&mut self, name: String) {
        self.name = name;
    }

    pub(crate) fn set_no_color(&mut self, no_color: bool) {
        self.no_color = no_color;
    }

    pub(crate) fn set_color_depth(&mut self, depth: ColorDepth) {
        self.color_depth = depth;
    }
}
