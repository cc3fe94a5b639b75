//! Tests of the front-matter reader.

use super::*;
use pretty_assertions::assert_eq;

fn text(s: &str) -> YamlValue {
    YamlValue::Text(s.to_string())
}

fn entries(yaml: &str) -> Vec<(String, YamlValue)> {
    parse(yaml).unwrap()
}

#[test]
fn splits_front_matter_with_bom_and_crlf() {
    assert_eq!(
        split("\u{feff}---\r\nname: x\r\n---\r\n\r\n# Body\r\nline\r\n").unwrap(),
        SplitDocument {
            yaml: "name: x\n".to_string(),
            body: "# Body\nline".to_string(),
        }
    );
    assert_eq!(
        split("# no front matter\n").unwrap_err(),
        "it does not start with front matter (a `---` line)"
    );
    assert_eq!(
        split("---\nname: x\n").unwrap_err(),
        "its front matter has no closing `---` line"
    );
}

#[test]
fn reads_scalars_lists_and_maps() {
    let yaml = "\
# a comment
name: demo   # trailing comment
single: 'it''s'
double: \"tab\\there \\\"q\\\" \\u00e9\"
url: https://example.com/a#b
empty:
tilde: ~
list:
  - a
  - 'b c'
compact:
- x
- y
flow: [read_file, \"bash\", {k: v}]
nested:
  version: 1.0
  deep:
    more: yes
  items:
    - name: one
      kind: first
    - two
";
    assert_eq!(
        entries(yaml),
        vec![
            ("name".into(), text("demo")),
            ("single".into(), text("it's")),
            ("double".into(), text("tab\there \"q\" é")),
            ("url".into(), text("https://example.com/a#b")),
            ("empty".into(), text("")),
            ("tilde".into(), text("")),
            ("list".into(), YamlValue::List(vec![text("a"), text("b c")])),
            ("compact".into(), YamlValue::List(vec![text("x"), text("y")])),
            (
                "flow".into(),
                YamlValue::List(vec![
                    text("read_file"),
                    text("bash"),
                    YamlValue::Map(vec![("k".into(), text("v"))]),
                ])
            ),
            (
                "nested".into(),
                YamlValue::Map(vec![
                    ("version".into(), text("1.0")),
                    ("deep".into(), YamlValue::Map(vec![("more".into(), text("yes"))])),
                    (
                        "items".into(),
                        YamlValue::List(vec![
                            YamlValue::Map(vec![
                                ("name".into(), text("one")),
                                ("kind".into(), text("first")),
                            ]),
                            text("two"),
                        ])
                    ),
                ])
            ),
        ]
    );
}

#[test]
fn reads_multi_line_scalars() {
    let yaml = "\
folded: >
  first line
  same paragraph

  second paragraph
    indented stays
  last
literal: |-
  keep
    these

  lines
keep: |+
  a

plain: starts here
  and goes on

  with a break
quoted: \"spans
  two lines\"
next: done
";
    assert_eq!(
        entries(yaml),
        vec![
            (
                "folded".into(),
                text("first line same paragraph\nsecond paragraph\n  indented stays\nlast\n")
            ),
            ("literal".into(), text("keep\n  these\n\nlines")),
            ("keep".into(), text("a\n\n")),
            ("plain".into(), text("starts here and goes on\nwith a break")),
            ("quoted".into(), text("spans two lines")),
            ("next".into(), text("done")),
        ]
    );
}

#[test]
fn reports_what_it_cannot_read() {
    let misplaced = parse("name: x\n  oops: y\n").unwrap_err();
    assert_eq!(
        misplaced,
        "line 2 column 7: mapping values are not allowed in this context (a value that contains `: ` must be quoted)"
    );
    // The mistake skills make most often: an unquoted description with `: ` in it.
    assert!(
        parse("description: Use it when: the tests fail\n")
            .unwrap_err()
            .ends_with("(a value that contains `: ` must be quoted)")
    );
    assert_eq!(
        parse("just text\n").unwrap_err(),
        "line 1: expected `key: value` lines"
    );
    for unclosed in [
        "name: \"open\n",
        "tools: [a, b\n",
        "name: x\n\tdescription: tab\n",
    ] {
        let err = parse(unclosed).unwrap_err();
        assert!(err.starts_with("line "), "{unclosed:?}: {err}");
    }
    assert_eq!(
        parse("- a\n").unwrap_err(),
        "line 1: the front matter must be `key: value` lines, not a list"
    );
}

#[test]
fn anchors_and_aliases_read_and_cannot_explode() {
    assert_eq!(
        entries("base: &b [a, b]\ncopy: *b\n"),
        vec![
            ("base".into(), YamlValue::List(vec![text("a"), text("b")])),
            ("copy".into(), YamlValue::List(vec![text("a"), text("b")])),
        ]
    );
    // Each level doubles the one before: 2^40 values if expanded.
    let mut laughs = String::from("l0: &l0 [x, x]\n");
    for level in 1..40 {
        let previous = level - 1;
        laughs.push_str(&format!("l{level}: &l{level} [*l{previous}, *l{previous}]\n"));
    }
    assert!(
        parse(&laughs)
            .unwrap_err()
            .ends_with("more than 100000 values (aliases expand too far)")
    );
    // Aliases nested inside aliases cannot go past the nesting limit either.
    let mut deep = String::from("d0: &d0 [x]\n");
    for level in 1..200 {
        let previous = level - 1;
        deep.push_str(&format!("d{level}: &d{level} [*d{previous}]\n"));
    }
    assert!(
        parse(&deep)
            .unwrap_err()
            .ends_with("nested more than 64 levels deep")
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    // Found by tests/fuzz: each level recursed, so deep enough nesting crashed.
    let flow = format!("meta: {}x{}\n", "{a: ".repeat(20_000), "}".repeat(20_000));
    assert_eq!(
        parse(&flow).unwrap_err(),
        "line 1: nested more than 64 levels deep"
    );
    let lists = format!("meta:\n  {}x\n", "- ".repeat(20_000));
    assert!(
        parse(&lists)
            .unwrap_err()
            .ends_with("nested more than 64 levels deep")
    );
    // Dashes at the key's own column are one list of empty items, as YAML reads them.
    let dashes = format!("meta:\n{}", "-\n".repeat(20_000));
    assert!(matches!(&entries(&dashes)[0].1, YamlValue::List(items) if items.len() == 20_000));
    // Nesting a skill could really use still reads.
    let shallow = format!("meta: {}x{}\n", "[".repeat(10), "]".repeat(10));
    assert!(parse(&shallow).is_ok());
    let long = format!(
        "tools:\n{}maps:\n{}",
        "- a\n".repeat(500),
        "- k: v\n  j: w\n".repeat(500)
    );
    let fields = entries(&long);
    assert!(matches!(&fields[0].1, YamlValue::List(items) if items.len() == 500));
    assert!(matches!(&fields[1].1, YamlValue::List(items) if items.len() == 500));
}

/// Front matter shaped like the skills of the anthropics/skills repository: long
/// descriptions folded over lines, literal blocks, quoted values with escapes and
/// continuation lines, license and metadata fields.
#[test]
fn reads_block_and_quoted_scalars_as_yaml_specifies() {
    let yaml = "\
name: pdf-forms
description: >-
  Fill in PDF forms and extract their fields. Use this skill when the
  person hands over a PDF with fields to complete, then
  instructions in the form decide the order.
literal: |
  Review a diff before it is committed.
  Use it when asked to review, then
  instructions follow.
clip_folded: >
  one
  two

kept: |+
  a

stripped_literal: |-
  a
  b

indicator: |2
    two more spaces
  kept
escaped_break: \"Create spreadsheets \\
  and charts\"
single_multi: 'first

  second ''quoted'''
tab_escape: \"a\\tb\"
license: Proprietary. LICENSE.txt has complete terms
";
    assert_eq!(
        entries(yaml),
        vec![
            ("name".into(), text("pdf-forms")),
            (
                "description".into(),
                text(
                    "Fill in PDF forms and extract their fields. Use this skill when the person hands over a PDF with fields to complete, then instructions in the form decide the order."
                )
            ),
            (
                "literal".into(),
                text(
                    "Review a diff before it is committed.\nUse it when asked to review, then\ninstructions follow.\n"
                )
            ),
            ("clip_folded".into(), text("one two\n")),
            ("kept".into(), text("a\n\n")),
            ("stripped_literal".into(), text("a\nb")),
            ("indicator".into(), text("  two more spaces\nkept\n")),
            ("escaped_break".into(), text("Create spreadsheets and charts")),
            ("single_multi".into(), text("first\nsecond 'quoted'")),
            ("tab_escape".into(), text("a\tb")),
            (
                "license".into(),
                text("Proprietary. LICENSE.txt has complete terms")
            ),
        ]
    );
}
