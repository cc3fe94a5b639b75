use super::*;

#[test]
fn a_tmux_server_reached_through_its_socket_does_not_write_outside_for_a_sandboxed_command() {
    if !landlock() {
        return;
    }
    if let Err(why) = Command::new("tmux").arg("-V").output() {
        skip::missing("tmux", format!("tmux -V: {why}"));
        return;
    }
    let Some(outside) = outside_dir("tmux") else {
        return;
    };
    let target = outside.join("OUTSIDE");
    let _ = std::fs::remove_file(&target);
    let sockets = TempDir::new();
    let socket = sockets.join("tmux.sock");
    let started = Command::new("tmux")
        .args(["-f", "/dev/null", "-S"])
        .arg(&socket)
        .args(["new-session", "-d", "-s", "escape", "sleep 600"])
        .env_remove("TMUX")
        .status()
        .unwrap();
    assert!(started.success(), "the tmux server starts");
    struct KillServer(PathBuf);
    impl Drop for KillServer {
        fn drop(&mut self) {
            let _ = Command::new("tmux")
                .arg("-S")
                .arg(&self.0)
                .arg("kill-server")
                .status();
        }
    }
    let _server_guard = KillServer(socket.clone());

    let home = TempDir::new();
    let workspace = TempDir::new();
    let command = format!(
        "tmux -S '{}' run-shell 'touch {}'; echo tmux exited $?",
        socket.display(),
        target.display()
    );
    let server = ScriptedServer::start_blocking(vec![bash("t1", &command), Reply::text("done")]);
    let output = exec(&home, &workspace, &server, &["escape through tmux"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    // The server would run the command at once; give a stray one time to land anyway.
    std::thread::sleep(Duration::from_millis(300));
    let results = tool_results(&server);
    assert!(
        !target.exists(),
        "the tmux server wrote outside the workspace for a sandboxed command: {results:?}"
    );
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].contains("Permission denied") && results[0].contains("tools.bash.unix_sockets = true"),
        "{results:?}"
    );
    let _ = std::fs::remove_dir_all(&outside);
}

