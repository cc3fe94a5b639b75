//! The colours the terminal can show. Themes, highlighted code and tool output may ask
//! for any 24-bit colour; a frame is brought down to what the terminal says it supports
//! (`COLORTERM`, `TERM`) just before it is written, so every source of colour obeys it.
//! `NO_COLOR` takes every colour away.

use ratatui::buffer::Buffer;
use ratatui::style::Color;

/// How many colours the terminal shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorDepth {
    /// 24-bit colour: only when `COLORTERM` says `truecolor` or `24bit`.
    TrueColor,
    /// The xterm 256-colour palette (`TERM` names a `256color` terminal).
    Ansi256,
    /// The 16 ANSI colours, whose exact shades the terminal's own palette decides.
    Ansi16,
    /// `NO_COLOR`: none at all.
    None,
}

impl ColorDepth {
    /// What the environment says the terminal supports.
    pub fn detect(env: &miniagent_api::Env, no_color: bool) -> ColorDepth {
        if no_color {
            return ColorDepth::None;
        }
        let colorterm = env.var("COLORTERM").unwrap_or_default().to_ascii_lowercase();
        if colorterm == "truecolor" || colorterm == "24bit" {
            return ColorDepth::TrueColor;
        }
        let term = env.var("TERM").unwrap_or_default().to_ascii_lowercase();
        if term.contains("256color") {
            ColorDepth::Ansi256
        } else {
            ColorDepth::Ansi16
        }
    }

    /// `color` as this depth can show it.
    pub fn map(self, color: Color) -> Color {
        match (self, color) {
            (ColorDepth::TrueColor, color) => color,
            (ColorDepth::None, _) => Color::Reset,
            (ColorDepth::Ansi256, Color::Rgb(r, g, b)) => Color::Indexed(nearest_256(r, g, b)),
            (ColorDepth::Ansi16, Color::Rgb(r, g, b)) => nearest_16((r, g, b)),
            (ColorDepth::Ansi16, Color::Indexed(index)) => nearest_16(indexed_rgb(index)),
            (ColorDepth::Ansi256 | ColorDepth::Ansi16, color) => color,
        }
    }

    /// Brings every cell of a drawn frame down to this depth.
    pub fn apply(self, buf: &mut Buffer) {
        if self == ColorDepth::TrueColor {
            return;
        }
        for cell in &mut buf.content {
            cell.fg = self.map(cell.fg);
            cell.bg = self.map(cell.bg);
            cell.underline_color = self.map(cell.underline_color);
        }
    }
}

/// The six levels of each channel in the xterm colour cube (indices 16–231).
const CUBE_LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];

/// The usual xterm shades of the 16 ANSI colours, to find the nearest one.
const ANSI_16: [((u8, u8, u8), Color); 16] = [
    ((0, 0, 0), Color::Black),
    ((205, 0, 0), Color::Red),
    ((0, 205, 0), Color::Green),
    ((205, 205, 0), Color::Yellow),
    ((0, 0, 238), Color::Blue),
    ((205, 0, 205), Color::Magenta),
    ((0, 205, 205), Color::Cyan),
    ((229, 229, 229), Color::Gray),
    ((127, 127, 127), Color::DarkGray),
    ((255, 0, 0), Color::LightRed),
    ((0, 255, 0), Color::LightGreen),
    ((255, 255, 0), Color::LightYellow),
    ((92, 92, 255), Color::LightBlue),
    ((255, 0, 255), Color::LightMagenta),
    ((0, 255, 255), Color::LightCyan),
    ((255, 255, 255), Color::White),
];

/// Squared distance, weighted for how the eye tells colours apart.
fn distance(a: (u8, u8, u8), b: (u8, u8, u8)) -> u32 {
    let d = |x: u8, y: u8| u32::from(x.abs_diff(y)).pow(2);
    2 * d(a.0, b.0) + 4 * d(a.1, b.1) + 3 * d(a.2, b.2)
}

fn nearest_level(value: u8) -> usize {
    (0..CUBE_LEVELS.len())
        .min_by_key(|&i| CUBE_LEVELS[i].abs_diff(value))
        .unwrap_or(0)
}

