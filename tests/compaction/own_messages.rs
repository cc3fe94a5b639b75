//! A session whose budget the person's own messages fill (issue 26, "sessions that must
//! not end"): with long prompts on a small budget, a fresh-eyes tester saw one turn make 20
//! summary calls saving about 26 tokens each, then every prompt refused, each refused
//! prompt kept in the history so the next needed more, and no word of `/clear`. Now a
//! summary call is made only when it can bring the prompt under the budget, the older
//! history (the earlier messages with it) is summarized in one call when the runs between
//! messages cannot, and a message that still cannot be sent is taken back and given back.

use super::*;
use miniagent_core::config::MARGIN_TOKENS;
use miniagent_protocol::Op;
use support::harness::session_log_in;

/// The tester's prompt shape: about 2,300 characters of words.
fn long_prompt(turn: usize) -> String {
    let words: Vec<String> = (0..300).map(|j| format!("word{j}")).collect();
    format!("turn {turn} {}", words.join(" "))
}

/// The tester's configuration: `token_limit = 12000`, `max_output_tokens = 2000`, the
/// default compaction.
fn small_budget(server: &ScriptedServer) -> miniagent_core::config::Config {
    let mut config = support::harness::test_config(Provider::Anthropic, server);
    config.agent.compaction = Strategy::Both;
    config.agent.token_limit = 12_000;
    config.model.max_output_tokens = 2000;
    config
}

const BUDGET: u64 = 12_000 - 2000 - MARGIN_TOKENS;

/// The text of a request's last user message with text (not only tool results).
fn last_user_text(request: &RecordedRequest) -> String {
    let messages = request.body["messages"].as_array().unwrap();
    let text_of = |message: &Value| match &message["content"] {
        Value::String(text) => text.clone(),
        content => content
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
    };
    messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .map(text_of)
        .find(|text| !text.is_empty())
        .unwrap()
}

