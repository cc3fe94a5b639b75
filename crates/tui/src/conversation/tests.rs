use super::*;
use crate::text::wrap::test_render;
use pretty_assertions::assert_eq;

const WIDTH: u16 = 40;

/// What the whole text renders to in one go, drawn: the reference for streaming.
fn whole(text: &str, theme: &Theme) -> Buffer {
    let mut lines = vec![Line::from(Span::styled("● miniagent …", theme.accent))];
    lines.extend(render_markdown(text, WIDTH, theme));
    lines.push(Line::from(Span::styled(String::new(), Style::default())));
    test_render::buffer(lines, WIDTH)
}

/// The text streamed `piece` characters at a time, rendered after every piece.
fn streamed(text: &str, piece: usize, theme: &Theme) -> Buffer {
    let chars: Vec<char> = text.chars().collect();
    let mut cache = None;
    let mut so_far = String::new();
    for chunk in chars.chunks(piece) {
        so_far.extend(chunk);
        render_streaming(&mut cache, &so_far, WIDTH, theme);
    }
    let lines = cache
        .map(|c| c.all_lines().cloned().collect())
        .unwrap_or_default();
    test_render::buffer(lines, WIDTH)
}

/// A reply of megabytes (a hostile stream, a damaged log replayed) draws its first
/// half megabyte and says how much is left out, streaming or finished, so memory and
/// time stay bounded (found by a fresh-eyes run: 20 MB took 1.5 GB and 5 s).
#[test]
fn megabytes_of_one_message_draw_only_their_start() {
    let theme = Theme::dark();
    let huge = "lorem ipsum dolor sit amet ".repeat(200_000);
    let rows = |lines: &[Line<'static>]| lines.len();
    let (finished, _) = render_entry(
        &Entry::Assistant {
            text: huge.clone(),
            streaming: false,
        },
        80,
        &theme,
        &|_| None,
        None,
    );
    let limit = MAX_DRAWN_BYTES / 70 + 10;
    assert!(rows(&finished) < limit, "{} rows", rows(&finished));
    let said: Vec<String> = finished.iter().rev().take(2).map(ToString::to_string).collect();
    assert!(
        said.iter()
            .any(|line| line.starts_with("⋯ 4.6 MB more of this message is not drawn")),
        "{said:?}"
    );
    let mut cache = None;
    for end in [huge.len() / 2, huge.len()] {
        render_streaming(&mut cache, &huge[..end], 80, &theme);
    }
    let streamed: Vec<Line<'static>> = cache
        .map(|c| c.all_lines().cloned().collect())
        .unwrap_or_default();
    assert!(rows(&streamed) < limit, "{} rows", rows(&streamed));
    assert!(
        streamed
            .iter()
            .any(|line| line.to_string().starts_with("⋯ 4.6 MB more")),
        "the streamed copy says so too"
    );
    let (user, _) = render_entry(&Entry::User(huge), 80, &theme, &|_| None, None);
    assert!(rows(&user) < limit);
}

#[test]
fn a_notice_during_a_reply_does_not_show_the_reply_twice() {
    // Repaired call ids are noticed before the reply's final copy arrives: the final
    // copy replaces what streamed, wherever it is, instead of being added after it.
    let mut conversation = Conversation::default();
    conversation.push_assistant_delta("Repeat ");
    conversation.push_assistant_delta("remembered.");
    conversation.push(Entry::Notice {
        kind: NoticeKind::Info,
        text: "ids repaired".into(),
    });
    conversation.finish_assistant("Repeat remembered.");
    assert_eq!(
        conversation.entries(),
        &[
            Entry::Assistant {
                text: "Repeat remembered.".into(),
                streaming: false
            },
            Entry::Notice {
                kind: NoticeKind::Info,
                text: "ids repaired".into()
            }
        ]
    );
    assert_eq!(conversation.cache.borrow().len(), 2);
    // A retry drops what streamed, also behind a notice; an empty reply leaves nothing.
    conversation.push_assistant_delta("half");
    conversation.push(Entry::Notice {
        kind: NoticeKind::Warning,
        text: "retrying".into(),
    });
    conversation.discard_streaming();
    conversation.push_assistant_delta("  ");
    conversation.finish_assistant(" ");
    assert_eq!(conversation.entries().len(), 3);
    assert!(matches!(
        conversation.entries().last(),
        Some(Entry::Notice { .. })
    ));
}

#[test]
fn a_streamed_reply_renders_like_the_whole_text() {
    let theme = Theme::dark();
    let documents = [
        "One paragraph that is long enough to wrap across a few rows of the pane.\n\nA second one.\n\nAnd a third, *emphasised*.",
        "# Title\n\nSome text.\n\n## Part\n\n- one\n- two\n\n1. first\n2. second\n\n> quoted\n> more\n\nEnd.",
        "Code:\n\n```rust\nfn main() {\n\n    println!(\"hi\");\n}\n```\n\nAfter the code.\n\n~~~\nraw\n\n~~~\n\nDone.",
        "Table:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n<!-- a note\n\nstill a note -->\n\nvisible\n\n---\n\n先看看 CJK text that wraps around the pane edge 在这里。",
    ];
    for text in documents {
        for piece in [1, 3, 8, 1000] {
            assert_eq!(
                streamed(text, piece, &theme),
                whole(text, &theme),
                "{text:?} in pieces of {piece}"
            );
        }
    }
}

#[test]
fn blocks_settle_only_outside_fences_comments_and_indented_continuations() {
    let text = "a\n\nb\n\n```\nx\n\ny\n";
    assert_eq!(
        settled_boundary(text, 0),
        6,
        "the open fence and what is in it stay"
    );
    let closed = "a\n\n```\nx\n\ny\n```\n\nz";
    assert_eq!(settled_boundary(closed, 0), closed.len() - 1);
    let comment = "a\n\n<!-- x\n\ny -->\n\nz";
    assert_eq!(settled_boundary(comment, 0), comment.len() - 1);
    let item = "- a\n\n  more of a\n";
    assert_eq!(
        settled_boundary(item, 0),
        0,
        "an indented line continues its item"
    );
    assert_eq!(settled_boundary("a\n\nb", 0), 3);
    assert_eq!(
        settled_boundary("a\n\nb\n\nc", 3),
        6,
        "looks on from a settled block"
    );
}
