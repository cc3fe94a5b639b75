//! SKILL.md front matter: its syntax (BOM, CRLF, quoting, block scalars), the fields the
//! Agent Skills specification allows, and what a malformed file does.

use super::*;
use pretty_assertions::assert_eq;

#[test]
fn front_matter_with_bom_crlf_quotes_and_folded_values() {
    let workspace = TempDir::new();
    let text = "\u{feff}---\r\n\
                name: \"windows-skill\"\r\n\
                description: >\r\n\
                \x20 Written on Windows,\r\n\
                \x20 folded over lines.\r\n\
                license: 'Apache-2.0'\r\n\
                metadata:\r\n\
                \x20 version: 1.0\r\n\
                \x20 author: \"Someone: quoted\"\r\n\
                \x20 extra:\r\n\
                \x20   nested: kept\r\n\
                ---\r\n\
                \r\n\
                # Steps\r\n\
                Do the thing.\r\n";
    workspace.write(".miniagent/skills/windows-skill/SKILL.md", text);
    let set = SkillSet::discover(None, None, workspace.path());
    assert_eq!(set.warnings(), [] as [String; 0]);
    assert_eq!(
        set.skills(),
        [Skill {
            name: "windows-skill".to_string(),
            description: "Written on Windows, folded over lines.".to_string(),
            license: Some("Apache-2.0".to_string()),
            allowed_tools: None,
            compatibility: None,
            metadata: json!({"version": "1.0", "author": "Someone: quoted", "extra": {"nested": "kept"}}),
            root: real(&workspace).join(".miniagent/skills/windows-skill"),
            body: "# Steps\nDo the thing.".to_string(),
            source: SkillSource::Workspace,
        }]
    );
}

#[test]
fn literal_and_single_quoted_descriptions() {
    let workspace = TempDir::new();
    workspace.write(
        ".miniagent/skills/lit/SKILL.md",
        "---\nname: lit\ndescription: |\n  Two lines\n  kept apart.\n---\nbody\n",
    );
    workspace.write(
        ".miniagent/skills/quoted/SKILL.md",
        "---\nname: 'quoted'\ndescription: 'It''s: a quote'\n---\nbody\n",
    );
    let set = SkillSet::discover(None, None, workspace.path());
    let descriptions: Vec<(&str, &str)> = set
        .skills()
        .iter()
        .map(|skill| (skill.name.as_str(), skill.description.as_str()))
        .collect();
    assert_eq!(
        descriptions,
        [("lit", "Two lines\nkept apart."), ("quoted", "It's: a quote")]
    );
    // The prompt keeps one line per skill whatever breaks the description holds.
    assert!(set.prompt_metadata().contains("- lit: Two lines kept apart.\n"));
}

#[test]
fn allowed_tools_as_a_string_or_a_list() {
    let workspace = TempDir::new();
    let skill = |name: &str, tools: &str| {
        workspace.write(
            format!(".miniagent/skills/{name}/SKILL.md"),
            format!("---\nname: {name}\ndescription: d\n{tools}---\nbody\n"),
        );
    };
    skill("commas", "allowed-tools: bash, read_file\n");
    skill("spaces", "allowed-tools: bash  read_file Bash(git log:*)\n");
    skill("list", "allowed-tools:\n  - bash\n  - \"read_file\"\n");
    skill("compact-list", "allowed-tools:\n- edit_file\n");
    skill("flow", "allowed-tools: [bash, read_file]\n");
    skill("none", "");
    skill("empty", "allowed-tools: \"\"\n");
    let set = SkillSet::discover(None, None, workspace.path());
    let tools: Vec<(&str, Option<Vec<String>>)> = set
        .skills()
        .iter()
        .map(|skill| (skill.name.as_str(), skill.allowed_tools.clone()))
        .collect();
    let some = |names: &[&str]| Some(names.iter().map(|name| name.to_string()).collect::<Vec<_>>());
    assert_eq!(
        tools,
        vec![
            ("commas", some(&["bash", "read_file"])),
            ("compact-list", some(&["edit_file"])),
            ("empty", None),
            ("flow", some(&["bash", "read_file"])),
            ("list", some(&["bash", "read_file"])),
            ("none", None),
            ("spaces", some(&["bash", "read_file", "Bash(git log:*)"])),
        ]
    );
}

#[test]
fn malformed_skill_files_are_skipped_with_a_warning() {
    let workspace = TempDir::new();
    let dir = ".miniagent/skills";
    workspace.write(format!("{dir}/good/SKILL.md"), simple_skill("good", "works"));
    workspace.write(format!("{dir}/no-front-matter/SKILL.md"), "# Just Markdown\n");
    workspace.write(
        format!("{dir}/not-closed/SKILL.md"),
        "---\nname: x\ndescription: y\n",
    );
    workspace.write(
        format!("{dir}/no-description/SKILL.md"),
        "---\nname: lonely\n---\nbody\n",
    );
    workspace.write(
        format!("{dir}/bad-indent/SKILL.md"),
        "---\nname: x\n   description: y\n---\n",
    );
    workspace.write(
        format!("{dir}/list-name/SKILL.md"),
        "---\nname: [a, b]\ndescription: y\n---\n",
    );
    workspace.write(
        format!("{dir}/two-line-name/SKILL.md"),
        "---\nname: \"a\\nb\"\ndescription: y\n---\n",
    );
    workspace.write(
        format!("{dir}/bad-metadata/SKILL.md"),
        "---\nname: meta\ndescription: d\nmetadata: just text\n---\n",
    );

    let set = SkillSet::discover(None, None, workspace.path());

    let names: Vec<&str> = set.skills().iter().map(|skill| skill.name.as_str()).collect();
    assert_eq!(names, ["good"]);
    let file = |folder: &str| {
        real(&workspace)
            .join(dir)
            .join(folder)
            .join("SKILL.md")
            .display()
            .to_string()
    };
    assert_eq!(
        set.warnings(),
        [
            format!(
                "skipped {}: front matter line 2 column 15: mapping values are not allowed in this context (a value that contains `: ` must be quoted)",
                file("bad-indent")
            ),
            format!(
                "skipped {}: its `metadata` must be a map of `key: value` lines, not text",
                file("bad-metadata")
            ),
            format!(
                "skipped {}: its `name` must be text, not a list",
                file("list-name")
            ),
            format!(
                "skipped {}: its front matter has no `description`",
                file("no-description")
            ),
            format!(
                "skipped {}: it does not start with front matter (a `---` line)",
                file("no-front-matter")
            ),
            format!(
                "skipped {}: its front matter has no closing `---` line",
                file("not-closed")
            ),
            format!(
                "skipped {}: its `name` contains a line break or control character",
                file("two-line-name")
            ),
        ]
    );
}

