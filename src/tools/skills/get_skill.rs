//! `get_skill {skill_name}`: level 2 of progressive disclosure, a skill's instructions on
//! demand.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{Skill, SkillSet, rewrite_paths};
use crate::tools::paths::Workspace;
use crate::tools::{Tool, ToolContext, ToolEffect, ToolOutput};

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

/// `allowed-tools` entries as this agent's tool names: `Bash(git log:*)` → `bash`,
/// `Read` → `read`; `get_skill` stays allowed so another skill can be loaded.
fn tool_names(allowed: &[String]) -> Vec<String> {
    let mut names: Vec<String> = allowed
        .iter()
        .map(|entry| {
            entry
                .split('(')
                .next()
                .unwrap_or(entry)
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|name| !name.is_empty())
        .collect();
    names.push("get_skill".to_string());
    names.dedup();
    names
}

/// What `get_skill` returns for `skill`.
fn instructions(skill: &Skill) -> String {
    let mut text = format!("Skill `{}` (folder: {})\n", skill.name, skill.root.display());
    if let Some(tools) = &skill.allowed_tools {
        text.push_str(&format!(
            "While following this skill, use only: {}.\n",
            tools.join(", ")
        ));
    }
    text.push('\n');
    text.push_str(&rewrite_paths(&skill.body, &skill.root));
    text.push('\n');
    text
}

impl Tool for GetSkillTool {
    fn name(&self) -> &str {
        "get_skill"
    }

    fn description(&self) -> &str {
        "Load the full instructions of one of the skills listed in the system prompt. The result \
         names the skill's folder and gives the absolute paths of its scripts and reference files, \
         to read with read_file or run with bash."
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "skill_name": {"type": "string", "description": "The skill's name, as listed in the system prompt."},
            },
            "required": ["skill_name"],
            "additionalProperties": false,
        })
    }

    fn effect(&self) -> ToolEffect {
        ToolEffect::ReadOnly
    }

    fn preview(&self, arguments: &Value, _workspace: &Workspace) -> Result<String, String> {
        let name = arguments.get("skill_name").and_then(Value::as_str).unwrap_or("");
        Ok(format!("load skill `{name}`"))
    }

    fn run(&self, arguments: Value, _context: ToolContext) -> BoxFuture<'_, ToolOutput> {
        let name = arguments
            .get("skill_name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .to_string();
        let output = match self.find(&name) {
            Some(skill) => {
                let output = ToolOutput::ok(instructions(skill));
                match &skill.allowed_tools {
                    // The loop enforces it for the rest of the turn.
                    Some(tools) => output.restricting_tools_to(tool_names(tools)),
                    None => output,
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
