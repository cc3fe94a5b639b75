//! Colour themes: TOML files naming a style for each role the workbench draws. Three
//! are built in (`dark`, `light`, `high-contrast`); more can live in the config dir's
//! `themes/` folder. `NO_COLOR` replaces any theme with a monochrome one that uses only
//! bold, italic, underline and reverse.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use serde::Deserialize;

const BUILT_IN: [(&str, &str); 3] = [
    ("dark", include_str!("../../../themes/dark.toml")),
    ("light", include_str!("../../../themes/light.toml")),
    (
        "high-contrast",
        include_str!("../../../themes/high-contrast.toml"),
    ),
];

/// What is wrong with a theme file's text, in one line for the person who wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ThemeParseError {
    /// Not TOML of a theme's shape; the parser's own message.
    Toml(String),
    UnknownStyle(String),
    /// A role's style names a colour that does not exist.
    BadStyle {
        role: String,
        problem: String,
    },
    MissingStyle(String),
}

impl std::fmt::Display for ThemeParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Toml(message) => f.write_str(message),
            Self::UnknownStyle(role) => {
                write!(f, "unknown style `{role}` (known: {})", ROLE_NAMES.join(", "))
            }
            Self::BadStyle { role, problem } => write!(f, "style `{role}`: {problem}"),
            Self::MissingStyle(role) => write!(f, "missing style `{role}`"),
        }
    }
}

impl std::error::Error for ThemeParseError {}

/// Why a theme could not be loaded: each names where the theme came from.
#[derive(Debug)]
pub enum ThemeError {
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The user's theme file is there but wrong.
    File {
        path: PathBuf,
        problem: ThemeParseError,
    },
    BuiltIn {
        name: String,
        problem: ThemeParseError,
    },
    /// No user or built-in theme has this name.
    Unknown(String),
}

