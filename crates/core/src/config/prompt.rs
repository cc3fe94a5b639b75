//! The system prompt: built in or from a file, with the workspace path added.

use std::path::Path;

use super::{Config, ConfigError};

/// The built-in system prompt.
pub const SYSTEM_PROMPT: &str = include_str!("../../../../config/system_prompt.md");

/// Where the skills list goes in the prompt (filled by the skills extension; empty until then).
const SKILLS_PLACEHOLDER: &str = "{SKILLS_METADATA}";

/// The system prompt for a session in `workspace`. Like Mini-Agent, a prompt that does
/// not already say where it works gets a "Current Workspace" section.
pub fn system_prompt(
    config: &Config,
    workspace: &Path,
    skills_metadata: &str,
) -> Result<String, ConfigError> {
    let template = match &config.system_prompt_path {
        Some(path) => std::fs::read_to_string(path).map_err(|err| {
            ConfigError(format!(
                "{}: cannot read the system prompt file (agent.system_prompt_file): {err}",
                path.display()
            ))
        })?,
        None => SYSTEM_PROMPT.to_string(),
    };
    let mut prompt = template.replace(SKILLS_PLACEHOLDER, skills_metadata);
    let trimmed_len = prompt.trim_end().len();
    prompt.truncate(trimmed_len);
    if !prompt.contains("Current Workspace") {
        prompt.push_str(&format!(
            "\n\n## Current Workspace\n\nYou are working in `{}`. Relative paths are resolved against it.\n",
            workspace.display()
        ));
    }
    Ok(prompt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_prompt_gets_the_workspace() {
        let config = crate::config::built_in();
        let prompt = system_prompt(&config, Path::new("/tmp/project"), "").unwrap();
        assert!(prompt.starts_with("You are miniagent"));
        assert!(prompt.ends_with("## Current Workspace\n\nYou are working in `/tmp/project`. Relative paths are resolved against it.\n"));
        assert!(!prompt.contains(SKILLS_PLACEHOLDER));
    }

    #[test]
    fn missing_prompt_file_is_a_clear_error() {
        let mut config = crate::config::built_in();
        config.system_prompt_path = Some("/nonexistent/prompt.md".into());
        let err = system_prompt(&config, Path::new("/w"), "").unwrap_err().0;
        assert!(
            err.starts_with("/nonexistent/prompt.md: cannot read the system prompt file"),
            "{err}"
        );
    }
}
