use super::*;

#[test]
fn unix_sockets_and_tcp_follow_their_options() {
    if !landlock() {
        return;
    }
    let unix = "python3 -c 'import socket; socket.socket(socket.AF_UNIX); print(\"unix ok\")' 2>&1 | tail -1";
    let refused = first_result_with_config("", unix);
    assert!(refused.contains("Permission denied"), "{refused}");
    let allowed = first_result_with_config("[tools.bash]\nunix_sockets = true\n", unix);
    assert!(allowed.starts_with("unix ok"), "{allowed}");
    let pair = "python3 -c 'import socket; socket.socketpair(); print(\"pair ok\")'";
    assert!(first_result_with_config("", pair).starts_with("pair ok"));

    if let Ok(abi) = sandbox::kernel_abi().as_ref()
        && *abi < 4
    {
        skip::missing(
            "landlock-tcp",
            format!("the TCP part: Landlock ABI {abi}, below 4"),
        );
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let tcp = format!("(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo tcp ok || echo tcp refused");
    assert!(first_result_with_config("", &tcp).starts_with("tcp ok"));
    let off = first_result_with_config("[tools.bash]\nnetwork = false\n", &tcp);
    assert!(off.starts_with("tcp refused"), "{off}");
}

#[test]
fn a_sandboxed_command_and_job_hold_no_capabilities() {
    if !landlock() {
        return;
    }
    let Some(outside) = outside_dir("caps") else {
        return;
    };
    let victim = outside.join("victim");
    std::fs::write(&victim, "victim\n").unwrap();
    let owner = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&victim).unwrap());
    let home = TempDir::new();
    let workspace = TempDir::new();
    // As root these all worked in the sandbox before (issue 15 review, F1): a block device
    // made in the workspace wrote to a loop device backed by a file outside.
    let command = format!(
        "{CAPS}; mknod ./blk b 7 0; echo mknod-block $?; mknod ./chr c 1 3; echo mknod-char $?; \
         mkfifo ./fifo; echo fifo $?; chown 1234:1234 '{v}'; echo chown $?; \
         chattr +i '{v}' 2>/dev/null; echo chattr $?",
        v = victim.display()
    );
    let server = ScriptedServer::start_blocking(vec![
        bash("t1", &command),
        Reply::tool(
            "t2",
            "bash",
            json!({"command": CAPS, "run_in_background": true}).to_string(),
        ),
        bash("t3", "sleep 0.5"),
        Reply::tool("t4", "bash_output", json!({"bash_id": "bash_1"}).to_string()),
        bash("t5", IOCTLS),
        Reply::text("done"),
    ]);
    let output = exec(&home, &workspace, &server, &["use capabilities"]);
    // Undo an immutable flag before anything else can fail, so the folder can be removed.
    let _ = Command::new("chattr").arg("-i").arg(&victim).status();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    assert_eq!(results.len(), 5, "{results:?}");
    assert!(holds_no_capability(&results[0]), "{results:?}");
    let ioctls: Vec<&str> = results[4].lines().filter(|l| l.starts_with("/dev/")).collect();
    assert_eq!(
        ioctls[0], "/dev/null ioctl: Inappropriate ioctl for device",
        "{results:?}"
    );
    if let Some(other) = ioctls.get(1) {
        let landlock_5 = sandbox::kernel_abi().as_ref().is_ok_and(|abi| *abi >= 5);
        assert!(
            !landlock_5
                || other.ends_with("ioctl: Permission denied")
                || other.ends_with("open: Permission denied"),
            "{results:?}"
        );
    }
    assert!(
        holds_no_capability(&results[3]),
        "the background job: {results:?}"
    );
    for refused in ["mknod-block 1", "mknod-char 1", "chown 1", "chattr 1"] {
        assert!(results[0].contains(refused), "{refused}: {results:?}");
    }
    assert!(
        results[0].contains("fifo 0"),
        "a fifo may still be made: {results:?}"
    );
    assert!(!workspace.join("blk").exists() && !workspace.join("chr").exists());
    let after = std::fs::metadata(&victim).unwrap();
    assert_eq!(std::os::unix::fs::MetadataExt::uid(&after), owner);
    assert!(
        std::fs::OpenOptions::new().append(true).open(&victim).is_ok(),
        "the file outside was made immutable"
    );
    let _ = std::fs::remove_dir_all(&outside);
}

