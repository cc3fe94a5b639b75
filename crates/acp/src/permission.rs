//! Approval requests as `session/request_permission`, and the person's choice back as a
//! [`Decision`]: pure, so the options and their mapping are tested on their own.

use agent_client_protocol::v1::schema as acp;
use miniagent_protocol::{ApprovalRequest, ApprovalRule, Decision};

use crate::translate::text_block;

/// Why the call was refused, as the model is told (after "the person refused this
/// call: "): ACP's rejection carries no reason, and the model should not guess one.
pub const REJECTED: &str = "they rejected it in their editor, which gives no reason";

const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT_ONCE: &str = "reject_once";
const REJECT_ALWAYS: &str = "reject_always";

/// The options offered: once or always, allow or reject; "always" only when the
/// request names what it would remember.
pub fn options(rule: Option<&ApprovalRule>) -> Vec<acp::PermissionOption> {
    let mut options = vec![acp::PermissionOption::new(
        ALLOW_ONCE,
        "Allow",
        acp::PermissionOptionKind::AllowOnce,
    )];
    if let Some(rule) = rule {
        options.push(acp::PermissionOption::new(
            ALLOW_ALWAYS,
            format!("Always allow {rule} in this session"),
            acp::PermissionOptionKind::AllowAlways,
        ));
    }
    options.push(acp::PermissionOption::new(
        REJECT_ONCE,
        "Reject",
        acp::PermissionOptionKind::RejectOnce,
    ));
    if let Some(rule) = rule {
        options.push(acp::PermissionOption::new(
            REJECT_ALWAYS,
            format!("Always reject {rule} in this session"),
            acp::PermissionOptionKind::RejectAlways,
        ));
    }
    options
}

/// The person's answer as a decision. Cancelled (the prompt was cancelled, or the
/// client gave up on the request) ends the turn as an interrupt does; an option this
/// face did not offer rejects the call.
pub fn decision(outcome: &acp::RequestPermissionOutcome) -> Decision {
    let chosen = match outcome {
        acp::RequestPermissionOutcome::Selected(selected) => selected.option_id.0.as_ref(),
        _ => return Decision::Abort,
    };
    match chosen {
        ALLOW_ONCE => Decision::Approve,
        ALLOW_ALWAYS => Decision::ApproveForSession,
        REJECT_ALWAYS => Decision::DenyForSession {
            reason: Some(REJECTED.to_string()),
        },
        _ => Decision::Deny {
            reason: Some(REJECTED.to_string()),
        },
    }
}

/// The call as the request shows it: a diff for an edit whose texts are known, else the
/// command, the MCP call or the tool's own words, after the reasons the person is asked.
pub fn tool_call(
    id: &str,
    preview: &str,
    request: Option<&ApprovalRequest>,
    notes: &[String],
) -> acp::ToolCallUpdate {
    let mut content: Vec<acp::ToolCallContent> = notes.iter().map(|note| text(note.clone())).collect();
    match request {
        Some(ApprovalRequest::Edit {
            path,
            diff,
            abs_path,
            change,
            ..
        }) => match change {
            Some(change) => {
                let path = if abs_path.is_empty() { path } else { abs_path };
                content.push(acp::ToolCallContent::Diff(
                    acp::Diff::new(path.clone(), change.new_text.clone()).old_text(change.old_text.clone()),
                ));
            }
            None => content.push(text(format!("```diff\n{diff}\n```"))),
        },
        Some(ApprovalRequest::Command { command, cwd, .. }) => {
            content.push(text(format!("```sh\n{command}\n```\nin {cwd}")));
        }
        Some(ApprovalRequest::McpCall {
            server,
            tool,
            arguments,
        }) => content.push(text(format!(
            "MCP server `{server}`, tool `{tool}`:\n```json\n{}\n```",
            serde_json::to_string_pretty(arguments).unwrap_or_default()
        ))),
        Some(ApprovalRequest::Other { preview, .. }) => content.push(text(preview.clone())),
        // A request from before typed requests existed: its text is all there is.
        None => content.push(text(preview.to_string())),
    }
    // The title and kind came with the call's `tool_call`; the request only adds what
    // the person decides on.
    acp::ToolCallUpdate::new(id.to_string(), acp::ToolCallUpdateFields::new().content(content))
}

