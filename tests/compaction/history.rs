use super::*;

#[test]
fn the_history_snapshot_shows_summaries_and_their_originals() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let (_agent, snapshot) = snapshot_after_compaction(None).await;
        assert_eq!(snapshot.entries[0].kind, HistoryEntryKind::User);
        assert_eq!(snapshot.entries[0].title, TASK);
        let summary = snapshot
            .entries
            .iter()
            .find(|e| e.kind == HistoryEntryKind::Summary)
            .expect("a summary entry");
        assert!(
            summary.title.starts_with("summary of messages 2–"),
            "{}",
            summary.title
        );
        assert_eq!(summary.body, "Read big.txt twice; it lists numbered lines.");
        let detail = summary.summary.as_ref().expect("summary detail");
        assert!(
            detail
                .originals
                .iter()
                .any(|e| e.kind == HistoryEntryKind::ToolResults && e.body.contains("line 1: the quick"))
        );
        assert!(
            detail
                .originals
                .iter()
                .any(|e| e.kind == HistoryEntryKind::Assistant && e.title.contains("calls read_file"))
        );
        assert!(detail.tokens_before > 25_000, "{}", detail.tokens_before);
        assert!(!snapshot.compactions.is_empty());
        assert!(
            snapshot
                .by_tool
                .iter()
                .any(|(name, tokens)| name == "read_file" && *tokens > 0)
        );
        assert!(snapshot.prompt_tokens < 80_000);
    });
}

#[test]
fn a_recorded_session_keeps_summarized_messages_only_in_its_log() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let (_plain, unrecorded) = snapshot_after_compaction(None).await;
        let data = TempDir::new();
        let log = support::harness::session_log_in(&data);
        let (mut agent, recorded) = snapshot_after_compaction(Some(log.clone())).await;
        // The inspector shows the same history, what the summary replaced included: it
        // reads the summarized messages back from the log.
        assert_eq!(recorded, unrecorded);
        let originals = summarized(&recorded);
        assert!(originals.iter().any(|e| e.body.contains("line 1: the quick")));

        // Without the log, the inspector cannot show them: memory no longer holds them.
        let path = log.path().expect("a recorded session");
        let away = path.with_extension("moved");
        std::fs::rename(&path, &away).unwrap();
        let without_log = agent.inspect().await;
        std::fs::rename(&away, &path).unwrap();
        let released = summarized(&without_log);
        assert_eq!(released.len(), originals.len());
        let messages = originals
            .iter()
            .filter(|e| e.kind != HistoryEntryKind::Summary)
            .count();
        assert!(messages >= 2, "{originals:?}");
        // Earlier summaries it absorbed are kept in memory; the messages are not.
        for (shown, original) in released.iter().zip(originals) {
            assert_eq!(shown.kind, original.kind);
            if original.kind == HistoryEntryKind::Summary {
                // Its text and figures are in memory; its originals are in the log.
                assert_eq!(
                    (&shown.title, &shown.body, shown.tokens),
                    (&original.title, &original.body, original.tokens)
                );
                continue;
            }
            assert_eq!(shown.tokens, original.tokens, "the counts stay");
            assert!(
                shown.title.ends_with("its text is in the session log"),
                "{}",
                shown.title
            );
            assert!(shown.body.contains("cannot read"), "{}", shown.body);
        }
        // The prompt itself never needed them.
        let entries = |s: &HistorySnapshot| {
            s.entries
                .iter()
                .filter(|e| e.kind != HistoryEntryKind::Summary)
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(entries(&without_log), entries(&recorded));
        assert_eq!(without_log.prompt_tokens, recorded.prompt_tokens);

        // And the log has all of it.
        let loaded = session::load(&path).unwrap();
        let restored = loaded.restore(TokenCounter::estimate_only());
        let history = serde_json::to_string(restored.context.messages()).unwrap();
        assert_eq!(
            history.matches("line 1: the quick").count(),
            10,
            "every read is in the log"
        );
    });
}