#[test]
fn a_descriptor_the_launching_shell_left_open_does_not_reach_commands() {
    if !landlock() {
        return;
    }
    let Some(outside) = outside_dir("fd") else { return };
    let target = outside.join("log");
    std::fs::write(&target, "").unwrap();
    let file = std::fs::OpenOptions::new().append(true).open(&target).unwrap();
    let home = TempDir::new();
    let workspace = TempDir::new();
    let server = ScriptedServer::start_blocking(vec![
        bash("t1", "echo escaped >&7; echo status $?; ls /proc/self/fd"),
        Reply::text("done"),
    ]);
    let mut command = exec_command(&home, &workspace, &server, &["write through fd 7"]);
    let raw = std::os::fd::AsRawFd::as_raw_fd(&file);
    // SAFETY: dup2 is async-signal-safe; `raw` stays open in the parent until after spawn.
    unsafe {
        command.pre_exec(move || {
            if libc::dup2(raw, 7) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "",
        "a command wrote through an inherited descriptor: {results:?}"
    );
    assert!(results[0].contains("Bad file descriptor"), "{results:?}");
    let _ = std::fs::remove_dir_all(&outside);
}

#[test]
fn neither_a_command_nor_a_background_job_sees_the_api_key_or_the_agents_sockets() {
    let home = TempDir::new();
    let workspace = TempDir::new();
    std::fs::write(
        home.join("config.toml"),
        "[tools.bash]\npass_env = [\"DOCKER_HOST\"]\n",
    )
    .unwrap();
    let server = ScriptedServer::start_blocking(vec![
        bash("t1", "env; echo; env | base64 -w0"),
        Reply::tool(
            "t2",
            "bash",
            json!({"command": "sleep 0.2; env", "run_in_background": true}).to_string(),
        ),
        bash("t3", "sleep 1"),
        Reply::tool("t4", "bash_output", json!({"bash_id": "bash_1"}).to_string()),
        Reply::text("done"),
    ]);
    let mut command = exec_command(
        &home,
        &workspace,
        &server,
        &["--api-key-env", "MY_OWN_KEY_VAR", "show env"],
    );
    for (name, value) in HIDDEN {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    assert_eq!(results.len(), 4, "{results:?}");
    for (index, result) in [(0, &results[0]), (3, &results[3])] {
        assert!(
            result.contains("PATH="),
            "result {index} is not an environment: {result}"
        );
        let (plain, encoded) = result.split_once("\n\n").unwrap_or((result, ""));
        let decoded = decode_base64(encoded.lines().next().unwrap_or(""));
        for shown in [plain.to_string(), decoded] {
            for (name, value) in &HIDDEN[..6] {
                let line = format!("{name}=");
                assert!(
                    !shown.lines().any(|l| l.starts_with(&line)),
                    "result {index} shows {name}: {shown}"
                );
                assert!(
                    !shown.contains(value),
                    "result {index} shows the value of {name}: {shown}"
                );
            }
            assert!(
                !shown.contains(TEST_KEY) && !shown.contains("MINIAGENT_API_KEY="),
                "{shown}"
            );
        }
        assert!(
            plain
                .lines()
                .any(|l| l == "DOCKER_HOST=unix:///var/run/docker.sock"),
            "pass_env keeps DOCKER_HOST: {plain}"
        );
    }
}

#[test]
fn a_sandboxed_command_cannot_read_the_agents_environment_or_memory() {
    if !landlock() {
        return;
    }
    let (line, walked) = agent_seen_from_a_command(&["read the agent"]);
    // maps was readable here before (issue 15 review, F10): it shows where the key sits.
    assert!(line.ends_with(" maps:refused mem:refused"), "{walked}");
    assert!(!line.contains("environ:key"), "{walked}");
}

#[test]
fn an_unsandboxed_command_does_not_find_the_key_in_the_agents_environ_either() {
    let (line, walked) = agent_seen_from_a_command(&["--sandbox", "off", "read the agent"]);
    // The memory stays open to a command running as root outside the sandbox (it keeps
    // CAP_SYS_PTRACE); the environ block no longer holds the key.
    println!("outside the sandbox: {line}");
    assert!(!line.contains("environ:key"), "{walked}");
}

#[test]
fn a_refused_read_of_the_agents_memory_is_not_called_a_write() {
    if !landlock() {
        return;
    }
    let home = TempDir::new();
    let workspace = TempDir::new();
    // $PPID is the supervisor; its parent is the agent.
    let server = ScriptedServer::start_blocking(vec![
        bash(
            "t1",
            "a=$(awk '{print $4}' /proc/$PPID/stat); head -c 1 /proc/$a/mem; head -c 1 /proc/$a/maps",
        ),
        Reply::text("done"),
    ]);
    let output = exec(&home, &workspace, &server, &["read the agent's memory"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let result = tool_results(&server).remove(0);
    assert!(result.contains("for reading: Permission denied"), "{result}");
    assert!(!result.contains("tried to write"), "{result}");
    assert!(
        result.contains(
            "[sandbox: commands cannot look into processes outside the sandbox, miniagent among them (/proc/"
        ),
        "{result}"
    );
}

#[test]
fn a_sandboxed_command_cannot_read_the_environment_of_another_process_of_the_user() {
    if !landlock() {
        return;
    }
    // A wrapper or shell of the person's, with a key in its environment.
    let duration = unique_sleep();
    let _cleanup = KillOnDrop(format!("sleep {duration}"));
    let mut wrapper = Command::new("sleep")
        .arg(&duration)
        .env("WRAPPER_SECRET", "sk-wrapper-7777")
        .spawn()
        .unwrap();
    let command = format!(
        "cat /proc/{}/environ | tr '\\0' '\\n' | grep WRAPPER_SECRET",
        wrapper.id()
    );
    let home = TempDir::new();
    let workspace = TempDir::new();
    let server = ScriptedServer::start_blocking(vec![bash("t1", &command), Reply::text("done")]);
    let output = exec(&home, &workspace, &server, &["read a wrapper"]);
    let _ = wrapper.kill();
    let _ = wrapper.wait();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let result = tool_results(&server).remove(0);
    assert!(!result.contains("sk-wrapper-7777"), "{result}");
    assert!(result.contains("Permission denied"), "{result}");
}
