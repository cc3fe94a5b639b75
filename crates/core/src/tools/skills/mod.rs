//! Agent Skills with progressive disclosure: folders holding a `SKILL.md` (YAML front
//! matter, then Markdown instructions) and any scripts, references and assets it uses.
//!
//! Level 1 is each skill's name and description in the system prompt
//! ([`SkillSet::prompt_metadata`]); level 2 is the body, loaded on demand by the `get_skill`
//! tool ([`GetSkillTool`]) with its relative paths made absolute; level 3 is the files
//! themselves, which the agent reads or runs with its other tools ([`SkillSet::roots`]).
//!
//! The front matter is read by a YAML parser ([`front_matter`]) and then checked against
//! the fields the Agent Skills specification defines (`name`, `description`, `license`,
//! `compatibility`, `metadata`, `allowed-tools`): a field it does not define, a name
//! outside its rule or an over-long `compatibility` is a warning; a field of the wrong
//! type skips the skill with the reason, since a misread `allowed-tools` would approve
//! the wrong tools.

mod bundled;
pub(crate) mod front_matter;
mod get_skill;
mod pre_approval;
pub(crate) use pre_approval::glob_matches;
mod rewrite;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

pub use bundled::{BUNDLED_FILES, BundledFile, default_install_dir, install_bundled};
pub use get_skill::GetSkillTool;
pub use pre_approval::{CommandPattern, Grant, SkillApprovals};
pub use rewrite::rewrite_paths;

use front_matter::YamlValue;

/// The file that makes a folder a skill.
pub const SKILL_FILE: &str = "SKILL.md";
/// Where a workspace keeps its own skills, relative to the workspace root.
pub const WORKSPACE_SKILLS_DIR: &str = ".miniagent/skills";
/// Characters of a description the system prompt shows (the Agent Skills limit), so one
/// verbose skill cannot crowd every request.
const MAX_PROMPT_DESCRIPTION: usize = 1024;
/// How deep below a skills folder a `SKILL.md` is looked for (`group/skill/SKILL.md` is 2).
const MAX_DEPTH: usize = 3;
/// The largest `SKILL.md` read. A workspace's skills are read before the person trusts
/// it (to name them), so a huge or sparse one must not be read whole; and a body this
/// long would already be some 60,000 tokens when `get_skill` loads it.
const MAX_SKILL_FILE_BYTES: u64 = 256 * 1024;

/// The person's own skills folder inside miniagent's configuration folder.
pub fn user_skills_dir(config_dir: &Path) -> PathBuf {
    config_dir.join("skills")
}

/// Where a skill was found; later sources take precedence over earlier ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SkillSource {
    /// Shipped inside the binary and read from it; [`install_bundled`] writes their
    /// files out.
    Bundled,
    /// The person's own skills folder, shared by every workspace.
    User,
    /// The workspace's `.miniagent/skills/`.
    Workspace,
}

impl std::fmt::Display for SkillSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SkillSource::Bundled => "bundled",
            SkillSource::User => "user",
            SkillSource::Workspace => "workspace",
        })
    }
}

/// One skill, read from its `SKILL.md`.
#[derive(Clone, Debug, PartialEq)]
pub struct Skill {
    /// What `get_skill` is called with.
    pub name: String,
    /// When to use the skill; shown in the system prompt.
    pub description: String,
    pub license: Option<String>,
    /// The tools the skill pre-approves while it is in use (`allowed-tools`), as written;
    /// `None` when it names none ([`SkillApprovals`] reads them).
    pub allowed_tools: Option<Vec<String>>,
    /// What the skill needs of its environment (`compatibility`: a product, packages,
    /// network access), told to the model with the instructions.
    pub compatibility: Option<String>,
    /// The `metadata` map as JSON with text values (nested maps and lists kept as such);
    /// an empty object when absent.
    pub metadata: serde_json::Value,
    /// The skill's folder, absolute.
    pub root: PathBuf,
    /// The Markdown after the front matter, with `\n` line endings.
    pub body: String,
    pub source: SkillSource,
}

/// Why a `SKILL.md` is not a skill (no front matter, a required field missing, a name
/// with a line break): the skill is skipped and the reason is a warning.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotASkill(String);

impl Skill {
    /// The `SKILL.md` this skill was read from.
    pub fn skill_file(&self) -> PathBuf {
        self.root.join(SKILL_FILE)
    }

    /// Reads a skill from the text of its `SKILL.md`. Returns the skill and warnings about
    /// optional fields it had to ignore, or why the file is not a skill. Public so the
    /// fuzzer (`tests/fuzz`) can feed it text without the filesystem.
    pub fn parse(text: &str, root: PathBuf, source: SkillSource) -> Result<(Skill, Vec<String>), NotASkill> {
        Self::read_fields(text, root, source).map_err(NotASkill)
    }

