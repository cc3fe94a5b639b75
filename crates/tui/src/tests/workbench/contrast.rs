//! Every built-in theme's selected and focused styles read (WCAG AA): 4.5:1 between a
//! character and its background for text, 3:1 for a focused border, in 24-bit colour and
//! brought down to the 256-colour palette (where two near colours can become one). The
//! 16 ANSI colours are left out: the terminal's own palette decides their shades.

use super::*;

use crate::palette::{ColorDepth, shown_rgb};
use ratatui::buffer::Buffer;
use ratatui::style::Color;

/// WCAG's relative luminance of an sRGB colour.
fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
    let channel = |value: u8| {
        let v = f64::from(value) / 255.0;
        if v <= 0.039_28 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)
}

fn contrast(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// The background each built-in theme is made for (the terminal's own, which no theme
/// sets): its focused pane's title and border are drawn on it.
fn meant_for(theme: &str) -> (u8, u8, u8) {
    match theme {
        "dark" => (0x2b, 0x30, 0x3b),
        "light" => (0xff, 0xff, 0xff),
        _ => (0, 0, 0),
    }
}

/// The app drawn at `width`×`height` in the colours `depth` shows.
fn drawn(app: &mut Bench, depth: ColorDepth, width: u16, height: u16) -> Buffer {
    app.look.set_color_depth(depth);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|frame| render::draw(frame, app)).unwrap();
    app.frame_drawn();
    terminal.backend().buffer().clone()
}

/// Every colour pair drawn on one of `backgrounds` that does not reach 4.5:1, once
/// each, with the first character found in it. Block elements are the gauge's graphics,
/// not text.
fn unreadable(buf: &Buffer, backgrounds: &[Color], what: &str) -> Vec<String> {
    let mut found: Vec<(Color, Color, String)> = Vec::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            let cell = &buf[(x, y)];
            let symbol = cell.symbol();
            let graphic = symbol.chars().all(|c| ('\u{2580}'..='\u{259f}').contains(&c));
            if symbol.trim().is_empty() || graphic || !backgrounds.contains(&cell.bg) {
                continue;
            }
            let ratio = match (shown_rgb(cell.fg), shown_rgb(cell.bg)) {
                (Some(fg), Some(bg)) => contrast(fg, bg),
                // The terminal's own colour on a theme's background: nothing can know.
                _ => 0.0,
            };
            if ratio < 4.5 && !found.iter().any(|(fg, bg, _)| (*fg, *bg) == (cell.fg, cell.bg)) {
                let text = format!(
                    "{what} ({x},{y}) {symbol:?} {:?} on {:?}: {ratio:.2}",
                    cell.fg, cell.bg
                );
                found.push((cell.fg, cell.bg, text));
            }
        }
    }
    found.into_iter().map(|(_, _, text)| text).collect()
}

/// The theme's own pairs, as `depth` shows them: text on the selection and on the bars
/// (the gauge's figure is in its colour, keys in theme.key), at 4.5:1; the focused
/// pane's title at 4.5:1 and its border at 3:1 on the background the theme is for.
fn weak_pairs(name: &str, theme: &Theme, depth: ColorDepth) -> Vec<String> {
    let shown = |color: Option<Color>| color.map(|c| depth.map(c)).and_then(shown_rgb);
    let bar = theme.status_bar.bg;
    let background = Some(meant_for(name));
    let pairs = [
        (
            "selection",
            shown(theme.selection.fg),
            shown(theme.selection.bg),
            4.5,
        ),
        (
            "title bar",
            shown(theme.title_bar.fg),
            shown(theme.title_bar.bg),
            4.5,
        ),
        ("status bar", shown(theme.status_bar.fg), shown(bar), 4.5),
        ("key on the status bar", shown(theme.key.fg), shown(bar), 4.5),
        ("gauge ok", shown(theme.gauge_ok.fg), shown(bar), 4.5),
        ("gauge warn", shown(theme.gauge_warn.fg), shown(bar), 4.5),
        ("gauge danger", shown(theme.gauge_danger.fg), shown(bar), 4.5),
        ("focused title", shown(theme.title.fg), background, 4.5),
        ("focused border", shown(theme.border_focused.fg), background, 3.0),
    ];
    pairs
        .into_iter()
        .filter_map(|(part, fg, bg, least)| match (fg, bg) {
            (Some(fg), Some(bg)) if contrast(fg, bg) >= least => None,
            _ => Some(format!("{name} {depth:?} {part}: {fg:?} on {bg:?}")),
        })
        .collect()
}

#[test]
fn every_theme_s_selected_and_focused_styles_reach_wcag_aa() {
    let mut failures = Vec::new();
    for name in Theme::built_in_names() {
        let theme = Theme::load(name, None, false).unwrap();
        for depth in [ColorDepth::TrueColor, ColorDepth::Ansi256] {
            failures.extend(weak_pairs(name, &theme, depth));
            let workspace = TempDir::new();
            let mut app = app_in(&workspace);
            app.set_theme(theme.clone());
            busy_session(&mut app);
            let backgrounds: Vec<Color> = [theme.selection, theme.title_bar, theme.status_bar]
                .into_iter()
                .filter_map(|style| style.bg.map(|bg| depth.map(bg)))
                .collect();
            let what = |part: &str| format!("{name} {depth:?} {part}");
            // As drawn: the selected row of each pane that has one (whatever colours its
            // spans ask for), the completion popup's, and the bars, at full width.
            drawn(&mut app, depth, 160, 48);
            for (pane, part) in [(Pane::Timeline, "tools pane"), (Pane::Thinking, "thinking pane")] {
                app.layout.focus_on(pane);
                app.on_key(key(KeyCode::Up));
                let buf = drawn(&mut app, depth, 160, 48);
                failures.extend(unreadable(&buf, &backgrounds, &what(part)));
            }
            app.layout.focus_on(Pane::Input);
            type_text(&mut app, "/");
            let buf = drawn(&mut app, depth, 160, 48);
            failures.extend(unreadable(&buf, &backgrounds, &what("completion")));
        }
    }
    assert_eq!(failures, Vec::<String>::new());
}
