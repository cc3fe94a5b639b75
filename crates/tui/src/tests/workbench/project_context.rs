//! Project context in the workbench: the instruction files named in the first lines,
//! `/context`, `/init`, and the prompt commands the agent offers (completion, help,
//! running one).

use super::*;
use miniagent_protocol::{CommandInfo, ContextReport, InstructionFileInfo, Op};
use pretty_assertions::assert_eq;

fn commands_loaded(app: &mut Bench) {
    app.on_agent_event(Event::CommandsLoaded {
        commands: vec![
            CommandInfo {
                name: "git:commit".into(),
                description: "Commit the staged work with a message".into(),
                argument_hint: Some("[message]".into()),
                source: "user".into(),
            },
            CommandInfo {
                name: "git:push".into(),
                description: "Push the branch \u{1b}[31mnow".into(),
                argument_hint: None,
                source: "workspace".into(),
            },
            CommandInfo {
                name: "help".into(),
                description: "shadowed by the built-in".into(),
                argument_hint: None,
                source: "workspace".into(),
            },
            CommandInfo {
                name: "init".into(),
                description: "Ask the model to write a starting AGENTS.md for this workspace".into(),
                argument_hint: Some("[what to stress]".into()),
                source: "built-in".into(),
            },
        ],
        warnings: vec!["/w/.miniagent/commands/bad name.md: not offered".into()],
    });
}

/// `/git:` completes the agent's prompt commands (a built-in's name is not offered
/// twice); Tab takes the highlighted one and leaves room for its arguments; Enter sends
/// `Op::RunCommand` with the whole rest of the line.
#[test]
fn prompt_commands_complete_and_run() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    commands_loaded(&mut app);
    type_text(&mut app, "/git:");
    assert_screen!("prompt_commands_popup_80x24", screen(&mut app, 80, 24));
    assert_screen!("prompt_commands_popup_160x48", screen(&mut app, 160, 48));
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.input.text(), "/git:commit ");
    type_text(&mut app, "\"fix the parser\" now");
    app.sent.clear();
    app.on_key(key(KeyCode::Enter));
    assert_eq!(
        app.sent,
        vec![Op::RunCommand {
            name: "git:commit".into(),
            arguments: "\"fix the parser\" now".into()
        }]
    );
    // A built-in wins over a prompt command of its name.
    app.sent.clear();
    app.submit("/help".into());
    assert_eq!(app.sent, Vec::<Op>::new());
    // `/init` is the agent's: its arguments go whole.
    app.submit("/init stress the tests".into());
    assert_eq!(
        app.sent,
        vec![Op::RunCommand {
            name: "init".into(),
            arguments: "stress the tests".into()
        }]
    );
}

/// With every built-in and the prompt commands the list is taller than the room above
/// the input on a short screen: the highlighted row stays in sight.
#[test]
fn the_highlighted_completion_stays_in_sight() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    commands_loaded(&mut app);
    type_text(&mut app, "/");
    // Up from the first wraps to the last: the workspace's `/git:push`.
    app.on_key(key(KeyCode::Up));
    let shown = screen(&mut app, 80, 16);
    assert!(shown.contains("/git:push"), "{shown}");
    assert!(!shown.contains("/help "), "{shown}");
}

/// The instruction files are named in the conversation's first lines, and the help
/// lists the prompt commands with where each comes from.
#[test]
fn instruction_files_and_prompt_commands_are_shown() {
    let workspace = TempDir::new();
    let mut app = support::bare_app(&workspace);
    let mut configured = support::configured("/home/dev/project", None);
    if let Event::SessionConfigured {
        instruction_files, ..
    } = &mut configured
    {
        *instruction_files = vec![
            InstructionFileInfo {
                path: "/home/dev/.config/miniagent/AGENTS.md".into(),
                bytes: 120,
                truncated: false,
                user: true,
            },
            InstructionFileInfo {
                path: "/home/dev/project/CLAUDE.md".into(),
                bytes: 32768,
                truncated: true,
                user: false,
            },
        ];
    }
    app.on_agent_event(configured);
    commands_loaded(&mut app);
    assert_screen!("instruction_files_80x24", screen(&mut app, 80, 24));
    let sections = crate::help::help_sections(&app, false);
    let prompt = sections
        .iter()
        .find(|(title, _)| title.starts_with("Prompt commands"))
        .map(|(_, rows)| {
            rows.iter()
                .map(|(name, help)| (name.as_str(), help.as_ref()))
                .collect::<Vec<_>>()
        });
    assert_eq!(
        prompt,
        Some(vec![
            (
                "/git:commit [message]",
                "Commit the staged work with a message (user)"
            ),
            ("/git:push", "Push the branch \u{1b}[31mnow (workspace)"),
        ])
    );
}

fn report() -> ContextReport {
    ContextReport {
        system_prompt_tokens: 2_350,
        instruction_files: vec![
            ("/home/dev/.config/miniagent/AGENTS.md".into(), 120),
            ("/home/dev/project/AGENTS.md".into(), 830),
        ],
        skills: 3,
        skills_tokens: 210,
        tools: 14,
        tool_tokens: 4_120,
        history: vec![
            ("assistant".into(), 3_400),
            ("summaries".into(), 900),
            ("tool results".into(), 12_800),
            ("user".into(), 640),
        ],
        messages: 23,
        summaries: 1,
        masked_results: 4,
        trimmed_results: 1,
        output_reserve: 8_192,
        margin: 1_000,
        token_limit: 80_000,
        context_window: 200_000,
    }
}

/// `/context` asks the agent and shows "counting" until its answer, then every part
/// with its tokens and the room left.
#[test]
fn context_overlay_shows_what_fills_the_prompt() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    app.sent.clear();
    app.submit("/context".into());
    assert_eq!(app.sent, vec![Op::InspectContext]);
    let waiting = screen(&mut app, 80, 24);
    assert!(waiting.contains("counting what the prompt holds"), "{waiting}");
    app.on_agent_event(Event::ContextReport { report: report() });
    assert_screen!("context_80x24", screen(&mut app, 80, 24));
    assert_screen!("context_160x48", screen(&mut app, 160, 48));
}

/// A replay has no agent to count its prompt: `/context` says so instead of opening an
/// overlay that would wait forever, and asks nothing.
#[test]
fn context_in_a_replay_says_why_not() {
    let workspace = TempDir::new();
    let mut app = app_in(&workspace);
    paused_replay(&mut app);
    app.sent.clear();
    app.submit("/context".into());
    assert_eq!(app.sent, Vec::<Op>::new());
    let shown = screen(&mut app, 120, 30);
    assert!(
        shown.contains("this is a replay: /context counts a live session's"),
        "{shown}"
    );
    assert!(!shown.contains("counting what the prompt holds"), "{shown}");
}
