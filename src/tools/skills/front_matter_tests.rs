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
    assert_eq!(
        parse("name: x\n  oops: y\n").unwrap_err(),
        "line 2: unexpected indentation"
    );
    assert_eq!(parse("just text\n").unwrap_err(), "line 1: expected `key: value`");
    assert_eq!(
        parse("name: \"open\n").unwrap_err(),
        "line 1: the quoted value is never closed"
    );
    assert_eq!(
        parse("tools: [a, b\n").unwrap_err(),
        "line 1: the bracketed value is never closed"
    );
    assert_eq!(
        parse("- a\n").unwrap_err(),
        "line 1: the front matter must be `key: value` lines, not a list"
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    // Found by tests/fuzz: each level recursed, so deep enough nesting crashed.
    let flow = format!("meta: {}x{}\n", "{a: ".repeat(20_000), "}".repeat(20_000));
    assert_eq!(
        parse(&flow).unwrap_err(),
        "line 1: brackets nested more than 64 levels deep"
    );
    let lists = format!("meta:\n  {}x\n", "- ".repeat(20_000));
    assert_eq!(
        parse(&lists).unwrap_err(),
        "line 2: nested more than 64 levels deep"
    );
    let dashes = format!("meta:\n{}", "-\n".repeat(20_000));
    assert!(
        parse(&dashes)
            .unwrap_err()
            .ends_with("nested more than 64 levels deep")
    );
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
