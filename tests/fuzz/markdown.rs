//! Target 3: markdown rendering. No rendered line is wider than the width, measured the
//! way ratatui paints it, and rendering is repeatable.

use miniagent_tui::text::highlight;
use miniagent_tui::text::markdown::render_markdown;
use miniagent_tui::text::wrap::display_width;
use miniagent_tui::theme::Theme;
use pretty_assertions::assert_eq;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::fuzz;
use super::mutate::Mutator;

const MARKDOWN_SEEDS: &[&str] = &[
    "# Release notes 发布说明\n\nSome *emphasis*, **strong**, ~~struck~~ and `inline code`, with a [link](https://example.com/docs) and <https://example.com>.\n\n- first item with enough words to wrap onto a second line under the text\n- second item\n  - nested item\n    1. ordered inside\n    2. and another that is long enough to wrap around\n- [ ] a task to do\n- [x] a task that is done\n\n> A block quote that goes on long enough to wrap onto more lines.\n>\n> > And a nested quote with 中文字符在这里换行。\n\n---\n\n```rust\nfn main() {\n\tprintln!(\"hello, world! this line is long enough to be wrapped by the renderer\");\n}\n```\n\n    indented code block\n\n| Name | Kind | Notes |\n|:-----|:----:|------:|\n| wrap | fn | splits lines |\n| `Theme` | struct | styles 样式 |\n\nText with a footnote[^1].\n\n[^1]: The footnote, 脚注.\n",
    "这个项目是一个**终端代理**。它包含：对话窗格、工具时间线、文件树和输入框。每一行都必须按显示宽度换行，而不是按字节。\n\n| 模块 | 行数 | 说明 |\n|---|---|---|\n| agent | 812 | 循环与历史 |\n| tui | 2400 | 窗格、覆盖层、主题 |\n",
    "Tabs\tin\ttext and\t\tcode:\n\n```\n\tindented\twith\ttabs\n```\n\nANSI \u{1b}[31mred\u{1b}[0m and \u{1b}]8;;https://x.y\u{7}a hyperlink\u{1b}]8;;\u{7}, a bell \u{7}, a carriage\rreturn.\n",
    "> - quoted list\n>   > quoted quote in a list\n>   > | a | b |\n>   > |---|---|\n>   > | 1 | 2 |\n> 1. ordered\n>    ```\n>    code in a quote in a list\n>    ```\n",
    "Emoji: 👩‍👩‍👧 🇯🇵 e\u{301} 😀😀😀😀😀😀😀😀😀😀😀😀, zero width\u{200b}space, a verylongwordwithoutanyspacesthatmustbebrokenbetweencharacters, https://example.com/a/very/long/url/that/does/not/fit/anywhere/at/all\n\n<!-- a comment\nover lines -->\n\n<div>html block</div>\n\nLine one  \nhard break\\\nand another.\n",
    "| only | header |\n|---|---|\n\n|a|\n|-|\n|very long cell content that must be cut with an ellipsis when the table is narrow|\n\n1) one\n2) two\n\n* * *\n\n#### heading four ####\n\nSetext\n======\n",
];

const MARKDOWN_TOKENS: &[&[u8]] = &[
    b"> ",
    b"- ",
    b"* ",
    b"1. ",
    b"- [ ] ",
    b"```",
    b"```rust\n",
    b"~~~",
    b"    ",
    b"| a | b |\n|---|---|\n| c | d |\n",
    b"|---|",
    b"# ",
    b"[^1]",
    b"[^1]: note\n",
    b"[x](http://y)",
    b"<http://z>",
    b"<!--",
    b"-->",
    b"***",
    b"~~",
    b"_",
    b"  \n",
    b"\\\n",
    b"<br>",
    b"&amp;",
    b"&#0;",
];

/// The columns ratatui paints for `line`.
fn painted_width(buffer: &mut Buffer, line: &Line<'_>) -> usize {
    let (x, _) = buffer.set_line(0, 0, line, buffer.area.width);
    usize::from(x)
}

#[test]
fn markdown_lines_fit_the_width() {
    let seeds: Vec<Vec<u8>> = MARKDOWN_SEEDS
        .iter()
        .map(|seed| seed.as_bytes().to_vec())
        .collect();
    let mutator = Mutator {
        seeds: &seeds,
        dictionary: MARKDOWN_TOKENS,
        json_eighths: 0,
    };
    // Code blocks are plain until syntect's sets load on a background thread, so two
    // renders of one input differ if the load finishes between them: load them first.
    highlight::load_now();
    let themes = [Theme::dark(), Theme::monochrome()];
    let mut buffer = Buffer::empty(Rect::new(0, 0, 512, 1));
    fuzz("markdown_lines_fit_the_width", 1000, |rng, input| {
        *input = mutator.mutated(rng);
        let source = String::from_utf8_lossy(input);
        let theme = &themes[rng.usize(..2)];
        let widths = [1, 2, 3, 5, 8, 13, 40, 80, rng.u16(1..200)];
        for _ in 0..2 {
            let width = widths[rng.usize(..widths.len())];
            let lines = render_markdown(&source, width, theme);
            for line in &lines {
                let text: String = line.spans.iter().map(|span| span.content.as_ref()).collect();
                let painted = painted_width(&mut buffer, line);
                assert!(
                    painted <= usize::from(width) && display_width(&text) <= usize::from(width),
                    "a line of {painted} columns (measured {}) at width {width}: {text:?}",
                    display_width(&text)
                );
            }
            if rng.u8(..4) == 0 {
                assert_eq!(
                    render_markdown(&source, width, theme),
                    lines,
                    "rendering is repeatable"
                );
            }
        }
    });
}
