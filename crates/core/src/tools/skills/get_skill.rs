//! `get_skill {skill_name}`: level 2 of progressive disclosure, a skill's instructions on
//! demand.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Skill, SkillApprovals, SkillSet, rewrite_paths};
use crate::tools::paths::Workspace;
use crate::tools::{ToolContext, ToolEffect, ToolOutput, TypedTool};
use miniagent_protocol::ApprovalRequest;

/// The `get_skill` tool: returns a skill's folder and instructions, its relative paths made
/// absolute. Read-only.
pub struct GetSkillTool {
    skills: Arc<SkillSet>,
}

impl GetSkillTool {
    pub fn new(skills: Arc<SkillSet>) -> Self {
        Self { skills }
    }

    /// The skill the model asked for: the exact name, or else the only one matching it
    /// without regard to case (models sometimes capitalise names).
    fn find(&self, name: &str) -> Option<&Skill> {
        self.skills.get(name).or_else(|| {
            let mut matches = self
                .skills
                .skills()
                .iter()
                .filter(|skill| skill.name.eq_ignore_ascii_case(name));
            match (matches.next(), matches.next()) {
                (Some(only), None) => Some(only),
                _ => None,
            }
        })
    }
}

/// What `get_skill` returns for `skill`.
fn instructions(skill: &Skill, approvals: &SkillApprovals) -> String {
    let mut text = format!("Skill `{}` (folder: {})\n", skill.name, skill.root.display());
    if let Some(needs) = &skill.compatibility {
        text.push_str(&format!("Requirements: {needs}\n"));
    }
    if !approvals.is_empty() {
        text.push_str(&format!(
            "Pre-approved while you follow this skill: {}. Other calls need approval as usual.\n",
            approvals.describe().join(", ")
        ));
    }
    text.push('\n');
    text.push_str(&rewrite_paths(&skill.body, &skill.root));
    text.push('\n');
    text
}

/// `get_skill`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetSkillArgs {
    /// The skill's name, as listed in the system prompt.
    pub skill_name: String,
}

impl TypedTool for GetSkillTool {
    type Args = GetSkillArgs;

    fn name(&self) -> &str {
        "get_skill"
    }

    fn description(&self) -> &str {
        "Load the full instructions of one of the skills listed in the system prompt. The result \
         names the skill's folder and gives the absolute paths of its scripts and reference files, \
         to read with read_file or run with bash."
    }

    fn effect(&self) -> ToolEffect {
        ToolEffect::ReadOnly
    }

    fn approval_request<'a>(
        &'a self,
        args: &'a GetSkillArgs,
        _workspace: &'a Workspace,
    ) -> BoxFuture<'a, Result<Option<ApprovalRequest>, crate::tools::InvalidCall>> {
        let request = ApprovalRequest::Other {
            name: "get_skill".to_string(),
            preview: format!("load skill `{}`", args.skill_name),
        };
        Box::pin(async move { Ok(Some(request)) })
    }

    fn run(&self, args: GetSkillArgs, _context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        let name = args.skill_name.trim().to_string();
        let output = match self.find(&name) {
            Some(skill) => {
                let approvals = SkillApprovals::from_entries(
                    &skill.name,
                    skill.allowed_tools.as_deref().unwrap_or_default(),
                );
                let output = ToolOutput::ok(instructions(skill, &approvals));
                if approvals.is_empty() {
                    output
                } else {
                    // The approval policy applies them for the rest of the turn.
                    output.pre_approving(approvals)
                }
            }
            None if self.skills.is_empty() => ToolOutput::error(format!(
                "There is no skill named `{name}`: no skills are installed."
            )),
            None => {
                let names: Vec<&str> = self
                    .skills
                    .skills()
                    .iter()
                    .map(|skill| skill.name.as_str())
                    .collect();
                ToolOutput::error(format!(
                    "There is no skill named `{name}`. Available skills: {}.",
                    names.join(", ")
                ))
            }
        };
        Box::pin(async move { output })
    }
}
