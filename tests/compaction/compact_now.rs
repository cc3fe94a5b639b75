use super::*;

/// Item 7: `/compact` on a prompt one huge tool result dominates goes after that result
/// (trimmed to its first and last lines, the history keeps it), and says how far it got.
#[tokio::test]
async fn compact_now_goes_after_the_result_that_dominates_the_prompt() {
    let server = ScriptedServer::start(vec![
        Reply::tool("a", "read_file", r#"{"path": "small.txt"}"#),
        Reply::tool("b", "read_file", r#"{"path": "huge.txt"}"#),
        Reply::text("Both read."),
        Reply::text("Next."),
    ])
    .await;
    server.answer_toolless_with(Reply::text("Read small.txt and huge.txt."));
    let mut agent = Harness::start(config_for_huge_reads(Provider::Anthropic, &server, 80_000));
    file_of_tokens(&agent.workspace, "small.txt", "small", 200);
    file_of_tokens(&agent.workspace, "huge.txt", "huge", 14_000);
    agent.turn("Read small.txt and huge.txt.").await;
    let before = agent.inspect().await.prompt_tokens;
    let start = agent.events.len();
    let message = compact_now(&mut agent).await;
    assert!(
        message.starts_with("compacted: the prompt went from about"),
        "{message}"
    );
    assert!(message.contains("1 large result trimmed"), "{message}");
    assert_every_summary_call_has_an_outcome(&agent.events[start..]);
    let after = agent.inspect().await.prompt_tokens;
    assert!(
        after * 2 < before,
        "/compact took the prompt from {before} to only {after}"
    );
    // The next request shows the result trimmed: what it was, its first and last lines.
    agent.turn("Go on.").await;
    let last = server.requests().last().unwrap().body["messages"].to_string();
    assert!(
        last.contains("[result trimmed to save context: read_file {\\\"path\\\":\\\"huge.txt\\\"} returned"),
        "{last}"
    );
    assert!(last.contains("huge 1: alpha"), "its first lines stay");
    assert!(!last.contains("huge 900: alpha"), "its middle is cut");
    assert!(
        estimate(
            server.requests().last().unwrap(),
            &TokenCounter::new(Encoding::Cl100kBase)
        ) < before / 2
    );
}

/// `/compact` that trimming alone brings to the mark makes no model call, and does not
/// call itself a compaction: the status bar, /stats and the inspector count summaries
/// (a fresh-eyes finding: it said "compacted" while they said 0 compactions).
#[tokio::test]
async fn compact_now_without_a_summary_says_so_and_calls_nothing() {
    let server = ScriptedServer::start(vec![
        Reply::tool("b", "read_file", r#"{"path": "huge.txt"}"#),
        Reply::text("Read."),
        Reply::text("Next."),
    ])
    .await;
    let mut agent = Harness::start(config_for_huge_reads(Provider::Anthropic, &server, 20_000));
    file_of_tokens(&agent.workspace, "huge.txt", "huge", 9_000);
    agent.turn("Read huge.txt.").await;
    let requests = server.requests().len();
    let start = agent.events.len();
    let message = compact_now(&mut agent).await;
    assert!(
        message.starts_with("made room without a summary (no model call): the prompt went from about"),
        "{message}"
    );
    assert!(message.ends_with("tokens (1 large result trimmed)"), "{message}");
    assert!(
        !agent.events[start..].iter().any(|event| matches!(
            event,
            Event::CompactionStarted { .. } | Event::ContextCompacted { .. }
        )),
        "a summary call was made"
    );
    assert_eq!(server.requests().len(), requests, "a model call was made");
    assert!(agent.inspect().await.compactions.is_empty());
}

/// Item 7: `/compact` that cannot make progress says so, and a summary call that could
/// not write anything shorter still reports how it ended.
#[tokio::test]
async fn compact_now_without_progress_says_it_cannot_and_every_call_ends() {
    let server = ScriptedServer::start(vec![Reply::text("Hello.")]).await;
    server.answer_toolless_with(Reply::text(
        "A summary far longer than the one short reply it stands for. ".repeat(20),
    ));
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    agent.turn("hi").await;
    let start = agent.events.len();
    let message = compact_now(&mut agent).await;
    assert!(message.starts_with("cannot compact further"), "{message}");
    assert!(message.contains("system prompt and tools"), "{message}");
    assert_every_summary_call_has_an_outcome(&agent.events[start..]);
}

/// Item 7: a summary call interrupted by the person ends with a `cancelled` outcome, and
/// the history is left as it was.
#[tokio::test]
async fn an_interrupted_summary_call_reports_that_it_was_cancelled() {
    let server = ScriptedServer::start(vec![
        Reply::tool("a", "read_file", r#"{"path": "one.txt"}"#),
        Reply::tool("b", "read_file", r#"{"path": "two.txt"}"#),
        Reply::tool("c", "read_file", r#"{"path": "three.txt"}"#),
        Reply::text("Three read."),
    ])
    .await;
    server.answer_toolless_with(Reply::slow(
        Turn::text("A summary that never arrives in time."),
        20_000,
    ));
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    for name in ["one", "two", "three"] {
        file_of_tokens(&agent.workspace, &format!("{name}.txt"), name, 200);
    }
    agent.turn("Read the three files.").await;
    let before = agent.inspect().await;
    let start = agent.events.len();
    agent.send(miniagent_protocol::Op::CompactNow);
    agent
        .wait_for(|e| matches!(e, Event::CompactionStarted { .. }))
        .await;
    agent.send(miniagent_protocol::Op::Interrupt);
    let ended = agent
        .wait_for(|e| matches!(e, Event::CompactionEnded { .. }))
        .await;
    assert!(
        matches!(
            ended,
            Event::CompactionEnded {
                outcome: miniagent_protocol::CompactionOutcome::Cancelled,
                ..
            }
        ),
        "{ended:?}"
    );
    agent
        .wait_for(|e| matches!(e, Event::Notice { message } if message == "compaction interrupted"))
        .await;
    assert_every_summary_call_has_an_outcome(&agent.events[start..]);
    assert_eq!(agent.inspect().await, before, "nothing was replaced");
}

/// Fresh-eyes finding 4: the masked count is the stubs the prompt shows. A result masked
/// before a summary took its step in is no longer in the prompt, so it is not counted:
/// the inspector's figure is the number of stubs in the next request.
#[tokio::test]
async fn the_masked_count_is_the_stubs_the_prompt_shows() {
    let step = |n: usize| {
        Reply::Stream(
            Turn::new()
                .with_text("Reading the next part to compare it with the others. ".repeat(30))
                .with_tool(
                    format!("r{n}"),
                    "read_file",
                    format!(r#"{{"path": "part{n}.txt"}}"#),
                ),
        )
    };
    let server = ScriptedServer::start(vec![
        step(0),
        step(1),
        step(2),
        step(3),
        Reply::text("All four read."),
        Reply::text("Still four."),
    ])
    .await;
    server.answer_toolless_with(Reply::text("SUMMARY: the four parts were read."));
    let mut config = test_config(Provider::Anthropic, &server);
    config.agent.compaction = Strategy::Both;
    config.agent.keep_tool_results = 1;
    config.agent.keep_recent_steps = 3;
    let mut agent = Harness::start(config);
    parts_of_tokens(&agent.workspace, 4, 300);
    agent.turn("Read the four parts.").await;
    let message = compact_now(&mut agent).await;
    let snapshot = agent.inspect().await;
    // The report tells the one stub the prompt shows, not the two the summary took in.
    let told = message.split(" (").nth(1).unwrap_or_default();
    assert_eq!(told, "1 older result shown as a stub, 1 summary)", "{message}");
    agent.turn("How many?").await;
    let request = server.requests().pop().unwrap();
    let stubs = request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .filter(|b| {
            b["content"]
                .as_str()
                .is_some_and(|c| c.starts_with("[result omitted to save context"))
        })
        .count();
    let titles: Vec<&str> = snapshot.entries.iter().map(|e| e.title.as_str()).collect();
    // Two steps went into the summary with their stubs; the third step's result is
    // the one stub left, the fourth's stays whole.
    assert_eq!((snapshot.masked_results, stubs), (1, 1), "{titles:?}");
}

/// `/compact` tells the results it leaves shown trimmed, as `/stats` and the inspector
/// count them: results it trimmed and then took into a summary (or masked) are not
/// "trimmed" any more (a fresh-eyes tester saw "3 large results trimmed" while both said
/// the prompt showed no more trimmed results than before).
#[tokio::test]
async fn compact_now_counts_only_the_results_it_leaves_trimmed() {
    let server = ScriptedServer::start(vec![
        Reply::tool("a", "read_file", r#"{"path": "part0.txt"}"#),
        Reply::tool("b", "read_file", r#"{"path": "part1.txt"}"#),
        Reply::tool("c", "read_file", r#"{"path": "part2.txt"}"#),
        Reply::text("All three read."),
    ])
    .await;
    server.answer_toolless_with(Reply::text("Read the three parts."));
    let mut config = config_for_huge_reads(Provider::Anthropic, &server, 40_000);
    config.agent.compaction = Strategy::Both;
    let mut agent = Harness::start(config);
    parts_of_tokens(&agent.workspace, 3, 4500);
    // The person's own words take most of the room: trimming the reads is not enough.
    let words: Vec<String> = (0..8000).map(|n| format!("w{n}")).collect();
    agent
        .turn(&format!(
            "Read part0.txt to part2.txt. Notes: {}",
            words.join(" ")
        ))
        .await;
    let trimmed_before = agent.inspect().await.trimmed_results;
    let message = compact_now(&mut agent).await;
    let trimmed_after = agent.inspect().await.trimmed_results;
    let told = message
        .split(['(', ',', ')'])
        .map(str::trim)
        .find_map(|part| {
            part.strip_suffix(" large results trimmed")
                .or(part.strip_suffix(" large result trimmed"))
        })
        .map_or(0, |count| count.parse::<u64>().unwrap());
    assert_eq!(told, trimmed_after.saturating_sub(trimmed_before), "{message}");
    assert!(message.contains("1 summary"), "{message}");
}