    /// [`Self::parse`], the reason as text (the front matter's own helpers give text).
    fn read_fields(text: &str, root: PathBuf, source: SkillSource) -> Result<(Skill, Vec<String>), String> {
        let document = front_matter::split(text)?;
        let fields = front_matter::parse(&document.yaml).map_err(|err| format!("front matter {err}"))?;
        let field = |key: &str| {
            fields
                .iter()
                .find(|(name, _)| name == key)
                .map(|(_, value)| value)
        };
        let mut warnings = Vec::new();
        let unknown: Vec<String> = fields
            .iter()
            .filter(|(name, _)| !SPEC_FIELDS.contains(&name.as_str()) && name != "allowed_tools")
            .map(|(name, _)| format!("`{name}`"))
            .collect();
        if !unknown.is_empty() {
            warnings.push(format!(
                "front matter fields the Agent Skills specification does not define are ignored: {} (keep such details under `metadata`)",
                unknown.join(", ")
            ));
        }
        let name = required_text(field("name"), "name")?;
        // The name is a lookup key and a line of the system prompt; an escaped line break
        // in it could smuggle text into the prompt.
        if name.chars().any(char::is_control) {
            return Err("its `name` contains a line break or control character".to_string());
        }
        if !is_spec_name(&name) {
            warnings.push(format!(
                "its `name` `{name}` should be lowercase letters, digits and single hyphens (at most {MAX_NAME}), as the Agent Skills specification asks; other agents may not load it"
            ));
        }
        let description = required_text(field("description"), "description")?;
        if description.chars().count() > MAX_PROMPT_DESCRIPTION {
            warnings.push(format!(
                "its `description` is longer than {MAX_PROMPT_DESCRIPTION} characters; the system prompt shows only the start"
            ));
        }
        let license = optional_text(field("license"), "license")?;
        let compatibility = optional_text(field("compatibility"), "compatibility")?;
        if compatibility
            .as_ref()
            .is_some_and(|text| text.chars().count() > MAX_COMPATIBILITY)
        {
            warnings.push(format!(
                "its `compatibility` is longer than the {MAX_COMPATIBILITY} characters the Agent Skills specification allows"
            ));
        }
        let allowed_tools = match field("allowed-tools").or_else(|| field("allowed_tools")) {
            None => None,
            Some(value) => allowed_tools(value)?,
        };
        let metadata = match field("metadata") {
            Some(value @ YamlValue::Map(_)) => value.to_json(),
            Some(YamlValue::Text(text)) if text.is_empty() => serde_json::json!({}),
            None => serde_json::json!({}),
            Some(other) => {
                return Err(format!(
                    "its `metadata` must be a map of `key: value` lines, not {}",
                    kind(other)
                ));
            }
        };
        let skill = Skill {
            name,
            description,
            license,
            allowed_tools,
            compatibility,
            metadata,
            root,
            body: document.body,
            source,
        };
        Ok((skill, warnings))
    }
}

/// The front-matter fields the Agent Skills specification defines. `allowed_tools` is
/// also read, as an older spelling of `allowed-tools`.
const SPEC_FIELDS: [&str; 6] = [
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
];
/// The specification's limits on `name` and `compatibility`, in characters.
const MAX_NAME: usize = 64;
const MAX_COMPATIBILITY: usize = 500;

/// What kind of value `value` is, for an error message.
fn kind(value: &YamlValue) -> &'static str {
    match value {
        YamlValue::Text(_) => "text",
        YamlValue::List(_) => "a list",
        YamlValue::Map(_) => "a map",
    }
}

/// A field that must be text and not empty, trimmed.
fn required_text(value: Option<&YamlValue>, key: &str) -> Result<String, String> {
    match value {
        Some(YamlValue::Text(text)) if !text.trim().is_empty() => Ok(text.trim().to_string()),
        Some(YamlValue::Text(_)) | None => Err(format!("its front matter has no `{key}`")),
        Some(other) => Err(format!("its `{key}` must be text, not {}", kind(other))),
    }
}

/// A field that may be absent or empty but otherwise must be text, trimmed.
fn optional_text(value: Option<&YamlValue>, key: &str) -> Result<Option<String>, String> {
    match value {
        Some(YamlValue::Text(text)) if !text.trim().is_empty() => Ok(Some(text.trim().to_string())),
        Some(YamlValue::Text(_)) | None => Ok(None),
        Some(other) => Err(format!("its `{key}` must be text, not {}", kind(other))),
    }
}

