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