/// Item 8: after two compactions of the same run the summary opens on the earlier one,
/// which opens on its own originals; the figures count what each stands for; and the
/// message numbers are the ones `sessions show` prints.
#[test]
fn nested_summaries_open_down_to_the_original_messages_with_one_numbering() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut script: Vec<Reply> = (0..4)
            .map(|n| {
                Reply::tool(
                    format!("call_{n}"),
                    "read_file",
                    format!(r#"{{"path": "part{n}.txt"}}"#),
                )
            })
            .collect();
        script.push(Reply::text("Four parts read."));
        script.push(Reply::text("Still four."));
        let server = ScriptedServer::start(script).await;
        server.answer_toolless_with(Reply::text("Read the parts in turn."));
        let data = TempDir::new();
        let log = support::harness::session_log_in(&data);
        let mut agent = Harness::start_recorded(test_config(Provider::Anthropic, &server), log.clone());
        parts_of_tokens(&agent.workspace, 4, 300);
        agent.turn("Read part0.txt to part3.txt.").await;
        for question in ["", "How many parts?"] {
            if !question.is_empty() {
                agent.turn(question).await;
            }
            compact_now(&mut agent).await;
        }
        assert_every_summary_call_has_an_outcome(&agent.events);
        let snapshot = agent.inspect().await;
        let (outer, detail) = summary_in(&snapshot.entries).expect("a summary in the prompt");
        // Messages: 1 the task, 2–9 four steps, 10 the answer, then the second question.
        assert_eq!((detail.start, detail.end), (1, 10), "{}", outer.title);
        assert!(
            outer.title.starts_with("summary of messages 2–10: "),
            "{}",
            outer.title
        );
        let (inner, inner_detail) = summary_in(&detail.originals).expect("the earlier summary opens");
        assert!(
            inner.title.starts_with("earlier summary of messages 2–"),
            "{}",
            inner.title
        );
        // The earlier summary opens on the original messages, the first read among them.
        let first = &inner_detail.originals[0];
        assert!(first.title.starts_with("message 2 · "), "{}", first.title);
        assert!(
            inner_detail
                .originals
                .iter()
                .any(|e| e.body.contains("part0 1: alpha")),
            "{:#?}",
            inner_detail.originals
        );
        // What a summary stands for counts every original under it, however deep.
        let originals_of = |d: &miniagent_protocol::SummaryDetail| -> u64 {
            d.originals
                .iter()
                .map(|e| e.summary.as_ref().map_or(e.tokens, |inner| inner.tokens_before))
                .sum()
        };
        assert_eq!(inner_detail.tokens_before, originals_of(inner_detail));
        assert_eq!(detail.tokens_before, originals_of(detail));
        assert!(detail.tokens_before > 4 * 300, "{}", detail.tokens_before);

        // `sessions show` names the same ranges.
        let path = log.path().expect("recorded");
        let loaded = session::load(&path).unwrap();
        let shown = miniagent_core::export::show(&loaded, &path);
        assert!(shown.contains("summary of messages 2–10 ("), "{shown}");
        let inner_range = inner.title.trim_start_matches("earlier summary of messages ");
        let inner_range = inner_range.split(':').next().unwrap();
        assert!(
            shown.contains(&format!("summary of messages {inner_range} (")),
            "{inner_range}: {shown}"
        );
    });
}

/// Item 10: the gauge's figure is known before the first request (the system prompt and
/// tool schemas), and after a call it is the same figure `/history` shows, whatever the
/// provider reports.
#[tokio::test]
async fn the_context_figure_is_known_before_the_first_request_and_agrees_with_the_inspector() {
    let server = ScriptedServer::start(vec![Reply::Stream(Turn::text("Hello.").usage(10, 5))]).await;
    let mut agent = Harness::start(test_config(Provider::Anthropic, &server));
    let first = agent.wait_for(|e| matches!(e, Event::TokenUsage { .. })).await;
    assert!(server.requests().is_empty(), "before any request");
    let Event::TokenUsage {
        context_tokens: at_start,
        token_limit,
        ..
    } = first
    else {
        unreachable!()
    };
    assert_eq!(token_limit, 80_000);
    let idle = agent.inspect().await;
    assert_eq!(
        at_start, idle.prompt_tokens,
        "the gauge and /history before the first turn"
    );
    assert!(at_start > 500, "the system prompt and tool schemas: {at_start}");
    // What is sent carries that much besides the messages.
    let counter = TokenCounter::new(Encoding::Cl100kBase);
    let events = agent.turn("say hello").await;
    let sent = estimate(&server.requests()[0], &counter);
    assert!(
        sent.abs_diff(at_start) < 50,
        "sent about {sent}, the gauge said {at_start} before the message"
    );
    let after = events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::TokenUsage { context_tokens, .. } => Some(*context_tokens),
            _ => None,
        })
        .expect("a figure after the call");
    let snapshot = agent.inspect().await;
    assert_eq!(
        after, snapshot.prompt_tokens,
        "the gauge and /history after a call"
    );
    assert!(
        after > at_start,
        "the provider's 15 tokens are not the prompt's size"
    );
}
