//! Syntax highlighting for code blocks and file views, with syntect.
//!
//! syntect's bundled syntaxes and themes take a noticeable moment to deserialize, so
//! they load on a background thread ([`preload`]) and [`highlight`] returns plain lines
//! until they are ready: the first frame never waits for them.

use std::path::Path;
use std::sync::{Once, OnceLock};

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Style as SyntectStyle, ThemeSet};
use syntect::parsing::{SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

use crate::theme::Theme;

/// Code longer than this is shown plain: highlighting it would stall a frame.
const MAX_LINES: usize = 20_000;
/// A line longer than this (minified code, data) makes the whole block plain, because
/// syntect's regexes can take very long on such lines.
const MAX_LINE_BYTES: usize = 10_000;
const TAB_WIDTH: usize = 4;

/// syntect's bundled syntaxes and themes, once loaded.
struct Sets {
    syntaxes: SyntaxSet,
    themes: ThemeSet,
}

static SETS: OnceLock<Sets> = OnceLock::new();
static PRELOAD: Once = Once::new();

/// Starts loading syntect's syntaxes and themes on a background thread. Calling it again
/// does nothing.
pub fn preload() {
    PRELOAD.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("syntax-preload".to_string())
            .spawn(load_now);
        if let Err(err) = spawned {
            // Without the thread, code simply stays uncoloured.
            tracing::warn!("could not start the syntax loading thread: {err}");
        }
    });
}

/// Loads syntaxes and themes on this thread, or waits for the loading thread to finish.
/// For tools and tests that need the same colours on every render; the workbench never
/// calls it, so no frame waits.
pub fn load_now() {
    SETS.get_or_init(|| Sets {
        syntaxes: SyntaxSet::load_defaults_newlines(),
        themes: ThemeSet::load_defaults(),
    });
}

/// Whether syntaxes and themes are loaded, so [`highlight`] can colour code.
pub fn is_ready() -> bool {
    SETS.get().is_some()
}

/// `code` as one line per source line, tabs expanded to 4-column stops, never wrapped.
///
/// `language` is a fence token or file extension (`rust`, `rs`, `py`, `sh`, …). Colours
/// come from the syntect theme named by `theme.syntax` (foregrounds and bold, italic,
/// underline only: the terminal's background shows through). The lines are plain, in
/// `theme.code`, while syntaxes are still loading, for unknown languages, without a
/// syntect theme, under `NO_COLOR`, and for very long code. Never blocks.
pub fn highlight(code: &str, language: &str, theme: &Theme) -> Vec<Line<'static>> {
    // Loading starts on first use if the workbench did not start it earlier.
    preload();
    let lines: Vec<String> = code
        .lines()
        .map(|line| crate::text::wrap::expand_tabs(line, TAB_WIDTH))
        .collect();
    match coloured(&lines, language, theme) {
        Some(coloured) => coloured,
        None => lines
            .into_iter()
            .map(|line| Line::from(Span::styled(line, theme.code)))
            .collect(),
    }
}

fn coloured(lines: &[String], language: &str, theme: &Theme) -> Option<Vec<Line<'static>>> {
    if !theme.colored || theme.syntax.is_empty() || lines.is_empty() || lines.len() > MAX_LINES {
        return None;
    }
    if lines.iter().any(|line| line.len() > MAX_LINE_BYTES) {
        return None;
    }
    let sets = SETS.get()?;
    let syntax = find_syntax(&sets.syntaxes, language)?;
    let syntect_theme = sets.themes.themes.get(&theme.syntax)?;
    let mut highlighter = HighlightLines::new(syntax, syntect_theme);
    // The newline-terminated syntaxes expect each line to end with `\n`.
    let mut text = lines.join("\n");
    text.push('\n');
    let mut out = Vec::with_capacity(lines.len());
    for line in LinesWithEndings::from(&text) {
        let pieces = highlighter.highlight_line(line, &sets.syntaxes).ok()?;
        let spans = pieces
            .into_iter()
            .filter_map(|(style, piece)| {
                let piece = piece.trim_end_matches(['\n', '\r']);
                (!piece.is_empty()).then(|| Span::styled(piece.to_string(), to_style(style)))
            })
            .collect::<Vec<_>>();
        out.push(Line::from(spans));
    }
    Some(out)
}

