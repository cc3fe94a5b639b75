use super::*;

#[test]
fn a_long_session_stays_within_the_budget_anthropic() {
    check_long_session(Provider::Anthropic);
}

#[test]
fn a_long_session_stays_within_the_budget_openai() {
    check_long_session(Provider::Openai);
}

#[test]
fn repeated_compaction_over_a_hundred_steps_stays_bounded() {
    let (requests, events, _) = long_session(Provider::Anthropic, 100, 6_000);
    let counter = TokenCounter::new(Encoding::Cl100kBase);
    assert!(matches!(events.last(), Some(Event::TurnComplete { .. })));
    let sizes: Vec<u64> = requests
        .iter()
        .filter(|r| !is_summary_request(r))
        .map(|r| estimate(r, &counter))
        .collect();
    let largest = sizes.iter().max().copied().unwrap_or(0);
    let last_ten = &sizes[sizes.len() - 10..];
    eprintln!("100 steps: largest request about {largest} tokens; the last ten: {last_ten:?}");
    assert!(largest <= 80_000, "largest {largest}");
    // Converging: the prompt does not creep up over the session.
    assert!(last_ten.iter().all(|size| *size <= 80_000));
    let summaries = requests.iter().filter(|r| is_summary_request(r)).count();
    assert!(summaries >= 3, "{summaries} summaries");
}

#[tokio::test]
async fn masking_keeps_the_last_five_results_whole() {
    let mut script: Vec<Reply> = (1..=11)
        .map(|n| {
            Reply::tool(
                format!("t{n}"),
                "bash",
                json!({"command": format!("echo result-number-{n}")}).to_string(),
            )
        })
        .collect();
    script.push(Reply::text("done"));
    let server = ScriptedServer::start(script).await;
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.compaction = Strategy::MaskToolResults;
    config.agent.keep_tool_results = 5;
    let mut agent = Harness::start(config);
    let events = agent.turn("echo eleven times").await;
    assert_eq!(events.last(), Some(&Event::TurnComplete { text: "done".into() }));
    let last = &server.requests()[11].body;
    assert_valid_anthropic(last);
    let results: Vec<String> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(results.len(), 11);
    // The 6th newest (and everything older) is a stub; the 5 newest are whole.
    for (index, result) in results.iter().enumerate().take(6) {
        let n = index + 1;
        assert!(
            result.starts_with(&format!(
                "[result omitted to save context: bash {{\"command\":\"echo result-number-{n}\"}} returned"
            )),
            "result {n}: {result}"
        );
    }
    for (index, result) in results.iter().enumerate().skip(6) {
        assert_eq!(result, &format!("result-number-{}\n[exit code: 0]", index + 1));
    }
}

#[test]
fn a_failing_summarizer_falls_back_to_a_digest_and_the_turn_goes_on() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut script: Vec<Reply> = (0..12)
            .map(|n| Reply::tool(format!("call_{n}"), "read_file", read_big(n)))
            .collect();
        script.push(Reply::text("finished anyway"));
        let server = ScriptedServer::start(script).await;
        server.answer_toolless_with(Reply::status(500, "the summarizer is down"));
        let mut config = config_for_huge_reads(Provider::Anthropic, &server, 80_000);
        config.agent.max_steps = 20;
        let mut agent = Harness::start(config);
        // Under the size that is trimmed rather than summarized.
        big_file(&agent.workspace, 8_000);
        let events = agent.turn(TASK).await;
        assert_eq!(
            events.last(),
            Some(&Event::TurnComplete {
                text: "finished anyway".into()
            })
        );
        assert_every_summary_call_has_an_outcome(&events);
        let compactions: Vec<(u64, u64, bool)> = events
            .iter()
            .filter_map(|e| match e {
                Event::ContextCompacted {
                    tokens_before,
                    tokens_after,
                    fallback,
                    ..
                } => Some((*tokens_before, *tokens_after, *fallback)),
                _ => None,
            })
            .collect();
        assert!(!compactions.is_empty());
        for (before, after, fallback) in &compactions {
            assert!(*fallback, "the summarizer always fails");
            assert!(after < before, "the prompt must shrink: {before} → {after}");
        }
        // Each summary call was retried (4 attempts) before the digest stood in.
        let summary_calls = server.requests().iter().filter(|r| is_summary_request(r)).count();
        assert_eq!(summary_calls, compactions.len() * 4);
        let counter = TokenCounter::new(Encoding::Cl100kBase);
        for request in server.requests().iter().filter(|r| !is_summary_request(r)) {
            assert!(estimate(request, &counter) <= 80_000);
        }
    });
}

/// Item: a token limit the output reserve would eat whole. Set alone (the reserve is the
/// built-in default), the reserve is lowered to fit and one line says so; the turn works
/// and the request asks for no more output than fits.
#[test]
fn a_token_limit_below_the_default_output_reserve_is_adjusted_with_one_line() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("It fits.")]);
    let home = TempDir::new();
    let workspace = TempDir::new();
    let output = support::cli::exec_command(&home, &workspace, &server, &["say hello"])
        .env("MINIAGENT_TOKEN_LIMIT", "8000")
        .output()
        .expect("miniagent runs");
    let stderr = support::cli::text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(support::cli::text(&output.stdout), "It fits.\n");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("model.max_output_tokens"))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("agent.token_limit 8000"), "{stderr}");
    assert!(lines[0].contains("16384"), "{stderr}");
    assert!(!stderr.contains("the budget is 0"), "{stderr}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let max_tokens = requests[0].body["max_tokens"].as_u64().unwrap();
    assert!(
        max_tokens * 2 <= 8000,
        "the reply may take {max_tokens} of 8000 tokens"
    );
}

/// Both settings named by the person and in conflict: refused at start-up, one line,
/// nothing sent.
#[test]
fn a_token_limit_below_an_explicit_output_reserve_is_refused_at_start_up() {
    let server = ScriptedServer::start_blocking(vec![Reply::text("never")]);
    let home = TempDir::new();
    let workspace = TempDir::new();
    let config = home.join("small.toml");
    std::fs::write(
        &config,
        "[agent]\ntoken_limit = 8000\n[model]\nmax_output_tokens = 16384\n",
    )
    .unwrap();
    let output = support::cli::miniagent(&home)
        .arg("--config")
        .arg(&config)
        .arg("--workspace")
        .arg(workspace.path())
        .args([
            "--base-url",
            &server.anthropic_base_url(),
            "--model",
            "scripted-model",
        ])
        .args(["exec", "say hello"])
        .output()
        .expect("miniagent runs");
    let stderr = support::cli::text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("agent.token_limit") && stderr.contains("model.max_output_tokens"),
        "{stderr}"
    );
    assert!(server.requests().is_empty());
}

/// Item 7: with a small token limit, a 10-step turn compacts once or twice, not at
/// every step: a compaction brings the prompt down to a low-water mark, so it buys steps.
/// Results of about a fifth of the room the prompt has.
#[test]
fn a_small_token_limit_compacts_a_ten_step_turn_rarely_and_to_a_low_water_mark() {
    ten_steps_at_a_small_token_limit(1000);
}

/// Results so large that the latest step alone keeps the prompt over the low-water mark
/// (the case that summarized at every step).
#[test]
fn a_small_token_limit_with_large_results_does_not_summarize_at_every_step() {
    ten_steps_at_a_small_token_limit(1800);
}
