//! What a test does where the machine lacks something it needs (Landlock, a
//! pseudo-terminal, tmux, ...): a test that returned quietly would count as passed while
//! checking nothing. Here the skip is seen: under `CI` (set and not `false` or `0`) the
//! test fails unless `MINIAGENT_TEST_WITHOUT` names the capability as absent on purpose
//! (comma-separated: `MINIAGENT_TEST_WITHOUT=landlock,pty`); elsewhere it writes one line
//! of a fixed form, [`MARK`], to the process's own stderr (not libtest's captured one),
//! which `.ci/run` counts.
//!
//! The capabilities the suite names: `landlock`, `landlock-tcp` (Landlock ABI 4),
//! `landlock-scope` (Landlock ABI 6), `outside-folder` (a writable folder outside the temp folder), `pty`, `renameat2`
//! (`RENAME_EXCHANGE` on the temp folder's file system), `tmux`, `root`, and the programs
//! a test runs as a person's command would (`git`, `node`, `npm`, `python3`).
//!
//! Self-contained (std only): the core crate's unit tests include it by path too.

use std::fmt::Display;
use std::io::Write;

/// How every skip line begins: `miniagent-test skipped: CAPABILITY: TEST: WHY`.
pub const MARK: &str = "miniagent-test skipped:";

/// The variable that names capabilities missing on purpose.
pub const WITHOUT: &str = "MINIAGENT_TEST_WITHOUT";

/// `found`'s value, or `None` after [`missing`] said why (the caller returns).
pub fn needs<T, E: Display>(capability: &str, found: Result<T, E>) -> Option<T> {
    match found {
        Ok(value) => Some(value),
        Err(why) => {
            missing(capability, why);
            None
        }
    }
}

/// Reports that this test cannot check what it is for because `capability` is missing
/// (`why`): fails the test under CI unless that absence was named on purpose, else
/// writes the skip line. The caller returns after it (or skips the part that needs it).
pub fn missing(capability: &str, why: impl Display) {
    let test = std::thread::current()
        .name()
        .unwrap_or("(unnamed test)")
        .to_string();
    let (ci, without) = (std::env::var("CI").ok(), std::env::var(WITHOUT).ok());
    if fails(ci.as_deref(), without.as_deref(), capability) {
        panic!(
            "{test} needs {capability}, missing here ({why}); under CI a test does not pass \
             without checking: provide it, or set {WITHOUT}={capability} to skip on purpose"
        );
    }
    // One write, straight to the process's stderr: libtest captures `eprintln!`.
    let line = format!("{MARK} {capability}: {test}: {why}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// Whether a missing `capability` fails the test: under CI (`ci` set to something other
/// than `false` or `0`, as CI services set it) unless `without` names it.
fn fails(ci: Option<&str>, without: Option<&str>, capability: &str) -> bool {
    let in_ci = ci.is_some_and(|value| {
        let value = value.trim();
        !value.is_empty() && value != "0" && !value.eq_ignore_ascii_case("false")
    });
    let on_purpose = without
        .unwrap_or_default()
        .split(',')
        .any(|name| name.trim() == capability);
    in_ci && !on_purpose
}

#[cfg(test)]
mod tests {
    use super::fails;

    #[test]
    fn a_missing_capability_fails_only_under_ci_and_only_when_not_named() {
        let cases = [
            (None, None, false),
            (Some("false"), None, false),
            (Some("0"), None, false),
            (Some(""), None, false),
            (Some("true"), None, true),
            (Some("1"), Some(""), true),
            (Some("true"), Some("pty"), true),
            (Some("true"), Some("landlock-tcp"), true),
            (Some("true"), Some("landlock"), false),
            (Some("true"), Some("pty, landlock"), false),
            (None, Some("landlock"), false),
        ];
        let seen: Vec<bool> = cases
            .iter()
            .map(|(ci, without, _)| fails(*ci, *without, "landlock"))
            .collect();
        let expected: Vec<bool> = cases.iter().map(|case| case.2).collect();
        assert_eq!(seen, expected, "{cases:?}");
    }
}