fn find_syntax<'a>(syntaxes: &'a SyntaxSet, language: &str) -> Option<&'a SyntaxReference> {
    let token = language.trim().trim_start_matches('.').to_ascii_lowercase();
    if token.is_empty() {
        return None;
    }
    // Common fence tokens that are neither an extension nor a syntax name in the
    // bundled set.
    let alias = match token.as_str() {
        "shell" | "console" | "shellsession" | "zsh" | "ksh" => "sh",
        "py3" | "python3" => "py",
        "javascript" | "node" | "jsx" | "mjs" | "cjs" => "js",
        "c++" | "hpp" | "cxx" => "cpp",
        "golang" => "go",
        "jsonc" | "json5" => "json",
        "yml" => "yaml",
        "ruby" => "rb",
        "objc" | "objective-c" => "m",
        "patch" => "diff",
        "make" | "mk" => "makefile",
        other => other,
    };
    syntaxes.find_syntax_by_token(alias)
}

fn to_style(style: SyntectStyle) -> Style {
    let mut out = Style::default();
    // A fully transparent foreground means "use the default", as in the theme's own text.
    if style.foreground.a > 0 {
        out = out.fg(Color::Rgb(
            style.foreground.r,
            style.foreground.g,
            style.foreground.b,
        ));
    }
    let modifiers = [
        (FontStyle::BOLD, Modifier::BOLD),
        (FontStyle::ITALIC, Modifier::ITALIC),
        (FontStyle::UNDERLINE, Modifier::UNDERLINED),
    ];
    for (font, modifier) in modifiers {
        if style.font_style.contains(font) {
            out = out.add_modifier(modifier);
        }
    }
    out
}