/// Whether the request's last user message ends with `prompt` as a block of its own (a
/// summary just before it shares the message: Anthropic's turns alternate).
fn ends_with_prompt(request: &RecordedRequest, prompt: &str) -> bool {
    let messages = request.body["messages"].as_array().unwrap();
    let last_user = messages.iter().rev().find(|m| {
        m["role"] == "user"
            && m["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|b| b["type"] == "text"))
    });
    last_user
        .and_then(|m| m["content"].as_array())
        .and_then(|blocks| blocks.iter().rev().find(|b| b["type"] == "text"))
        .is_some_and(|block| block["text"] == prompt)
}

/// Thirty turns of long prompts, each running a command and answering: every turn is
/// answered, every request fits the budget with the latest prompt verbatim, and no turn
/// makes more than one summary call. The summary that takes in earlier prompts is asked
/// to keep what the person asked for, and is sent their words.
#[tokio::test]
async fn long_prompts_on_a_small_budget_never_end_the_session() {
    const TURNS: usize = 30;
    let mut script = Vec::new();
    for turn in 0..TURNS {
        script.push(Reply::tool(
            format!("call_{turn}"),
            "bash",
            json!({"command": format!("echo checked {turn}")}).to_string(),
        ));
        script.push(Reply::text(format!("Turn {turn} is done.")));
    }
    let server = ScriptedServer::start(script).await;
    server.answer_toolless_with(Reply::text(
        "The person sent long word lists, one per turn, and each turn ran echo.",
    ));
    let mut agent = Harness::start(small_budget(&server));
    let counter = TokenCounter::new(Encoding::Cl100kBase);
    let mut summary_calls_per_turn = Vec::new();
    for turn in 0..TURNS {
        let before = server.requests().len();
        let events = agent.turn(&long_prompt(turn)).await;
        assert!(
            matches!(events.last(), Some(Event::TurnComplete { .. })),
            "turn {turn} ended with {:#?}",
            events.last()
        );
        let requests = server.requests();
        let summaries = requests[before..]
            .iter()
            .filter(|r| is_summary_request(r))
            .count();
        summary_calls_per_turn.push(summaries);
        for request in requests[before..].iter().filter(|r| !is_summary_request(r)) {
            assert!(
                ends_with_prompt(request, &long_prompt(turn)),
                "turn {turn}: {}",
                last_user_text(request)
            );
            let tokens = estimate(request, &counter);
            assert!(
                tokens <= BUDGET,
                "turn {turn}: a request of about {tokens} tokens"
            );
        }
    }
    assert!(
        summary_calls_per_turn.iter().all(|calls| *calls <= 1),
        "summary calls per turn: {summary_calls_per_turn:?}"
    );
    let requests = server.requests();
    let summaries: Vec<&RecordedRequest> = requests.iter().filter(|r| is_summary_request(r)).collect();
    assert!(
        !summaries.is_empty(),
        "the prompts outgrew the budget: something was summarized"
    );
    let taking_prompts_in = summaries
        .iter()
        .find(|r| r.body["messages"].to_string().contains("turn 1 word0 word1"))
        .expect("a summary of the older history, the person's earlier prompts with it");
    assert!(
        support::validate::system_text(&taking_prompts_in.body)
            .contains("keep what they asked for and every constraint they set"),
        "{}",
        support::validate::system_text(&taking_prompts_in.body)
    );
}

/// A message that fits alone but not beside what the older history could at best be
/// summarized to is refused without a summary call, taken back out of the session (the
/// next request and the session log do not hold it, and it is not counted as a turn) and
/// given back with [`Event::PromptReturned`]; the error names what fills the budget and
/// the ways out.
#[tokio::test]
async fn a_message_that_cannot_be_sent_is_taken_back_and_given_back() {
    // About 55 tokens: too short a run to summarize, and a summary of it and "hi" would
    // win back a few tokens at best.
    let noted = "Noted: I will keep what you said in mind, read the files you name when you name them, \
                 and answer when you ask a question about them, briefly and without guessing at what \
                 you meant or repeating your words back to you.";
    let server =
        ScriptedServer::start(vec![Reply::text(noted), Reply::text("Here is the short answer.")]).await;
    server.answer_toolless_with(Reply::text("A summary."));
    let data = TempDir::new();
    let log = session_log_in(&data);
    let mut agent = Harness::start_recorded(small_budget(&server), log.clone());
    let counter = TokenCounter::new(Encoding::Cl100kBase);
    agent.turn("hi").await;
    // What the system prompt, the tools and the first exchange take.
    let first = estimate(&server.requests()[0], &counter) + counter.count(noted);
    let requests_before = server.requests().len();
    // Fits alone, with the system prompt and tools, but not beside the first exchange,
    // which no summary (a few dozen tokens at best) could make room beside.
    let mut refused = String::from("refused");
    while counter.count(&refused) + first < BUDGET + 30 {
        refused.push_str(" more words to read");
    }
    let events = agent.turn(&refused).await;
    assert_eq!(
        server.requests().len(),
        requests_before,
        "no call could make it fit"
    );
    assert!(
        events.contains(&Event::PromptReturned {
            text: refused.clone()
        }),
        "{events:#?}"
    );
    let Some(Event::Error { message }) = events.last() else {
        panic!("{:#?}", events.last());
    };
    assert!(
        message.starts_with(
            "the message was not sent, and was taken back out of the session: the prompt needs about"
        ) && message.contains("compaction cannot make room for it: the system prompt and tools take about")
            && message.contains("your latest message about")
            && message.ends_with(
                "Send something shorter, start a new session (/clear), or raise agent.token_limit"
            ),
        "{message}"
    );
    // The gauge no longer counts it.
    let gauge = events.iter().rev().find_map(|e| match e {
        Event::TokenUsage { context_tokens, .. } => Some(*context_tokens),
        _ => None,
    });
    assert!(
        gauge.is_some_and(|tokens| tokens < first + 20),
        "{gauge:?}, first {first}"
    );
    // The session goes on without it.
    let events = agent.turn("a short question").await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "Here is the short answer.".into()
        })
    );
    let last = server.requests().last().unwrap().body["messages"].to_string();
    assert!(
        last.contains("a short question") && last.contains("Noted: I will"),
        "{last}"
    );
    assert!(!last.contains("refused more words"), "{last}");
    agent.send(Op::Shutdown);
    agent.wait_for(|e| matches!(e, Event::ShutdownComplete)).await;
    let path = log.path().expect("a log was written");
    let recorded = session::load::messages(&path).unwrap();
    let texts: Vec<String> = recorded.iter().map(|m| m.text()).collect();
    assert_eq!(
        texts,
        ["hi", noted, "a short question", "Here is the short answer."]
    );
    let info = miniagent_core::api::session_info(&path).unwrap();
    assert_eq!((info.turns, info.first_prompt.as_deref()), (2, Some("hi")));
}

