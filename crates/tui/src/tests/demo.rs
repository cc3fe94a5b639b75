//! The demo session in `assets/demo.jsonl` (recorded by the top-level `demo` tests) as
//! the workbench shows it at its end.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::tests::support::{self, Player};
use crate::theme::Theme;

fn demo_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../assets/demo.jsonl")
}

fn screen(player: &Player, width: u16, height: u16) -> String {
    support::screen(&player.app, width, height)
}

#[test]
fn the_workbench_at_the_end_of_the_demo() {
    let loaded = miniagent_core::session::load(&demo_path()).expect("the demo loads");
    let mut player = Player::new(&loaded, Theme::dark());
    player.jump_to_end();
    assert!(!player.app.turn.running());
    assert_screen_in!("demo", "demo_end_120x40", screen(&player, 120, 40));
    // The inspector shows the summary the second turn made, with what it replaced.
    player.on_key(
        KeyEvent::new(KeyCode::F(6), KeyModifiers::NONE),
        std::time::Instant::now(),
    );
    let history = player.app.session.history().expect("the inspector opened");
    assert!(history.entries.iter().any(|e| e.summary.is_some()));
    assert_screen_in!("demo", "demo_history_120x40", screen(&player, 120, 40));
}

/// A replay's controls use space and `q`: while a query is typed they are the query's,
/// and `n` moves through the matches once it is kept (the controls take no letters
/// otherwise, and quit on `q`).
#[test]
fn the_demo_can_be_searched_while_it_replays() {
    let loaded = miniagent_core::session::load(&demo_path()).expect("the demo loads");
    let mut player = Player::new(&loaded, Theme::dark());
    player.jump_to_end();
    let now = std::time::Instant::now();
    let press = |code| KeyEvent::new(code, KeyModifiers::NONE);
    screen(&player, 120, 40);
    player.on_key(KeyEvent::new(KeyCode::Char('f'), KeyModifiers::CONTROL), now);
    for c in "test q".chars() {
        player.on_key(press(KeyCode::Char(c)), now);
    }
    assert!(!player.app.quit, "q went to the query");
    let typed = screen(&player, 120, 40);
    assert!(typed.contains(" / test q▏"), "{typed}");
    player.on_key(press(KeyCode::Backspace), now);
    player.on_key(press(KeyCode::Backspace), now);
    player.on_key(press(KeyCode::Enter), now);
    let kept = screen(&player, 120, 40);
    let count = |screen: &str| {
        let line = screen.lines().find(|line| line.contains(" / test"))?;
        let inner = line[line.find(" / test")?..].split(['┃', '│']).next()?;
        inner.split_whitespace().last().map(str::to_string)
    };
    let first = count(&kept).expect("a count");
    player.on_key(press(KeyCode::Char('n')), now);
    let next = count(&screen(&player, 120, 40)).expect("a count");
    assert_ne!(first, next, "{kept}");
    assert!(
        player.sent.is_empty(),
        "no playback control was sent: {:?}",
        player.sent
    );
    player.on_key(press(KeyCode::Esc), now);
    assert!(!player.app.conversation.search_active());
    player.on_key(press(KeyCode::Char('q')), now);
    assert!(player.app.quit, "q quits the replay again");
}