/// The language token for a file: a name for well-known extensionless files
/// (`Makefile`, `Dockerfile`, …), else the extension in lower case, else empty.
pub fn language_for_path(path: &Path) -> String {
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or_default();
    let by_name = match name {
        "Makefile" | "makefile" | "GNUmakefile" => Some("makefile"),
        "Dockerfile" | "Containerfile" => Some("dockerfile"),
        "Cargo.lock" | "poetry.lock" | "uv.lock" | "Pipfile" => Some("toml"),
        "CMakeLists.txt" => Some("cmake"),
        "Gemfile" | "Rakefile" | "Vagrantfile" | "Podfile" | "Brewfile" => Some("rb"),
        "Jenkinsfile" => Some("groovy"),
        "PKGBUILD" | "APKBUILD" | ".bashrc" | ".bash_profile" | ".profile" | ".zshrc" | ".zprofile"
        | ".envrc" => Some("sh"),
        "go.mod" | "go.sum" => Some("go"),
        _ => None,
    };
    if let Some(language) = by_name {
        return language.to_string();
    }
    if name.starts_with("Dockerfile.") {
        return "dockerfile".to_string();
    }
    path.extension()
        .and_then(|ext| ext.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn wait_until_ready() {
        load_now();
        assert!(is_ready());
    }

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines
            .iter()
            .map(|line| line.spans.iter().map(|span| span.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn plain_lines_in_code_style_when_colour_is_off() {
        wait_until_ready();
        let code = "fn main() {\n\tprintln!(\"hi\");\n}\n";
        let theme = Theme::monochrome();
        let expected = vec![
            Line::from(Span::styled("fn main() {", theme.code)),
            Line::from(Span::styled("    println!(\"hi\");", theme.code)),
            Line::from(Span::styled("}", theme.code)),
        ];
        assert_eq!(highlight(code, "rust", &theme), expected);
        let mut no_syntax = Theme::dark();
        no_syntax.syntax.clear();
        assert_eq!(
            highlight("x = 1", "py", &no_syntax),
            vec![Line::from(Span::styled("x = 1", no_syntax.code))]
        );
    }

    #[test]
    fn unknown_languages_and_huge_inputs_stay_plain() {
        wait_until_ready();
        let theme = Theme::dark();
        let plain = |text: &str| Line::from(Span::styled(text.to_string(), theme.code));
        assert_eq!(
            highlight("a b\nc", "no-such-language", &theme),
            vec![plain("a b"), plain("c")]
        );
        assert_eq!(highlight("a b", "", &theme), vec![plain("a b")]);
        let long_line = "x".repeat(MAX_LINE_BYTES + 1);
        assert_eq!(highlight(&long_line, "rs", &theme), vec![plain(&long_line)]);
        let many = "let x = 1;\n".repeat(MAX_LINES + 1);
        let lines = highlight(&many, "rs", &theme);
        assert_eq!(lines.len(), MAX_LINES + 1);
        assert_eq!(lines[0], plain("let x = 1;"));
    }

    #[test]
    fn colours_rust_with_rgb_foregrounds_and_no_backgrounds() {
        wait_until_ready();
        let theme = Theme::dark();
        let lines = highlight("fn main() {\n\tlet x = \"hi\"; // note\n}", "rs", &theme);
        assert_eq!(
            texts(&lines),
            vec!["fn main() {", "    let x = \"hi\"; // note", "}"]
        );
        let spans: Vec<&Span> = lines.iter().flat_map(|line| &line.spans).collect();
        assert!(spans.iter().all(|span| span.style.bg.is_none()));
        assert!(
            spans
                .iter()
                .all(|span| matches!(span.style.fg, Some(Color::Rgb(..))))
        );
        let colour_of = |text: &str| {
            spans
                .iter()
                .find(|span| span.content == text)
                .and_then(|span| span.style.fg)
        };
        // base16-ocean.dark: keywords purple, strings green, comments grey.
        assert_eq!(colour_of("fn"), Some(Color::Rgb(0xb4, 0x8e, 0xad)));
        assert_eq!(colour_of("hi"), Some(Color::Rgb(0xa3, 0xbe, 0x8c)));
        assert_eq!(colour_of(" note"), Some(Color::Rgb(0x65, 0x73, 0x7e)));
    }

    #[test]
    fn fence_tokens_and_extensions_find_syntaxes() {
        wait_until_ready();
        let Some(sets) = SETS.get() else {
            panic!("not loaded")
        };
        let found = |token: &str| find_syntax(&sets.syntaxes, token).map(|syntax| syntax.name.clone());
        let tokens = [
            "rust", "rs", "py", "python", "sh", "bash", "shell", "js", "json", "yaml", "c++", "go", "diff",
        ];
        let names: Vec<Option<String>> = tokens.iter().map(|token| found(token)).collect();
        let expected = [
            "Rust",
            "Rust",
            "Python",
            "Python",
            "Bourne Again Shell (bash)",
            "Bourne Again Shell (bash)",
            "Bourne Again Shell (bash)",
            "JavaScript",
            "JSON",
            "YAML",
            "C++",
            "Go",
            "Diff",
        ];
        assert_eq!(
            names,
            expected
                .iter()
                .map(|name| Some(name.to_string()))
                .collect::<Vec<_>>()
        );
        assert_eq!(found("toml"), None);
    }

    #[test]
    fn preload_is_idempotent() {
        preload();
        preload();
        wait_until_ready();
        preload();
        assert!(is_ready());
    }

    #[test]
    fn languages_for_paths() {
        let cases = [
            ("src/main.rs", "rs"),
            ("a/b/Makefile", "makefile"),
            ("Dockerfile", "dockerfile"),
            ("Dockerfile.dev", "dockerfile"),
            ("Cargo.lock", "toml"),
            ("Cargo.toml", "toml"),
            ("script.PY", "py"),
            ("README", ""),
            (".bashrc", "sh"),
            ("CMakeLists.txt", "cmake"),
        ];
        let found: Vec<(&str, String)> = cases
            .iter()
            .map(|(path, _)| (*path, language_for_path(Path::new(path))))
            .collect();
        let expected: Vec<(&str, String)> = cases
            .iter()
            .map(|(path, lang)| (*path, lang.to_string()))
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn tabs_expand_to_four_column_stops() {
        assert_eq!(crate::text::wrap::expand_tabs("\tx", TAB_WIDTH), "    x");
        assert_eq!(crate::text::wrap::expand_tabs("ab\tx", TAB_WIDTH), "ab  x");
        assert_eq!(crate::text::wrap::expand_tabs("你\tx", TAB_WIDTH), "你  x");
        assert_eq!(crate::text::wrap::expand_tabs("abcd\t", TAB_WIDTH), "abcd    ");
    }
}
