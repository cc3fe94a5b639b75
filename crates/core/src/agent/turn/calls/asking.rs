//! Asking the person about a call, and acting on the answer: the approval request and
//! its wait, and what "approve for the session", "always" and "refuse for the session"
//! remember or save.

use super::CallOutcome;
use crate::agent::TurnContext;
use crate::agent::approval::{ApprovalPolicy, Verdict};
use crate::tools::{ToolCall, ToolOutput};
use miniagent_protocol::{ApprovalRule, Decision, Event, PermanentRule, RuleList, RuleSource};

/// A call the policy wants a person to answer about, and why.
pub(super) struct Asked<'a> {
    pub(super) id: &'a str,
    pub(super) name: &'a str,
    pub(super) verdict: Verdict,
    /// Why the person is asked whatever the mode says (a repeated call).
    pub(super) insist: Option<String>,
    /// What the repository chose that the call would run.
    pub(super) hazard: Option<String>,
}

/// Asks the person about `call` and waits for the answer. `Ok`: approved, and whether as
/// changing miniagent's own folders (its writes may enter them); `Err`: how the call ends
/// instead.
pub(super) async fn ask(
    context: &TurnContext,
    call: &dyn ToolCall<'_>,
    asked: Asked<'_>,
) -> Result<bool, CallOutcome> {
    let Asked {
        id,
        name,
        verdict,
        insist,
        hazard,
    } = asked;
    let each_time = match &verdict {
        Verdict::AskEachTime(note) | Verdict::AskOnce(note) => Some(note.clone()),
        Verdict::Run | Verdict::Ask | Verdict::Refuse(_) => None,
    };
    // A call that cannot succeed is answered at once; nobody is asked about it. Building
    // the request may wait on the editor (the file's text for an edit's diff): an
    // interrupt does not wait for it.
    let request = tokio::select! {
        biased;
        _ = context.cancel.cancelled() => return Err(CallOutcome::Interrupted),
        request = call.approval_request(&context.workspace) => request,
    }
    .map_err(|invalid| CallOutcome::Finished(ToolOutput::error(invalid.to_string())))?;
    let notes: Vec<String> = [each_time.clone(), insist, hazard]
        .into_iter()
        .flatten()
        .collect();
    let preview = notes
        .iter()
        .cloned()
        .chain(std::iter::once(crate::tools::request_text(&request)))
        .collect::<Vec<_>>()
        .join("\n\n");
    let decision = context.approvals.register(id);
    context.events.emit(Event::ApprovalRequested {
        id: id.to_string(),
        name: name.to_string(),
        preview,
        request: Some(request),
        notes,
        session_rule: match each_time {
            Some(_) => None,
            None => call.session_rule(),
        },
    });
    let decision = tokio::select! {
        _ = context.cancel.cancelled() => {
            context.approvals.remove(id);
            return Err(CallOutcome::Interrupted);
        }
        decision = decision => decision,
    };
    match decision {
        Ok(Decision::Approve) => {}
        Ok(Decision::ApproveForSession | Decision::ApproveAlways { .. }) if each_time.is_some() => {
            let message = match verdict {
                Verdict::AskEachTime(_) => {
                    "approved once: changes to miniagent's own settings are asked about each time"
                }
                _ => "approved once: this call is asked about each time (see the note in the question)",
            };
            context.events.emit(Event::Notice {
                message: message.to_string(),
            });
        }
        Ok(Decision::ApproveForSession) => remember(context, call.session_rule()),
        Ok(Decision::ApproveAlways { rule }) => always(context, name, call, rule),
        Ok(Decision::Deny { reason }) => return Err(CallOutcome::DeniedByPerson { reason }),
        Ok(Decision::DenyForSession { reason }) => {
            // What the question offered to remember: nothing, for a call asked each time.
            let rule = each_time.is_none().then(|| call.session_rule()).flatten();
            refuse_for_session(context, rule);
            return Err(CallOutcome::DeniedByPerson { reason });
        }
        Ok(Decision::Abort) => return Err(CallOutcome::Aborted),
        Ok(Decision::Refuse { reason }) => {
            return Err(CallOutcome::Refused(ToolOutput::error(format!(
                "refused: {reason}"
            ))));
        }
        Err(_) => return Err(CallOutcome::Interrupted),
    }
    Ok(matches!(verdict, Verdict::AskEachTime(_)))
}

/// "Approve for this session": remember the call's rule, or say why it cannot be.
fn remember(context: &TurnContext, rule: Option<ApprovalRule>) {
    session_rule(
        context,
        rule,
        "approved once: this call cannot be remembered for the session",
        ApprovalPolicy::remember,
    );
}

/// "Always": save `pattern` to the `allow` list of the user's config and apply it, or
/// say why it was not; the call runs either way (the person approved it).
fn always(context: &TurnContext, tool: &str, call: &dyn ToolCall<'_>, pattern: String) {
    let rule = PermanentRule {
        list: RuleList::Allow,
        pattern: pattern.trim().to_string(),
        source: RuleSource::User,
    };
    let message = match save_rule(context, tool, call, &rule) {
        Ok(file) => format!(
            "saved `{}` to the allow list in {}: calls it covers run without asking",
            rule.pattern,
            file.display()
        ),
        Err(why) => format!("approved once: {why}"),
    };
    context.events.emit(Event::Notice { message });
}

/// Writes an allow rule covering `call` to the user's config, then applies it.
fn save_rule(
    context: &TurnContext,
    tool: &str,
    call: &dyn ToolCall<'_>,
    rule: &PermanentRule,
) -> Result<std::path::PathBuf, String> {
    let pattern = &rule.pattern;
    crate::config::permissions::Pattern::parse(pattern)
        .map_err(|why| format!("`{pattern}` is not a rule ({why}), so it was not saved"))?;
    let (covers, file) = context.policy.with(|policy| {
        let rules = policy.permissions();
        (
            rules.allows(pattern, tool, call, &context.workspace),
            rules.user_file().map(std::path::Path::to_path_buf),
        )
    });
    if !covers {
        return Err(format!(
            "`{pattern}` does not cover this call, so it was not saved"
        ));
    }
    let file = file.ok_or("there is no config folder to save the rule in")?;
    crate::config::edit::change_list(&file, "permissions", "allow", |list| {
        if !list.contains(pattern) {
            list.push(pattern.clone());
        }
    })
    .map_err(|why| why.to_string())?;
    let event = context.policy.with(|policy| {
        // Parsed above: it is a rule.
        let _ = policy.permissions_mut().add(rule.clone());
        policy.permissions_event()
    });
    context.events.emit(event);
    Ok(file)
}

/// "Refuse for this session": refuse what the call's rule covers from now on, without
/// asking, or say why it cannot be.
fn refuse_for_session(context: &TurnContext, rule: Option<ApprovalRule>) {
    session_rule(
        context,
        rule,
        "refused once: this call cannot be refused for the session as a rule",
        ApprovalPolicy::refuse,
    );
}

/// Applies the call's session `rule` with `apply` (telling front ends when the rules
/// changed), or says `unusable` when the call has none.
fn session_rule(
    context: &TurnContext,
    rule: Option<ApprovalRule>,
    unusable: &str,
    apply: fn(&mut ApprovalPolicy, ApprovalRule) -> bool,
) {
    let Some(rule) = rule else {
        context.events.emit(Event::Notice {
            message: unusable.to_string(),
        });
        return;
    };
    let changed = context
        .policy
        .with(|policy| apply(policy, rule).then(|| policy.rules_event()));
    if let Some(event) = changed {
        context.events.emit(event);
    }
}