#[test]
fn an_unsandboxed_command_keeps_the_capabilities_it_had() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip::missing("root", "only root has capabilities to keep");
        return;
    }
    let home = TempDir::new();
    let workspace = TempDir::new();
    let server = ScriptedServer::start_blocking(vec![bash("t1", CAPS), Reply::text("done")]);
    let output = exec(&home, &workspace, &server, &["--sandbox", "off", "caps"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    let effective = results[0]
        .lines()
        .find(|l| l.starts_with("CapEff:"))
        .unwrap_or("");
    assert!(
        !effective.ends_with("0000000000000000"),
        "--sandbox off changes nothing: {results:?}"
    );
}

#[test]
fn a_sandboxed_command_or_job_cannot_open_a_terminal_while_ordinary_tools_still_work() {
    if !landlock() {
        return;
    }
    let Some((mut master, slave)) = skip::needs("pty", open_pty()) else {
        return;
    };
    // What the person types into that terminal, waiting to be read.
    std::io::Write::write_all(&mut master, b"typed-secret\n").unwrap();
    let terminals = format!(
        "timeout 3 cat {slave}; echo cat $?; stty -F {slave} size; echo stty $?; \
         for t in /dev/tty /dev/ptmx /dev/pts/ptmx /dev/console /dev/tty0 /dev/vcs; do \
         if [ -e $t ]; then (exec 3< $t) 2>&1 | sed 's/.*: //'; fi; done"
    );
    let home = TempDir::new();
    let workspace = TempDir::new();
    let server = ScriptedServer::start_blocking(vec![
        bash("t1", &terminals),
        Reply::tool(
            "t2",
            "bash",
            json!({"command": format!("timeout 3 cat {slave} > keys.txt"), "run_in_background": true})
                .to_string(),
        ),
        bash("t3", "sleep 0.5"),
        Reply::tool("t4", "bash_output", json!({"bash_id": "bash_1"}).to_string()),
        bash("t5", ORDINARY),
        Reply::text("done"),
    ]);
    let output = exec(&home, &workspace, &server, &["read a terminal"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let results = tool_results(&server);
    assert_eq!(results.len(), 5, "{results:?}");
    assert!(!results.iter().any(|r| r.contains("typed-secret")), "{results:?}");
    let keys = std::fs::read_to_string(workspace.join("keys.txt")).unwrap_or_default();
    assert!(
        !keys.contains("typed-secret"),
        "a background job read the terminal: {keys}"
    );
    let first = &results[0];
    assert!(
        first.contains(&format!("cat: {slave}: Permission denied")) && first.contains("cat 1"),
        "{first}"
    );
    assert!(first.contains("stty 1"), "{first}");
    assert!(
        first.contains(&format!(
            "[sandbox: commands cannot open terminals or input devices ({slave})]"
        )),
        "{first}"
    );
    // Every terminal device that exists was refused; none opened.
    assert!(
        first.lines().filter(|l| *l == "Permission denied").count() >= 2,
        "{first}"
    );
    assert!(!first.contains("No such device"), "{first}");
    assert!(results[3].contains("Permission denied"), "{results:?}");

    // The same ordinary tools, unsandboxed, print the same, and what they print shows
    // every one of them ran (a missing program would print "command not found" in both).
    if ordinary_programs_run() {
        let unsandboxed = ScriptedServer::start_blocking(vec![bash("t1", ORDINARY), Reply::text("done")]);
        let other = TempDir::new();
        let output = exec(&home, &other, &unsandboxed, &["--sandbox", "off", "ordinary"]);
        assert!(output.status.success(), "{}", text(&output.stderr));
        assert_eq!(results[4], ORDINARY_OUTPUT);
        assert_eq!(tool_results(&unsandboxed)[0], ORDINARY_OUTPUT);
    }

    // The terminal still holds what was typed: nothing read it.
    let mut slave_end = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOCTTY)
        .open(&slave)
        .unwrap();
    let mut typed = [0u8; 13];
    std::io::Read::read_exact(&mut slave_end, &mut typed).unwrap();
    assert_eq!(&typed, b"typed-secret\n");
}

/// Whether every program [`ORDINARY`] runs besides the shell's own tools is installed;
/// reports the skip ([`skip`]) of each that is not.
fn ordinary_programs_run() -> bool {
    let mut all = true;
    for program in ["git", "python3", "node", "cargo"] {
        if let Err(why) = Command::new(program).arg("--version").output() {
            skip::missing(
                program,
                format!("the ordinary tools' part: {program} --version: {why}"),
            );
            all = false;
        }
    }
    all
}
