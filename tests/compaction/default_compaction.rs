//! The default compaction (`both`): under budget the prompt only grows, so the provider's
//! cache serves its prefix; over it, older results become stubs in one batch down to the
//! low-water mark, and a model-written summary comes only when stubs cannot get the
//! prompt under the budget.

use super::*;

/// Whether `after`'s messages begin with all of `before`'s, as sent (an append-only
/// prompt, whose prefix the provider's cache serves).
fn extends(before: &RecordedRequest, after: &RecordedRequest) -> bool {
    let before = support::validate::unmarked(&before.body["messages"]);
    let after = support::validate::unmarked(&after.body["messages"]);
    let (before, after) = (before.as_array().unwrap(), after.as_array().unwrap());
    // The last message of the earlier request may have grown (results join it).
    before.len() <= after.len() && before[..before.len() - 1] == after[..before.len() - 1]
}

#[test]
fn a_long_turn_compacts_rarely_with_stubs_and_no_summary_call() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let steps = 30;
        let mut script: Vec<Reply> = (0..steps)
            .map(|n| Reply::tool(format!("call_{n}"), "read_file", read_big(n)))
            .collect();
        script.push(Reply::text("It has many lines."));
        let server = ScriptedServer::start(script).await;
        server.answer_toolless_with(Reply::text("A summary was asked for."));
        let mut config = support::harness::test_config(Provider::Anthropic, &server);
        assert_eq!(config.agent.compaction, Strategy::Both, "the default");
        config.agent.token_limit = 80_000;
        config.agent.max_steps = 40;
        config.model.max_output_tokens = 4096;
        config.tools.read_file.max_tokens = 40_000;
        let mut agent = Harness::start(config);
        big_file(&agent.workspace, 6_000);
        let events = agent.turn(TASK).await;
        assert_eq!(
            events.last(),
            Some(&Event::TurnComplete {
                text: "It has many lines.".into()
            })
        );
        let requests = server.requests();
        assert_eq!(requests.len(), steps + 1, "no summary call");
        assert!(!requests.iter().any(is_summary_request));
        let counter = TokenCounter::new(Encoding::Cl100kBase);
        let budget = 80_000 - 4096 - 1000;
        for request in &requests {
            let size = estimate(request, &counter);
            assert!(size <= budget + 2_000, "a request of about {size} tokens");
            // The task is never touched.
            assert!(request.body["messages"].to_string().contains(TASK));
        }
        // The prompt changes its prefix only when it compacts, and a compaction buys
        // several steps: 30 reads of 6k tokens into a 75k budget.
        let compactions = requests
            .windows(2)
            .filter(|pair| !extends(&pair[0], &pair[1]))
            .count();
        eprintln!("30 steps of 6k tokens: {compactions} compactions");
        assert!((1..=5).contains(&compactions), "{compactions} compactions");
        // Each left the latest results whole.
        let last = requests.last().unwrap().body["messages"].to_string();
        assert!(
            last.contains("[result omitted to save context"),
            "older results are stubs"
        );
    });
}

/// When what fills the prompt is the model's own long replies, stubs cannot make room:
/// then, and only then, a summary is written, down to the low-water mark.
#[tokio::test]
async fn a_summary_comes_only_when_stubs_are_not_enough() {
    let prose = "The build system reads the manifest, then resolves every dependency. ".repeat(180);
    let steps = 12;
    let mut script: Vec<Reply> = (0..steps)
        .map(|n| {
            Reply::Stream(Turn::new().with_text(format!("Step {n}. {prose}")).with_tool(
                format!("call_{n}"),
                "bash",
                json!({"command": format!("echo {n}")}).to_string(),
            ))
        })
        .collect();
    script.push(Reply::text("Explained."));
    let server = ScriptedServer::start(script).await;
    server.answer_toolless_with(Reply::text("Explained the build system step by step."));
    let mut config = support::harness::test_config(Provider::Anthropic, &server);
    config.agent.token_limit = 20_000;
    config.model.max_output_tokens = 1000;
    let mut agent = Harness::start(config);
    let events = agent.turn("Explain the build, step by step.").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "Explained.".into()
        })
    );
    let requests = server.requests();
    let summaries = requests.iter().filter(|r| is_summary_request(r)).count();
    assert!(
        (1..=3).contains(&summaries),
        "{summaries} summary calls over {steps} steps"
    );
    let counter = TokenCounter::new(Encoding::Cl100kBase);
    for request in requests.iter().filter(|r| !is_summary_request(r)) {
        let size = estimate(request, &counter);
        assert!(size <= 18_000 + 1_000, "a request of about {size} tokens");
        assert!(
            request.body["messages"]
                .to_string()
                .contains("Explain the build, step by step.")
        );
    }
}