/// The 256-palette index nearest to an RGB colour: the cube's or the grey ramp's.
fn nearest_256(r: u8, g: u8, b: u8) -> u8 {
    let (ri, gi, bi) = (nearest_level(r), nearest_level(g), nearest_level(b));
    let cube = (CUBE_LEVELS[ri], CUBE_LEVELS[gi], CUBE_LEVELS[bi]);
    let cube_index = 16 + 36 * ri + 6 * gi + bi;
    // The grey ramp (232–255) runs from 8 to 238 in steps of 10.
    let mean = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
    let step = (mean.saturating_sub(3) / 10).min(23);
    let grey_level = u8::try_from(8 + step * 10).unwrap_or(238);
    let grey = (grey_level, grey_level, grey_level);
    let rgb = (r, g, b);
    let index = if distance(grey, rgb) < distance(cube, rgb) {
        232 + usize::from(step)
    } else {
        cube_index
    };
    u8::try_from(index).unwrap_or(u8::MAX)
}

/// The RGB an xterm shows for a 256-palette index.
fn indexed_rgb(index: u8) -> (u8, u8, u8) {
    match index {
        0..=15 => ANSI_16[usize::from(index)].0,
        16..=231 => {
            let n = usize::from(index - 16);
            (CUBE_LEVELS[n / 36], CUBE_LEVELS[(n / 6) % 6], CUBE_LEVELS[n % 6])
        }
        232..=255 => {
            let level = 8 + (index - 232) * 10;
            (level, level, level)
        }
    }
}

/// The RGB a colour is shown in on an xterm with its usual palette; `None` for the
/// terminal's own default (`Reset`), which no theme can know. For checking contrast.
#[cfg(test)]
pub(crate) fn shown_rgb(color: Color) -> Option<(u8, u8, u8)> {
    match color {
        Color::Reset => None,
        Color::Rgb(r, g, b) => Some((r, g, b)),
        Color::Indexed(index) => Some(indexed_rgb(index)),
        named => ANSI_16.iter().find(|(_, c)| *c == named).map(|(rgb, _)| *rgb),
    }
}

fn nearest_16(rgb: (u8, u8, u8)) -> Color {
    ANSI_16
        .iter()
        .min_by_key(|(shade, _)| distance(*shade, rgb))
        .map_or(Color::Reset, |(_, color)| *color)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> miniagent_api::Env {
        miniagent_api::Env::with(move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        })
    }

    type Case = (&'static [(&'static str, &'static str)], bool, ColorDepth);

    #[test]
    fn the_depth_comes_from_colorterm_then_term_and_no_color_wins() {
        let cases: [Case; 7] = [
            (
                &[("COLORTERM", "truecolor"), ("TERM", "xterm")],
                false,
                ColorDepth::TrueColor,
            ),
            (&[("COLORTERM", "24bit")], false, ColorDepth::TrueColor),
            (&[("TERM", "xterm-256color")], false, ColorDepth::Ansi256),
            (
                &[("COLORTERM", "yes"), ("TERM", "screen-256color")],
                false,
                ColorDepth::Ansi256,
            ),
            (&[("TERM", "xterm")], false, ColorDepth::Ansi16),
            (&[], false, ColorDepth::Ansi16),
            (&[("COLORTERM", "truecolor")], true, ColorDepth::None),
        ];
        for (pairs, no_color, expected) in cases {
            assert_eq!(
                ColorDepth::detect(&env_of(pairs), no_color),
                expected,
                "{pairs:?}"
            );
        }
    }

    #[test]
    fn colours_map_to_their_nearest() {
        let to256 = |r, g, b| ColorDepth::Ansi256.map(Color::Rgb(r, g, b));
        assert_eq!(to256(255, 0, 0), Color::Indexed(196));
        assert_eq!(to256(0, 0, 0), Color::Indexed(16));
        assert_eq!(to256(30, 30, 46), Color::Indexed(235));
        assert_eq!(to256(128, 128, 128), Color::Indexed(244));
        let to16 = |r, g, b| ColorDepth::Ansi16.map(Color::Rgb(r, g, b));
        assert_eq!(to16(250, 10, 10), Color::LightRed);
        assert_eq!(to16(30, 30, 46), Color::Black);
        assert_eq!(to16(205, 214, 244), Color::Gray);
        assert_eq!(ColorDepth::Ansi16.map(Color::Indexed(196)), Color::LightRed);
        assert_eq!(ColorDepth::Ansi16.map(Color::Indexed(3)), Color::Yellow);
        // Named colours are the terminal's own; they stay.
        assert_eq!(ColorDepth::Ansi16.map(Color::Cyan), Color::Cyan);
        assert_eq!(ColorDepth::None.map(Color::Cyan), Color::Reset);
        // Every index maps back onto itself through its RGB.
        for index in 16..=255u8 {
            let (r, g, b) = indexed_rgb(index);
            assert_eq!(indexed_rgb(nearest_256(r, g, b)), (r, g, b), "{index}");
        }
    }
}