impl std::fmt::Display for ThemeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Read { path, error } => write!(f, "{}: {error}", path.display()),
            Self::File { path, problem } => write!(f, "{}: {problem}", path.display()),
            Self::BuiltIn { name, problem } => write!(f, "built-in theme {name}: {problem}"),
            Self::Unknown(name) => write!(
                f,
                "no theme `{name}`: the built-in themes are {}; your own go in the config folder's themes/",
                BUILT_IN.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

/// The message says all (what went wrong is part of it): no source, so a report of the
/// error's chain does not say it twice.
impl std::error::Error for ThemeError {}

/// Every role a theme styles. The names are the keys of a theme file's `[styles]`.
macro_rules! roles {
    ($($role:ident),* $(,)?) => {
        /// Styles for every role the workbench draws.
        #[derive(Clone, Debug, PartialEq)]
        pub struct Theme {
            pub name: String,
            /// The syntect theme for code blocks; empty means no syntax colours.
            pub syntax: String,
            /// False under `NO_COLOR`: only modifiers, never colours.
            pub colored: bool,
            $(pub $role: Style,)*
        }

        const ROLE_NAMES: &[&str] = &[$(stringify!($role)),*];

        impl Theme {
            fn from_styles(name: String, syntax: String, mut styles: BTreeMap<String, Style>) -> Result<Self, ThemeParseError> {
                let mut take = |role: &str| styles.remove(role).ok_or_else(|| ThemeParseError::MissingStyle(role.to_string()));
                let theme = Theme { name, syntax, colored: true, $($role: take(stringify!($role))?,)* };
                Ok(theme)
            }
        }
    };
}

roles!(
    text,
    dim,
    accent,
    border,
    border_focused,
    title,
    title_bar,
    status_bar,
    user,
    assistant,
    thinking,
    tool,
    ok,
    error,
    warning,
    selection,
    heading,
    emphasis,
    strong,
    link,
    quote,
    code,
    code_block,
    diff_add,
    diff_remove,
    diff_hunk,
    gauge_ok,
    gauge_warn,
    gauge_danger,
    key,
);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    name: String,
    #[serde(default)]
    syntax: String,
    styles: BTreeMap<String, StyleSpec>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum StyleSpec {
    Color(String),
    Full(FullSpec),
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FullSpec {
    fg: Option<String>,
    bg: Option<String>,
    #[serde(default)]
    bold: bool,
    #[serde(default)]
    italic: bool,
    #[serde(default)]
    underline: bool,
    #[serde(default)]
    reversed: bool,
    #[serde(default)]
    dim: bool,
}

/// A colour as theme files write it. Not ratatui's `Color::from_str`: it reads
/// `#+1+2+3` as a colour (its hex digits go through `from_str_radix`, which takes a sign),
/// reads `lightgray` as white, and has no `default`; here a colour is what the theme
/// documentation lists, and anything else is an error naming it.
fn parse_color(text: &str) -> Result<Color, String> {
    let lower = text.trim().to_ascii_lowercase();
    if let Some(hex) = lower.strip_prefix('#') {
        let valid = hex.len() == 6 && hex.chars().all(|c| c.is_ascii_hexdigit());
        if valid && let Ok(rgb) = u32::from_str_radix(hex, 16) {
            return Ok(Color::Rgb((rgb >> 16) as u8, (rgb >> 8) as u8, rgb as u8));
        }
        return Err(format!("`{text}` is not a #rrggbb colour"));
    }
    if let Ok(index) = lower.parse::<u8>() {
        return Ok(Color::Indexed(index));
    }
    let named = match lower.replace(['-', '_', ' '], "").as_str() {
        "reset" | "default" => Color::Reset,
        "black" => Color::Black,
        "red" => Color::Red,
        "green" => Color::Green,
        "yellow" => Color::Yellow,
        "blue" => Color::Blue,
        "magenta" => Color::Magenta,
        "cyan" => Color::Cyan,
        "gray" | "grey" => Color::Gray,
        "darkgray" | "darkgrey" => Color::DarkGray,
        "lightred" => Color::LightRed,
        "lightgreen" => Color::LightGreen,
        "lightyellow" => Color::LightYellow,
        "lightblue" => Color::LightBlue,
        "lightmagenta" => Color::LightMagenta,
        "lightcyan" => Color::LightCyan,
        "white" => Color::White,
        _ => return Err(format!("`{text}` is not a colour")),
    };
    Ok(named)
}

fn to_style(spec: StyleSpec) -> Result<Style, String> {
    let full = match spec {
        StyleSpec::Color(color) => FullSpec {
            fg: Some(color),
            ..FullSpec::default()
        },
        StyleSpec::Full(full) => full,
    };
    let mut style = Style::default();
    if let Some(fg) = &full.fg {
        style = style.fg(parse_color(fg)?);
    }
    if let Some(bg) = &full.bg {
        style = style.bg(parse_color(bg)?);
    }
    let flags = [
        (full.bold, Modifier::BOLD),
        (full.italic, Modifier::ITALIC),
        (full.underline, Modifier::UNDERLINED),
        (full.reversed, Modifier::REVERSED),
        (full.dim, Modifier::DIM),
    ];
    for (on, modifier) in flags {
        if on {
            style = style.add_modifier(modifier);
        }
    }
    Ok(style)
}

/// Parses a theme file's text; errors name the problem.
pub fn parse_theme(text: &str) -> Result<Theme, ThemeParseError> {
    let file: ThemeFile =
        toml::from_str(text).map_err(|err| ThemeParseError::Toml(err.message().to_string()))?;
    let mut styles = BTreeMap::new();
    for (role, spec) in file.styles {
        if !ROLE_NAMES.contains(&role.as_str()) {
            return Err(ThemeParseError::UnknownStyle(role));
        }
        let style = to_style(spec).map_err(|problem| ThemeParseError::BadStyle {
            role: role.clone(),
            problem,
        })?;
        styles.insert(role, style);
    }
    Theme::from_styles(file.name, file.syntax, styles)
}

impl Theme {
    /// The default theme.
    pub fn dark() -> Theme {
        // The built-in files are tested to parse; this fallback is never taken.
        parse_theme(BUILT_IN[0].1).unwrap_or_else(|_| Theme::monochrome())
    }

    /// Finds a theme by name: the user's `themes/NAME.toml` in the config dir first,
    /// then the built-in ones. `no_color` turns any theme monochrome.
    pub fn load(name: &str, config_dir: Option<&Path>, no_color: bool) -> Result<Theme, ThemeError> {
        if no_color {
            return Ok(Theme::monochrome());
        }
        if let Some(dir) = config_dir {
            let path = dir.join("themes").join(format!("{name}.toml"));
            if path.exists() {
                let text = match std::fs::read_to_string(&path) {
                    Ok(text) => text,
                    Err(error) => return Err(ThemeError::Read { path, error }),
                };
                return parse_theme(&text).map_err(|problem| ThemeError::File { path, problem });
            }
        }
        match BUILT_IN.iter().find(|(built_in, _)| *built_in == name) {
            Some((_, text)) => parse_theme(text).map_err(|problem| ThemeError::BuiltIn {
                name: name.to_string(),
                problem,
            }),
            None => Err(ThemeError::Unknown(name.to_string())),
        }
    }

    /// For `NO_COLOR`: no colours at all, roles told apart by bold, italic, underline
    /// and reverse.
    pub fn monochrome() -> Theme {
        let plain = Style::default();
        let bold = plain.add_modifier(Modifier::BOLD);
        let italic = plain.add_modifier(Modifier::ITALIC);
        let underline = plain.add_modifier(Modifier::UNDERLINED);
        let reversed = plain.add_modifier(Modifier::REVERSED);
        Theme {
            name: "monochrome".to_string(),
            syntax: String::new(),
            colored: false,
            text: plain,
            dim: plain,
            accent: bold,
            border: plain,
            border_focused: bold,
            title: bold,
            title_bar: reversed,
            status_bar: reversed,
            user: bold,
            assistant: plain,
            thinking: italic,
            tool: plain,
            ok: plain,
            error: bold,
            warning: bold,
            selection: reversed,
            heading: bold.add_modifier(Modifier::UNDERLINED),
            emphasis: italic,
            strong: bold,
            link: underline,
            quote: italic,
            code: plain,
            code_block: plain,
            diff_add: bold,
            diff_remove: plain,
            diff_hunk: underline,
            gauge_ok: plain,
            gauge_warn: bold,
            gauge_danger: reversed,
            key: bold,
        }
    }

    /// The themes `/theme` offers: the built-in ones, then the user's own `themes/*.toml`.
    pub fn available(config_dir: Option<&Path>) -> Vec<String> {
        let mut names: Vec<String> = Self::built_in_names()
            .iter()
            .map(|name| name.to_string())
            .collect();
        let mut own: Vec<String> = config_dir
            .and_then(|dir| std::fs::read_dir(dir.join("themes")).ok())
            .into_iter()
            .flatten()
            .filter_map(|entry| {
                let path = entry.ok()?.path();
                if path.extension()? != "toml" {
                    return None;
                }
                Some(path.file_stem()?.to_str()?.to_string())
            })
            .filter(|name| !names.contains(name))
            .collect();
        own.sort();
        names.extend(own);
        names
    }

    /// A selected row, drawn in the selection's colours throughout. Setting only the
    /// line's style left each span's own colour (the tool name's, a dim count's) on the
    /// selection's background, where nothing had checked that it reads: in the dark
    /// theme the tools pane drew the selected call's name in its background colour.
    /// Each span keeps its bold, italic or underline, but not a dimming.
    pub fn selected<'a>(&self, mut line: Line<'a>) -> Line<'a> {
        let dims = self.selection.add_modifier.contains(Modifier::DIM);
        let select = |style: Style| {
            let style = style.patch(self.selection);
            if dims {
                style
            } else {
                style.remove_modifier(Modifier::DIM)
            }
        };
        for span in &mut line.spans {
            span.style = select(span.style);
        }
        line.style = select(line.style);
        line
    }

    /// The names of the built-in themes.
    pub fn built_in_names() -> Vec<&'static str> {
        BUILT_IN.iter().map(|(name, _)| *name).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn built_in_themes_parse_and_style_every_role() {
        for name in Theme::built_in_names() {
            let theme = Theme::load(name, None, false).unwrap();
            assert_eq!(theme.name, name);
            assert!(theme.colored);
        }
        assert_eq!(Theme::load("dark", None, true).unwrap(), Theme::monochrome());
    }

    #[test]
    fn errors_name_the_style() {
        assert_eq!(
            parse_theme("name = \"x\"\n[styles]\ntext = \"chartreuse-ish\"\n")
                .unwrap_err()
                .to_string(),
            "style `text`: `chartreuse-ish` is not a colour"
        );
        assert!(
            parse_theme("name = \"x\"\n[styles]\nbogus = \"red\"\n")
                .unwrap_err()
                .to_string()
                .starts_with("unknown style `bogus`")
        );
        assert_eq!(
            parse_theme("name = \"x\"\n[styles]\n").unwrap_err().to_string(),
            "missing style `text`"
        );
        assert!(
            Theme::load("nope", None, false)
                .unwrap_err()
                .to_string()
                .starts_with("no theme `nope`")
        );
    }

    #[test]
    fn colours_parse() {
        assert_eq!(parse_color("#ff8000"), Ok(Color::Rgb(255, 128, 0)));
        assert_eq!(parse_color("LightCyan"), Ok(Color::LightCyan));
        assert_eq!(parse_color("dark-gray"), Ok(Color::DarkGray));
        assert_eq!(parse_color("42"), Ok(Color::Indexed(42)));
        assert!(parse_color("#ff80").is_err());
    }
}