/// A chat of short turns once the budget is full (a fresh-eyes tester saw 137 summary
/// calls in 150 turns, each summarizing one 128-token answer to get 84 tokens under the
/// budget, and a new cached prefix every turn): one call summarizes the older history down
/// to the mark, the person's short messages kept word for word in it, and the chat goes
/// on for many turns before the next.
#[tokio::test]
async fn a_full_budget_of_short_turns_is_summarized_once_to_the_mark() {
    const TURNS: usize = 90;
    let answer = |turn: usize| {
        let words: Vec<String> = (0..60).map(|j| format!("lorem{j}")).collect();
        format!("answer {turn}: {}", words.join(" "))
    };
    let mut script: Vec<Reply> = (0..TURNS).map(|turn| Reply::text(answer(turn))).collect();
    script.push(Reply::text("Read it all."));
    let server = ScriptedServer::start(script).await;
    server.answer_toolless_with(Reply::text(
        "The person asked short numbered questions; each got a lorem answer.",
    ));
    let mut agent = Harness::start(small_budget(&server));
    let counter = TokenCounter::new(Encoding::Cl100kBase);
    let mut calls_per_turn = Vec::new();
    for turn in 0..TURNS {
        let before = server.requests().len();
        let events = agent.turn(&format!("short question {turn} please")).await;
        assert_eq!(
            events.last(),
            Some(&Event::TurnComplete { text: answer(turn) }),
            "turn {turn}"
        );
        let requests = server.requests();
        calls_per_turn.push(
            requests[before..]
                .iter()
                .filter(|r| is_summary_request(r))
                .count(),
        );
        let sent = requests.last().unwrap();
        assert!(estimate(sent, &counter) <= BUDGET, "turn {turn}");
    }
    let summaries: usize = calls_per_turn.iter().sum();
    assert!(
        (1..=2).contains(&summaries) && calls_per_turn.iter().all(|calls| *calls <= 1),
        "summary calls per turn: {calls_per_turn:?}"
    );
    // The person's words stay as they were written, inside the summary.
    let after = server
        .requests()
        .into_iter()
        .skip_while(|r| !is_summary_request(r))
        .find(|r| !is_summary_request(r))
        .unwrap();
    let shown = after.body["messages"].to_string();
    assert!(
        shown.contains("The person's messages in this part, word for word (JSON strings), oldest first:")
            && shown.contains(
                r#"message 1: \"short question 0 please\"\nmessage 3: \"short question 1 please\""#
            ),
        "{shown}"
    );
    // A long message that fits only beside a short summary: the messages kept word for word
    // give way to it (a fresh-eyes tester saw it refused, "compaction cannot make room").
    let fixed = estimate(&server.requests()[0], &counter) - counter.count("short question 0 please");
    let mut long = String::from("long");
    while counter.count(&long) + fixed < BUDGET - 300 {
        long.push_str(" a word to read");
    }
    let events = agent.turn(&long).await;
    assert_eq!(
        events.last(),
        Some(&Event::TurnComplete {
            text: "Read it all.".into()
        }),
        "{events:#?}"
    );
    let sent = server.requests().last().unwrap().clone();
    assert!(estimate(&sent, &counter) <= BUDGET);
    assert!(ends_with_prompt(&sent, &long));
}