fn text(text: String) -> acp::ToolCallContent {
    acp::ToolCallContent::Content(acp::Content::new(text_block(text)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // A test fails by panicking.
    use super::*;
    use miniagent_protocol::TextChange;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn selected(id: &str) -> acp::RequestPermissionOutcome {
        acp::RequestPermissionOutcome::Selected(acp::SelectedPermissionOutcome::new(id.to_string()))
    }

    #[test]
    fn always_is_offered_only_with_a_rule_and_each_choice_maps_to_a_decision() {
        let kinds = |options: Vec<acp::PermissionOption>| {
            serde_json::to_value(options)
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .map(|option| {
                    (
                        option["optionId"].as_str().unwrap().to_string(),
                        option["name"].as_str().unwrap().to_string(),
                    )
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(
            kinds(options(None)),
            [
                ("allow_once".to_string(), "Allow".to_string()),
                ("reject_once".to_string(), "Reject".to_string())
            ]
        );
        let rule = ApprovalRule::Command {
            program: "cargo".into(),
        };
        assert_eq!(
            kinds(options(Some(&rule))),
            [
                ("allow_once".to_string(), "Allow".to_string()),
                (
                    "allow_always".to_string(),
                    "Always allow command `cargo …` in this session".to_string()
                ),
                ("reject_once".to_string(), "Reject".to_string()),
                (
                    "reject_always".to_string(),
                    "Always reject command `cargo …` in this session".to_string()
                ),
            ]
        );
        let rejected = Some(REJECTED.to_string());
        assert_eq!(
            [
                decision(&selected("allow_once")),
                decision(&selected("allow_always")),
                decision(&selected("reject_once")),
                decision(&selected("reject_always")),
                decision(&selected("something-else")),
                decision(&acp::RequestPermissionOutcome::Cancelled),
            ],
            [
                Decision::Approve,
                Decision::ApproveForSession,
                Decision::Deny {
                    reason: rejected.clone()
                },
                Decision::DenyForSession {
                    reason: rejected.clone()
                },
                Decision::Deny { reason: rejected },
                Decision::Abort,
            ]
        );
    }

    #[test]
    fn an_edit_is_shown_as_a_diff_and_a_command_as_text() {
        let edit = ApprovalRequest::Edit {
            path: "notes.txt".into(),
            summary: "edit notes.txt (1 replacement)".into(),
            diff: "-one\n+two".into(),
            abs_path: "/ws/notes.txt".into(),
            change: Some(TextChange {
                old_text: Some("one\n".into()),
                new_text: "two\n".into(),
            }),
        };
        assert_eq!(
            serde_json::to_value(tool_call("c1", "", Some(&edit), &[])).unwrap(),
            json!({"toolCallId": "c1", "content": [
                {"type": "diff", "path": "/ws/notes.txt", "oldText": "one\n", "newText": "two\n"}]})
        );
        let command = ApprovalRequest::Command {
            command: "ls -la".into(),
            program: Some("ls".into()),
            argv: vec!["ls".into(), "-la".into()],
            cwd: "/ws".into(),
            timeout_s: Some(120),
            compound: false,
        };
        assert_eq!(
            serde_json::to_value(tool_call(
                "c2",
                "",
                Some(&command),
                &["asked because it repeats".to_string()]
            ))
            .unwrap(),
            json!({"toolCallId": "c2", "content": [
                {"type": "content", "content": {"type": "text", "text": "asked because it repeats"}},
                {"type": "content", "content": {"type": "text", "text": "```sh\nls -la\n```\nin /ws"}}]})
        );
    }
}