/// The specification's name rule: lowercase ASCII letters, digits and hyphens, at most
/// [`MAX_NAME`], no hyphen at either end or twice in a row.
fn is_spec_name(name: &str) -> bool {
    name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// `allowed-tools` as a list of names: a YAML list, or one string separated by commas or
/// blanks (a blank inside parentheses, as in `Bash(git log:*)`, does not separate).
/// Empty means the skill pre-approves nothing; anything but names is an error, since a
/// misread pre-approval list could approve the wrong tools.
fn allowed_tools(value: &YamlValue) -> Result<Option<Vec<String>>, String> {
    let mut tools = Vec::new();
    match value {
        YamlValue::Text(text) => {
            let mut depth = 0usize;
            let mut current = String::new();
            for c in text.chars() {
                match c {
                    '(' => depth += 1,
                    ')' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                if depth == 0 && (c == ',' || c.is_whitespace()) {
                    tools.push(std::mem::take(&mut current));
                } else {
                    current.push(c);
                }
            }
            tools.push(current);
        }
        YamlValue::List(items) => {
            for item in items {
                match item {
                    YamlValue::Text(text) => tools.push(text.clone()),
                    other => {
                        return Err(format!(
                            "an `allowed-tools` entry must be a tool name, not {}",
                            kind(other)
                        ));
                    }
                }
            }
        }
        YamlValue::Map(_) => {
            return Err(
                "its `allowed-tools` must be a list of tool names or one line of them, not a map".to_string(),
            );
        }
    }
    let tools: Vec<String> = tools
        .iter()
        .map(|tool| tool.trim().to_string())
        .filter(|tool| !tool.is_empty())
        .collect();
    Ok((!tools.is_empty()).then_some(tools))
}

/// The skills of a session, found once at start, sorted by name.
#[derive(Clone, Debug, Default)]
pub struct SkillSet {
    skills: Vec<Skill>,
    warnings: Vec<String>,
}

impl SkillSet {
    /// Finds skills in (lowest to highest precedence) the bundled ones (read from the
    /// binary, with their files in `bundled`, the folder [`install_bundled`] wrote; nothing
    /// else in it is read), the user's folder and the workspace's `.miniagent/skills/`; a name found again in a more specific place
    /// replaces the earlier one and adds a warning naming both paths.
    ///
    /// A folder that does not exist is simply skipped. A `SKILL.md` that cannot be read,
    /// has no front matter, or lacks `name` or `description` is skipped with a warning.
    pub fn discover(bundled: Option<&Path>, user: Option<&Path>, workspace: &Path) -> SkillSet {
        Self::discover_in(bundled, user, Some(workspace))
    }

    /// [`Self::discover`]; without a workspace (one not trusted), its skills are left out.
    pub fn discover_in(bundled: Option<&Path>, user: Option<&Path>, workspace: Option<&Path>) -> SkillSet {
        let places = [
            (SkillSource::Bundled, bundled.map(Path::to_path_buf)),
            (SkillSource::User, user.map(Path::to_path_buf)),
            (
                SkillSource::Workspace,
                workspace.map(|w| w.join(WORKSPACE_SKILLS_DIR)),
            ),
        ];
        let mut warnings = Vec::new();
        let mut by_name: BTreeMap<String, Skill> = BTreeMap::new();
        // The same folder reached twice (a workspace that is the home folder, say) would
        // otherwise report every skill in it as replacing itself.
        let mut visited: HashSet<PathBuf> = HashSet::new();
        for (source, dir) in places {
            let Some(dir) = dir else { continue };
            if !dir.exists() {
                continue;
            }
            let canonical = dir.canonicalize().unwrap_or_else(|_| dir.clone());
            if !visited.insert(canonical.clone()) {
                continue;
            }
            let found = match source {
                // From the binary: the folder only holds their files.
                SkillSource::Bundled => {
                    let (skills, bundled_warnings) = bundled::bundled_skills(&canonical);
                    warnings.extend(bundled_warnings);
                    skills
                }
                SkillSource::User | SkillSource::Workspace => {
                    let mut files = Vec::new();
                    find_skill_files(&canonical, MAX_DEPTH, &mut files, &mut warnings);
                    files
                        .iter()
                        .filter_map(|file| read_skill(file, source, &mut warnings))
                        .collect()
                }
            };
            for skill in found {
                match by_name.get(&skill.name) {
                    Some(existing) if existing.source == source => {
                        warnings.push(format!(
                            "skill `{}` is defined twice: {} is used, {} is ignored",
                            skill.name,
                            existing.skill_file().display(),
                            skill.skill_file().display()
                        ));
                        continue;
                    }
                    Some(existing) => warnings.push(format!(
                        "skill `{}` in {} replaces the {} one in {}",
                        skill.name,
                        skill.skill_file().display(),
                        existing.source,
                        existing.skill_file().display()
                    )),
                    None => {}
                }
                by_name.insert(skill.name.clone(), skill);
            }
        }
        SkillSet {
            skills: by_name.into_values().collect(),
            warnings,
        }
    }

    /// A set of the given skills (sorted by name; the last of a repeated name wins), for
    /// callers that build skills themselves.
    pub fn from_skills(skills: Vec<Skill>) -> SkillSet {
        let by_name: BTreeMap<String, Skill> = skills
            .into_iter()
            .map(|skill| (skill.name.clone(), skill))
            .collect();
        SkillSet {
            skills: by_name.into_values().collect(),
            warnings: Vec::new(),
        }
    }

    /// Every skill, sorted by name.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The skill called `name`, exactly.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills
            .binary_search_by(|skill| skill.name.as_str().cmp(name))
            .ok()
            .and_then(|index| self.skills.get(index))
    }

    /// What discovery skipped or overrode, one sentence each, for the person to see.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// Level 1: the text that replaces `{SKILLS_METADATA}` in the system prompt: a short
    /// heading, one line per skill "- name: description", and one line saying that
    /// `get_skill` loads a skill's instructions. Empty when there are no skills.
    pub fn prompt_metadata(&self) -> String {
        if self.skills.is_empty() {
            return String::new();
        }
        let mut text = String::from("## Skills\n\n");
        for skill in &self.skills {
            // One line per skill, whatever line breaks a folded description kept.
            let description = skill.description.split_whitespace().collect::<Vec<_>>().join(" ");
            let description = match description.char_indices().nth(MAX_PROMPT_DESCRIPTION) {
                Some((cut, _)) => format!("{}…", &description[..cut]),
                None => description,
            };
            text.push_str(&format!("- {}: {description}\n", skill.name));
        }
        text.push_str(
            "\nWhen a task matches a skill, call `get_skill` with its name first to load its \
             instructions, and follow them.\n",
        );
        text
    }

    /// Skill folders, to be made readable roots for the file tools.
    pub fn roots(&self) -> Vec<PathBuf> {
        let mut roots: Vec<PathBuf> = self.skills.iter().map(|skill| skill.root.clone()).collect();
        roots.sort();
        roots.dedup();
        roots
    }
}

/// Collects `SKILL.md` files under `dir`: a folder holding one is a skill and is not
/// searched further (its subfolders are its own files); hidden folders are skipped.
fn find_skill_files(dir: &Path, depth: usize, files: &mut Vec<PathBuf>, warnings: &mut Vec<String>) {
    let skill_file = dir.join(SKILL_FILE);
    if skill_file.is_file() {
        files.push(skill_file);
        return;
    }
    if depth == 0 {
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) => {
            warnings.push(format!("cannot list skills in {}: {err}", dir.display()));
            return;
        }
    };
    let mut folders: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
        .map(|entry| entry.path())
        // `is_dir` follows symlinks, so a linked skill folder counts.
        .filter(|path| path.is_dir())
        .collect();
    folders.sort();
    for folder in folders {
        find_skill_files(&folder, depth - 1, files, warnings);
    }
}