/// The fields of the Agent Skills specification: `compatibility` is read, a field it does
/// not define is a warning, a field of the wrong type skips the skill with the reason, and
/// the limits it sets (name characters, compatibility length) are warnings.
#[test]
fn front_matter_fields_are_checked_against_the_specification() {
    let workspace = TempDir::new();
    let dir = ".miniagent/skills";
    let write = |folder: &str, front: &str| {
        workspace.write(
            format!("{dir}/{folder}/SKILL.md"),
            format!("---\n{front}---\nbody\n"),
        );
    };
    write(
        "full",
        "name: full\n\
         description: >\n  Folded over\n  two lines.\n\
         license: MIT\n\
         compatibility: |\n  Needs git and\n  network access.\n\
         metadata:\n  author: someone\n\
         allowed-tools: Bash(git:*) Read\n",
    );
    write("extra", "name: extra\ndescription: d\nversion: 2\nauthor: me\n");
    write(
        "bad-license",
        "name: bad-license\ndescription: d\nlicense: [MIT, Apache-2.0]\n",
    );
    write(
        "bad-compat",
        "name: bad-compat\ndescription: d\ncompatibility:\n  os: linux\n",
    );
    write(
        "bad-tools",
        "name: bad-tools\ndescription: d\nallowed-tools:\n  bash: yes\n",
    );
    write(
        "bad-entry",
        "name: bad-entry\ndescription: d\nallowed-tools:\n  - [bash]\n",
    );
    write(
        "long-compat",
        &format!(
            "name: long-compat\ndescription: d\ncompatibility: {}\n",
            "x".repeat(501)
        ),
    );
    write("odd-name", "name: Odd_Name\ndescription: d\n");

    let set = SkillSet::discover(None, None, workspace.path());

    let full = set.get("full").unwrap();
    assert_eq!(full.description, "Folded over two lines.");
    assert_eq!(
        full.compatibility.as_deref(),
        Some("Needs git and\nnetwork access.")
    );
    assert_eq!(full.license.as_deref(), Some("MIT"));
    assert_eq!(full.metadata, json!({"author": "someone"}));
    assert_eq!(
        full.allowed_tools,
        Some(vec!["Bash(git:*)".to_string(), "Read".to_string()])
    );
    let names: Vec<&str> = set.skills().iter().map(|skill| skill.name.as_str()).collect();
    assert_eq!(names, ["Odd_Name", "extra", "full", "long-compat"]);
    let file = |folder: &str| {
        real(&workspace)
            .join(dir)
            .join(folder)
            .join("SKILL.md")
            .display()
            .to_string()
    };
    assert_eq!(
        set.warnings(),
        [
            format!(
                "skipped {}: its `compatibility` must be text, not a map",
                file("bad-compat")
            ),
            format!(
                "skipped {}: an `allowed-tools` entry must be a tool name, not a list",
                file("bad-entry")
            ),
            format!(
                "skipped {}: its `license` must be text, not a list",
                file("bad-license")
            ),
            format!(
                "skipped {}: its `allowed-tools` must be a list of tool names or one line of them, not a map",
                file("bad-tools")
            ),
            format!(
                "{}: front matter fields the Agent Skills specification does not define are ignored: `version`, `author` (keep such details under `metadata`)",
                file("extra")
            ),
            format!(
                "{}: its `compatibility` is longer than the 500 characters the Agent Skills specification allows",
                file("long-compat")
            ),
            format!(
                "{}: its `name` `Odd_Name` should be lowercase letters, digits and single hyphens (at most 64), as the Agent Skills specification asks; other agents may not load it",
                file("odd-name")
            ),
        ]
    );
}

#[tokio::test]
async fn get_skill_states_the_skills_requirements() {
    let workspace = TempDir::new();
    workspace.write(
        ".miniagent/skills/needs/SKILL.md",
        "---\nname: needs\ndescription: d\ncompatibility: Requires docker.\n---\nSteps.\n",
    );
    let tool = GetSkillTool::new(Arc::new(SkillSet::discover(None, None, workspace.path())));
    let root = real(&workspace).join(".miniagent/skills/needs");
    let output = call(&tool, json!({"skill_name": "needs"}), workspace.path()).await;
    assert_eq!(
        output,
        ToolOutput::ok(format!(
            "Skill `needs` (folder: {})\nRequirements: Requires docker.\n\nSteps.\n",
            root.display()
        ))
    );
}
