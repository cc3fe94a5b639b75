//! One frame of the workbench with a 10,000-message transcript at 160×48, and one
//! frame while five panes change at once. Budget: 2 ms per frame on the 2-core machine.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails by panicking.

use std::time::{Duration, SystemTime};

use criterion::{Criterion, criterion_group, criterion_main};
use miniagent_core::config::ApprovalMode;
use miniagent_protocol::{Event, StopReason};
use miniagent_tui::app::App;
use miniagent_tui::render;
use miniagent_tui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

fn transcript_app(messages: usize) -> App {
    let workspace = std::env::temp_dir().join(format!("miniagent-bench-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&workspace);
    let start = SystemTime::now() + Duration::from_secs(3600);
    let mut app = App::new(Theme::dark(), workspace, ApprovalMode::Ask, 50, start);
    for n in 0..messages / 2 {
        app.on_agent_event(Event::TurnStarted {
            text: format!("Question {n}: what does module {n} do, and is it tested?"),
        });
        app.on_agent_event(Event::AssistantMessage {
            thinking: String::new(),
            text: format!(
                "Module **{n}** parses the input and *reports* errors.\n\n- it has `{n}` tests\n- it is used by `main`\n\n```rust\nfn f{n}() -> u32 {{ {n} }}\n```"
            ),
            tool_calls: vec![],
            stop_reason: StopReason::EndTurn,
        });
        app.on_agent_event(Event::TurnComplete { text: String::new() });
    }
    app
}

fn bench_render(c: &mut Criterion) {
    let app = transcript_app(10_000);
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).expect("test backend");
    // The first frame wraps every message once; later frames reuse that.
    terminal.draw(|frame| render::draw(frame, &app)).expect("draw");
    c.bench_function("frame_10000_messages_160x48", |b| {
        b.iter(|| {
            terminal.draw(|frame| render::draw(frame, &app)).expect("draw");
        })
    });

    let mut busy = transcript_app(10_000);
    terminal.draw(|frame| render::draw(frame, &busy)).expect("draw");
    busy.on_agent_event(Event::TurnStarted { text: "go".into() });
    busy.on_agent_event(Event::ToolCallRequested {
        id: "t".into(),
        name: "bash".into(),
        arguments: json!({"command": "make"}),
        summary: "make".into(),
        kind: Default::default(),
        locations: Vec::new(),
    });
    busy.on_agent_event(Event::ToolCallStarted {
        id: "t".into(),
        name: "bash".into(),
    });
    let mut n = 0u64;
    c.bench_function("frame_five_panes_updating_160x48", |b| {
        b.iter(|| {
            n += 1;
            // Text, thinking, tool output, the token gauge and the file tree all change.
            // Prose comes in paragraphs and thinking in lines, so the streamed text
            // keeps growing without any one paragraph growing without end.
            busy.on_agent_event(Event::TextDelta {
                delta: format!("word{n}{}", if n.is_multiple_of(60) { "\n\n" } else { " " }),
            });
            busy.on_agent_event(Event::ThinkingDelta {
                delta: format!("thought{n}{}", if n.is_multiple_of(25) { "\n" } else { " " }),
            });
            busy.on_agent_event(Event::ToolOutputDelta {
                id: "t".into(),
                delta: format!("line {n}\n"),
            });
            busy.on_agent_event(Event::TokenUsage {
                context_tokens: 1000 + n,
                estimated: true,
                token_limit: 80_000,
                context_window: 200_000,
                input_tokens: 0,
                output_tokens: 0,
                total_input_tokens: n,
                total_output_tokens: n,
                cache_read_tokens: 0,
                cache_write_tokens: 0,
                total_cache_read_tokens: 0,
                total_cache_write_tokens: 0,
                cost_usd: None,
            });
            busy.refresh_tree();
            terminal.draw(|frame| render::draw(frame, &busy)).expect("draw");
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50).measurement_time(Duration::from_secs(5));
    targets = bench_render
}
criterion_main!(benches);