/// Reads one `SKILL.md`; `None` (with a warning) when it is not a usable skill.
fn read_skill(file: &Path, source: SkillSource, warnings: &mut Vec<String>) -> Option<Skill> {
    use crate::tools::files::{Capped, human_size, read_at_most};
    let text = match read_at_most(file, MAX_SKILL_FILE_BYTES).map(|read| match read {
        Capped::Whole(bytes) => String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string()),
        Capped::TooLarge(size) => Err(format!(
            "it is {}, more than the {} a {SKILL_FILE} may be; keep long material in files beside it",
            human_size(size),
            human_size(MAX_SKILL_FILE_BYTES)
        )),
    }) {
        Ok(Ok(text)) => text,
        Ok(Err(why)) => {
            warnings.push(format!("skipped {}: {why}", file.display()));
            return None;
        }
        Err(err) => {
            warnings.push(format!("skipped {}: cannot read it: {err}", file.display()));
            return None;
        }
    };
    let folder = file.parent().unwrap_or(file);
    let root = folder.canonicalize().unwrap_or_else(|_| folder.to_path_buf());
    match Skill::parse(&text, root, source) {
        Ok((skill, field_warnings)) => {
            warnings.extend(
                field_warnings
                    .into_iter()
                    .map(|warning| format!("{}: {warning}", file.display())),
            );
            Some(skill)
        }
        Err(reason) => {
            warnings.push(format!("skipped {}: {reason}", file.display()));
            None
        }
    }
}
