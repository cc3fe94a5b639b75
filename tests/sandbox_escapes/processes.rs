use super::*;

#[test]
fn a_process_that_leaves_the_group_and_clears_its_environment_ends_with_the_command() {
    let home = TempDir::new();
    let workspace = TempDir::new();
    let duration = unique_sleep();
    let _cleanup = KillOnDrop(format!("sleep {duration}"));
    let check = format!(
        "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f 2>/dev/null; echo; done | grep -c '^sleep {duration} ' || true"
    );
    let server = ScriptedServer::start_blocking(vec![
        bash(
            "t1",
            &format!(
                "env -i setsid sleep {duration} > /dev/null 2>&1 & (env -i setsid sh -c 'sleep {duration}' >/dev/null 2>&1 &); echo started"
            ),
        ),
        bash("t2", &check),
        Reply::text("done"),
    ]);
    let output = exec(&home, &workspace, &server, &["leave a sleeper"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    assert!(results[0].starts_with("started"), "{results:?}");
    assert!(
        results[1].starts_with("0\n"),
        "a process that cleared its tag outlived its command: {results:?}"
    );
    assert!(
        processes_running(&format!("sleep {duration}")).is_empty(),
        "a process outlived the agent"
    );
}

#[test]
fn a_job_that_left_its_group_ends_when_the_agent_is_killed() {
    let home = TempDir::new();
    let workspace = TempDir::new();
    let duration = unique_sleep();
    let _cleanup = KillOnDrop(format!("sleep {duration}"));
    let server = ScriptedServer::start_blocking(vec![
        Reply::tool(
            "t1",
            "bash",
            json!({"command": format!("env -i setsid sleep {duration} >/dev/null 2>&1 & sleep {duration}"), "run_in_background": true})
                .to_string(),
        ),
        bash("t2", &format!("sleep {duration}")),
        Reply::text("done"),
    ]);
    let mut child = exec_command(&home, &workspace, &server, &["leave a sleeper"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pattern = format!("sleep {duration}");
    assert!(
        wait_until(Duration::from_secs(20), || processes_running(&pattern).len() == 3),
        "the job's sleepers and the command started"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || processes_running(&pattern).is_empty()),
        "a process of a command or a background job outlived the killed agent"
    );
}

#[test]
fn a_sandboxed_command_cannot_kill_its_supervisor_to_leave_a_process_behind() {
    if !landlock() {
        return;
    }
    let home = TempDir::new();
    let workspace = TempDir::new();
    let duration = unique_sleep();
    let pattern = format!("sleep {duration}");
    let _cleanup = KillOnDrop(pattern.clone());
    let server = ScriptedServer::start_blocking(vec![
        bash(
            "t1",
            &format!(
                "kill -9 $PPID; echo kill $?; sleep 0.2; env -i setsid sleep {duration} >/dev/null 2>&1 & echo started"
            ),
        ),
        Reply::text("done"),
    ]);
    let output = exec(&home, &workspace, &server, &["kill the supervisor"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    assert!(
        wait_until(Duration::from_secs(5), || processes_running(&pattern).is_empty()),
        "a process outlived its command after the command killed its parent: {results:?}"
    );
}

#[test]
fn a_command_starts_with_no_signal_blocked_and_sigpipe_at_its_default() {
    let home = TempDir::new();
    let workspace = TempDir::new();
    let server = ScriptedServer::start_blocking(vec![
        bash(
            "t1",
            "grep SigBlk /proc/self/status; yes | head -1 >/dev/null; echo pipe ${PIPESTATUS[0]}",
        ),
        Reply::text("done"),
    ]);
    let output = exec(&home, &workspace, &server, &["signals"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    assert!(
        results[0].starts_with("SigBlk:\t0000000000000000\npipe 141\n"),
        "{results:?}"
    );
}

/// A command's supervisor is the small `miniagent-supervise`, not a fresh image of the
/// whole miniagent binary, whose start relocated ~38,000 pointers and took ~330 page
/// faults for every command (issue 26). Measured by the program each maps (`VmExe`),
/// which a sandboxed command may read of its supervisor and of the agent.
#[test]
fn a_commands_supervisor_is_a_small_program_not_the_agents_image() {
    let home = TempDir::new();
    let workspace = TempDir::new();
    let server = ScriptedServer::start_blocking(vec![
        bash(
            "t1",
            "a=$(awk '{print $4}' /proc/$PPID/stat); for p in $PPID $a; do awk '/^VmExe/ {print $2}' /proc/$p/status; done",
        ),
        Reply::text("done"),
    ]);
    let output = exec(&home, &workspace, &server, &["look at the supervisor"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    let sizes: Vec<u64> = results[0]
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect();
    assert_eq!(sizes.len(), 2, "{results:?}");
    assert!(
        sizes[0] * 8 < sizes[1],
        "the supervisor maps {} kB of program, the agent {} kB",
        sizes[0],
        sizes[1]
    );
}
