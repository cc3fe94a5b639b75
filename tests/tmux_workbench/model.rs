//! `/model` on the real binary: the picker opens, ↑ and Enter (one burst) switch to a
//! profile on another server, and the next prompt goes there with the history.

use super::*;

#[test]
fn slash_model_picks_a_profile_and_the_next_prompt_goes_to_its_server_in_tmux() {
    let first = ScriptedServer::start_blocking(vec![Reply::text("first answer")]);
    let second = ScriptedServer::start_blocking(vec![Reply::text("second answer")]);
    let (workspace, home) = (TempDir::new(), TempDir::new());
    std::fs::write(
        home.join("config.toml"),
        format!(
            "[profiles.other]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"other-model\"\ncontext_window = 64000\n",
            second.openai_base_url()
        ),
    )
    .unwrap();
    let tmux = Tmux::start(&workspace);
    launch_and_ask(&tmux, &home, &first, "hello", "first answer");

    tmux.type_text("/model");
    tmux.keys(&["Enter"]);
    let picker = tmux.wait_for("the model picker", |s| s.contains("models of anthropic"));
    assert!(picker.contains("other-model (openai), 64k window"), "{picker}");
    // The one in use (the command line's model) is selected: the profile is one up.
    tmux.keys(&["Up", "Enter"]);
    tmux.wait_for_text("model: other-model (openai), a window of 64000 tokens");

    tmux.send("again");
    tmux.wait_for_text("second answer");
    assert_eq!(first.request_count(), 1);
    let request = second.requests().remove(0);
    assert_eq!(request.body["model"], "other-model");
    let said: Vec<String> = request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(said, ["hello", "first answer", "again"]);
    tmux.quit_with_ctrl_d();
}
