//! Tests of the markdown renderer.

use super::table::fit_columns;
use super::*;
use crate::text::wrap::test_render;
use pretty_assertions::assert_eq;

fn texts(lines: &[Line<'_>]) -> Vec<String> {
    lines
        .iter()
        .map(|line| line.spans.iter().map(|span| span.content.as_ref()).collect())
        .collect()
}

fn plain(source: &str, width: u16) -> Vec<String> {
    texts(&render_markdown(source, width, &Theme::monochrome()))
}

fn picture(source: &str, width: u16) -> String {
    test_render::text(render_markdown(source, width, &Theme::dark()), width)
}

const EVERYTHING: &str = r#"# Release notes

Some *emphasis*, **strong**, ~~struck~~ and `inline code`, with a [link](https://example.com/docs) and <https://example.com>.

## Lists

- first item with enough words to wrap onto a second line under the text
- second item
  - nested item
    1. ordered inside
    2. and another that is long enough to wrap around
- [ ] a task to do
- [x] a task that is done

3. three
4. four

> A block quote that goes on long enough to wrap onto more lines.
>
> > And a nested quote.

---

```rust
fn main() {
	println!("hello, world! this line is long enough to be wrapped by the renderer");
}
```

    indented code block

| Name | Kind | Notes |
|:-----|:----:|------:|
| wrap | fn | splits lines |
| `Theme` | struct | styles |

Text with a footnote[^1].

[^1]: The footnote.
"#;

#[test]
fn every_construct_at_40_columns() {
    insta::assert_snapshot!(picture(EVERYTHING, 40));
}

#[test]
fn every_construct_at_80_columns() {
    insta::assert_snapshot!(picture(EVERYTHING, 80));
}

#[test]
fn cjk_paragraph_and_list_at_a_narrow_width() {
    let source = "你好，世界。这是一个测试。Mixed English 和中文。\n\n- 你好，世界。这是一个测试。\n- 第二项：包含 `代码` 和**粗体**。\n";
    insta::assert_snapshot!(picture(source, 16));
}

const WIDE_TABLE: &str = "\
| Column one | Column two | Third | Fourth column | Fifth | Sixth and last |
|---|---|---|---|---|---|
| a fairly long cell value | short | 12345 | another long piece of text | x | the final cell, longest of all |
| 你好世界 | b | 6 | d | e | f |
";

#[test]
fn wide_table_at_40_columns() {
    insta::assert_snapshot!(picture(WIDE_TABLE, 40));
}

#[test]
fn wide_table_at_100_columns() {
    insta::assert_snapshot!(picture(WIDE_TABLE, 100));
}

#[test]
fn styles_follow_the_theme() {
    let theme = Theme::dark();
    let lines = render_markdown("# Title\n\nA *b* **c** `d` [e](http://f)", 80, &theme);
    let expected = vec![
        Line::from(Span::styled("# Title", theme.text.patch(theme.heading))),
        Line::default(),
        Line::from(vec![
            Span::styled("A ", theme.text),
            Span::styled("b", theme.text.patch(theme.emphasis)),
            Span::styled(" ", theme.text),
            Span::styled("c", theme.text.patch(theme.strong)),
            Span::styled(" ", theme.text),
            Span::styled("d", theme.text.patch(theme.code)),
            Span::styled(" ", theme.text),
            Span::styled("e", theme.text.patch(theme.link)),
            Span::styled(" (http://f)", theme.dim),
        ]),
    ];
    assert_eq!(lines, expected);
}

#[test]
fn monochrome_output_has_no_colours() {
    let lines = render_markdown(EVERYTHING, 60, &Theme::monochrome());
    let coloured: Vec<&Span> = lines
        .iter()
        .flat_map(|line| &line.spans)
        .filter(|span| span.style.fg.is_some() || span.style.bg.is_some())
        .collect();
    assert_eq!(coloured, Vec::<&Span>::new());
}

#[test]
fn code_blocks_are_highlighted_when_syntaxes_are_loaded() {
    highlight::load_now();
    let theme = Theme::dark();
    let lines = render_markdown("```rust\nfn main() {}\n```", 20, &theme);
    assert_eq!(texts(&lines), vec!["  fn main() {}      "]);
    let keyword = lines[0]
        .spans
        .iter()
        .find(|span| span.content == "fn")
        .map(|span| span.style);
    let expected = theme.code_block.fg(ratatui::style::Color::Rgb(0xb4, 0x8e, 0xad));
    assert_eq!(keyword, Some(expected));
}

#[test]
fn an_unclosed_fence_renders_as_code_while_streaming() {
    let source = "Here is the fix:\n\n```python\ndef main():\n    print(\"hi\")";
    assert_eq!(
        plain(source, 30),
        vec![
            "Here is the fix:",
            "",
            "  def main():                 ",
            "      print(\"hi\")             "
        ]
    );
    assert_eq!(plain("```", 10), Vec::<String>::new());
    assert_eq!(plain("text\n\n```rust\n", 10), vec!["text"]);
}

#[test]
fn lists_hang_their_continuation_lines() {
    let source = "1. one two three four five\n2. six\n   - seven eight nine ten\n";
    assert_eq!(
        plain(source, 16),
        vec![
            "1. one two three",
            "   four five",
            "2. six",
            "   ◦ seven eight",
            "     nine ten"
        ]
    );
    assert_eq!(
        plain("- [ ] task that wraps here", 14),
        vec!["• [ ] task", "      that", "      wraps", "      here"]
    );
    assert_eq!(plain("-\n- b", 10), vec!["• ", "• b"]);
}

#[test]
fn loose_lists_separate_items_and_lists_separate_from_paragraphs() {
    assert_eq!(
        plain("Intro:\n- a\n- b\n\nAfter.", 20),
        vec!["Intro:", "", "• a", "• b", "", "After."]
    );
    assert_eq!(plain("- a\n\n- b\n", 20), vec!["• a", "", "• b"]);
    assert_eq!(plain("- a\n  - b\n- c", 20), vec!["• a", "  ◦ b", "• c"]);
}

#[test]
fn quotes_bar_every_line() {
    assert_eq!(
        plain("> one two three four\n>\n> five", 12),
        vec!["│ one two", "│ three four", "│", "│ five"]
    );
    assert_eq!(
        plain("- item\n\n  > quoted", 20),
        vec!["• item", "", "  │ quoted"]
    );
}

#[test]
fn links_show_their_url_only_when_it_differs() {
    assert_eq!(
        plain("[docs](https://d.test) <https://a.test> <me@x.test>", 80),
        vec!["docs (https://d.test) https://a.test me@x.test"]
    );
    assert_eq!(plain("![a cat](cat.png)", 80), vec!["[image: a cat] (cat.png)"]);
}

#[test]
fn tables_fit_and_cut_cells() {
    let source = "| a | b |\n|---|--:|\n| long cell text | 1 |\n| x | 22 |\n";
    assert_eq!(
        plain(source, 80),
        vec![
            "a              │  b",
            "───────────────┼───",
            "long cell text │  1",
            "x              │ 22"
        ]
    );
    // Too narrow for the long cell: it wraps inside its column, and the rows are ruled
    // apart, so nothing is cut.
    assert_eq!(
        plain(source, 12),
        vec![
            "a       │  b",
            "────────┼───",
            "long    │  1",
            "cell    │",
            "text    │",
            "────────┼───",
            "x       │ 22"
        ]
    );
    // Too narrow for every column to get a few characters: a list, header: value.
    assert_eq!(
        plain(
            "| name | size | kind |\n|---|---|---|\n| wrap.rs | 762 | source |\n| 你好 | 2 | 文本 |\n",
            14
        ),
        vec![
            "name: wrap.rs",
            "size: 762",
            "kind: source",
            "────────────",
            "name: 你好",
            "size: 2",
            "kind: 文本"
        ]
    );
}

/// A wide table like the ones a model writes, with CJK cells: at 80, 120 and 150 columns
/// every cell is there whole (its words, in order, wrapped inside its column), no line
/// is wider than the room, and the pictures are snapshots.
const CJK_TABLE: &str = "\
| 模块 | 职责 | Owner | 状态 | Notes |
|---|---|---|:---:|---|
| agent | 运行模型循环，执行工具调用，并在上下文过长时压缩历史记录 | core team | 稳定 | the loop and its history, summarised on long tasks |
| tui | 全屏终端工作台：对话、文件树、思考过程和工具时间线 | ui team | 开发中 | panes, overlays and themes; tested in tmux |
| mcp | 连接用户配置的 MCP 服务器并把它们的工具交给模型 | tools | 稳定 | servers start only in trusted workspaces |
";

#[test]
fn a_wide_cjk_table_wraps_its_cells_at_80_120_and_150_columns() {
    for width in [80u16, 120, 150] {
        let lines = plain(CJK_TABLE, width);
        for line in &lines {
            assert!(display_width(line) <= usize::from(width), "{line:?} at {width}");
            assert!(!line.contains('…'), "a cell was cut at {width}: {line:?}");
        }
        // Each column's text, read down the rows, is every cell of it whole.
        let column_text = |column: usize| -> String {
            lines
                .iter()
                .filter(|line| !line.starts_with('─'))
                .map(|line| {
                    line.split(" │ ")
                        .nth(column)
                        .unwrap_or_default()
                        .trim()
                        .to_string()
                })
                .collect::<Vec<_>>()
                .join("")
        };
        let squeezed = |text: &str| text.replace(' ', "");
        for (column, cell) in [
            (1, "运行模型循环，执行工具调用，并在上下文过长时压缩历史记录"),
            (1, "全屏终端工作台：对话、文件树、思考过程和工具时间线"),
            (4, "the loop and its history, summarised on long tasks"),
            (4, "servers start only in trusted workspaces"),
        ] {
            assert!(
                squeezed(&column_text(column)).contains(&squeezed(cell)),
                "{cell} at {width}:\n{}",
                lines.join("\n")
            );
        }
    }
    insta::assert_snapshot!("cjk_table_at_80_columns", picture(CJK_TABLE, 80));
    insta::assert_snapshot!("cjk_table_at_120_columns", picture(CJK_TABLE, 120));
    insta::assert_snapshot!("cjk_table_at_150_columns", picture(CJK_TABLE, 150));
    // Narrower than its columns can take: the list form, every cell still whole.
    insta::assert_snapshot!("cjk_table_at_30_columns", picture(CJK_TABLE, 30));
}

#[test]
fn fit_columns_shrinks_in_proportion() {
    assert_eq!(fit_columns(&[5, 10], 20), vec![5, 10]);
    // An even share is 7: the 2-wide column keeps its width, the others shrink in
    // proportion to how far they exceed 7.
    assert_eq!(fit_columns(&[10, 30, 2], 22), vec![7, 13, 2]);
    assert_eq!(
        fit_columns(&[24, 10, 5, 26, 5, 30], 85),
        vec![20, 10, 5, 21, 5, 24]
    );
    // A column gets at least a few characters (or its natural width) when the budget
    // allows; the table becomes a list before this is cut at the edge.
    assert_eq!(fit_columns(&[10, 10, 2], 16), vec![7, 7, 2]);
    assert_eq!(fit_columns(&[10, 10], 4), vec![6, 6]);
    assert_eq!(fit_columns(&[], 4), Vec::<usize>::new());
}

#[test]
fn html_and_footnotes_show_as_text() {
    assert_eq!(
        plain("<div>\nhi\n</div>\n\n<!-- hidden -->\n\nx<br>y", 20),
        vec!["<div>", "hi", "</div>", "", "x<br>y"]
    );
}

/// Inputs that have broken renderers before: odd nesting, unclosed constructs,
/// huge and deeply nested documents.
#[test]
fn odd_inputs_never_panic_and_never_overflow() {
    let deep_list: String = (0..200)
        .map(|depth| format!("{}- level {depth}\n", "  ".repeat(depth)))
        .collect();
    let deep_quote = format!("{} deep", ">".repeat(500));
    let big = "Lorem ipsum dolor sit amet, 你好世界 `code` **bold** [link](http://x).\n\n".repeat(14_000);
    let inputs = vec![
        String::new(),
        "```".to_string(),
        "```rust\nunclosed".to_string(),
        "~~~\n~~~~".to_string(),
        "| a |\n|---|\n| b | c | d |".to_string(),
        "| a | b |\n|---|---|".to_string(),
        "|||\n|-|-|\n|||".to_string(),
        "[^1]\n\n[^1]: note\n[^1]: again".to_string(),
        "<script>alert(1)</script>".to_string(),
        "* * *\n- - -\n___".to_string(),
        "> - [ ] > quote in a task\n>> 1. x".to_string(),
        "[unclosed link](".to_string(),
        "**unclosed *emphasis".to_string(),
        "\t\ttabs\tinside".to_string(),
        "\u{0}\u{1b}[31mcontrol\u{7}".to_string(),
        "1000000000000000000000. huge number".to_string(),
        "18446744073709551615. max number\n18446744073709551615. again".to_string(),
        "# \n##\n###### six\n####### seven".to_string(),
        "a\\\nb  \nc".to_string(),
        "你好".repeat(300),
        "x".repeat(5000),
        deep_list,
        deep_quote,
        "- ".repeat(300),
        "[".repeat(10_000),
        "> a\n>\n> <!-- c -->\n\n- b\n\n  <!-- d\n  -->\n-".to_string(),
        // Tables: a thousand columns, a 20 000-character word, CJK and flags in cells, a
        // table inside a quote inside a list.
        format!(
            "{}\n{}\n{}",
            "|h".repeat(1000) + "|",
            "|-".repeat(1000) + "|",
            "|你🇯🇵".repeat(1000) + "|"
        ),
        format!(
            "| a | b |\n|---|---|\n| {} | 你好世界你好世界 |",
            "w".repeat(20_000)
        ),
        "- > | 表头 | b |\n  > |---|--:|\n  > | 很长的单元格内容很长的单元格内容 | 🇯🇵🇯🇵🇯🇵 |".to_string(),
    ];
    let check = |input: &str, width: u16| {
        for line in render_markdown(input, width, &Theme::dark()) {
            assert!(
                spans_width(&line.spans) <= usize::from(width.max(1)),
                "{input:.40?} at {width}: {line:?}"
            );
        }
    };
    for input in &inputs {
        for width in [0u16, 1, 2, 5, 13, 40, 150] {
            check(input, width);
        }
    }
    // A megabyte once is enough to show it renders; speed belongs in benchmarks.
    check(&big, 40);
}

#[test]
fn blank_lines_in_lists_carry_no_indentation_and_fit_any_width() {
    // Found by tests/fuzz: at one column, the blank line between a loose item's
    // paragraphs kept the item's two-space indentation.
    let source = "- [x] m\n\n  k\n\n> a\n>\n> b\n";
    assert_eq!(
        plain(source, 20),
        ["• [x] m", "", "      k", "", "│ a", "│", "│ b"]
    );
    for width in 1..=4 {
        for line in plain(source, width) {
            assert!(
                crate::text::wrap::display_width(&line) <= usize::from(width),
                "{line:?} at {width}"
            );
        }
    }
}
