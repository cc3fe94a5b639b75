//! Fuzzy matching of file paths, as the `@` picker ranks them: the query's characters in
//! order anywhere in the path, ranked by where they fall. A match at the start of a
//! name or word (after `/`, `_`, `-`, `.`, a space, or a lower-to-upper case change)
//! counts most, then one right after the previous match, and matches in the file's own
//! name more than in its folders; gaps cost a little. A lower-case query ignores case;
//! one with a capital letter matches case exactly (smart case).
//!
//! One pass forward finds where the earliest match ends, one pass back from there finds
//! the tightest match ending there (each character as late as it can be, which puts the
//! last ones in the file's name): linear in the path, no allocation but the result.

/// A path that matched: its score (higher is better) and the byte offsets of the
/// matched characters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matched {
    pub score: i64,
    pub positions: Vec<usize>,
}

const MATCH: i64 = 16;
const BOUNDARY: i64 = 24;
const CONSECUTIVE: i64 = 24;
const IN_NAME: i64 = 12;
const FIRST_CHAR: i64 = 8;
/// A gap costs this to open and [`GAP`] a character after the first.
const GAP_START: i64 = 6;
const GAP: i64 = 1;
/// Gaps longer than this cost no more: a far match is already well down.
const MAX_GAP: i64 = 12;

/// The query as the matcher uses it: its characters, and whether case matters.
pub struct Query {
    chars: Vec<char>,
    exact_case: bool,
}

impl Query {
    pub fn new(text: &str) -> Self {
        Query {
            chars: text.chars().collect(),
            exact_case: text.chars().any(char::is_uppercase),
        }
    }

    fn same(&self, query: char, path: char) -> bool {
        if self.exact_case || query == path {
            query == path
        } else if path.is_ascii() {
            path.to_ascii_lowercase() == query
        } else {
            path.to_lowercase().eq(std::iter::once(query))
        }
    }

    /// Whether `path` holds the query's characters in order, and how well; `None` if not.
    pub fn score(&self, path: &str) -> Option<Matched> {
        if self.chars.is_empty() {
            return Some(Matched {
                score: 0,
                positions: Vec::new(),
            });
        }
        // Forward: where the earliest match ends (the byte after it).
        let mut next = 0;
        let mut end = None;
        for (at, c) in path.char_indices() {
            if self.same(self.chars[next], c) {
                next += 1;
                if next == self.chars.len() {
                    end = Some(at + c.len_utf8());
                    break;
                }
            }
        }
        let end = end?;
        // Backward from there: the tightest match, each character as late as it can be.
        let mut positions = vec![0; self.chars.len()];
        let mut wanted = self.chars.len();
        for (at, c) in path[..end].char_indices().rev() {
            if wanted > 0 && self.same(self.chars[wanted - 1], c) {
                wanted -= 1;
                positions[wanted] = at;
            }
        }
        Some(Matched {
            score: score_of(path, &positions),
            positions,
        })
    }
}

fn is_separator(c: char) -> bool {
    matches!(c, '/' | '_' | '-' | '.' | ' ')
}

/// The score of matching at `positions` (byte offsets of characters) in `path`.
fn score_of(path: &str, positions: &[usize]) -> i64 {
    let name_start = path.rfind('/').map_or(0, |slash| slash + 1);
    let mut score = 0;
    let mut previous: Option<usize> = None;
    for &at in positions {
        score += MATCH;
        let before = path[..at].chars().next_back();
        let here = path[at..].chars().next().unwrap_or_default();
        let boundary = match before {
            None => true,
            Some(before) => is_separator(before) || (before.is_lowercase() && here.is_uppercase()),
        };
        if boundary {
            score += BOUNDARY;
        }
        if at >= name_start {
            score += IN_NAME;
        }
        if at == name_start {
            score += FIRST_CHAR;
        }
        match previous {
            Some(last) => {
                let gap = path[last..at].chars().count() as i64 - 1;
                if gap == 0 {
                    score += CONSECUTIVE;
                } else {
                    score -= GAP_START + GAP * (gap - 1).min(MAX_GAP);
                }
            }
            // Where the match starts costs a little: earlier is closer to what was meant.
            None => score -= (path[..at].chars().count() as i64).min(MAX_GAP),
        }
        previous = Some(at);
    }
    score
}

/// The indices of `paths` matching `query`, best first (ties: the shorter path, then by
/// name), at most `limit`; `among` narrows the search to those indices (the matches of
/// a shorter query this one extends).
pub fn rank(query: &Query, paths: &[String], among: Option<&[usize]>, limit: usize) -> Ranked {
    let mut scored: Vec<(i64, usize)> = match among {
        Some(among) => among
            .iter()
            .filter_map(|&index| Some((query.score(paths.get(index)?)?.score, index)))
            .collect(),
        None => paths
            .iter()
            .enumerate()
            .filter_map(|(index, path)| Some((query.score(path)?.score, index)))
            .collect(),
    };
    let all: Vec<usize> = scored.iter().map(|&(_, index)| index).collect();
    let order = |a: &(i64, usize), b: &(i64, usize)| {
        b.0.cmp(&a.0)
            .then(paths[a.1].len().cmp(&paths[b.1].len()))
            .then(paths[a.1].cmp(&paths[b.1]))
    };
    if scored.len() > limit && limit > 0 {
        scored.select_nth_unstable_by(limit - 1, order);
        scored.truncate(limit);
    }
    scored.sort_unstable_by(order);
    Ranked {
        best: scored.into_iter().map(|(_, index)| index).collect(),
        all,
    }
}

/// What [`rank`] found: the best, in order, and every match (for narrowing the next).
pub struct Ranked {
    pub best: Vec<usize>,
    pub all: Vec<usize>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn ranked(query: &str, paths: &[&str]) -> Vec<String> {
        let paths: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        rank(&Query::new(query), &paths, None, 10)
            .best
            .into_iter()
            .map(|i| paths[i].clone())
            .collect()
    }

    #[test]
    fn characters_must_come_in_order() {
        let query = Query::new("sma");
        assert!(query.score("src/main.rs").is_some());
        assert_eq!(query.score("mas"), None);
        assert_eq!(Query::new("x").score("src/main.rs"), None);
        assert_eq!(
            Query::new("").score("anything"),
            Some(Matched {
                score: 0,
                positions: vec![]
            })
        );
    }

    #[test]
    fn word_starts_and_runs_rank_first() {
        assert_eq!(
            ranked(
                "src/ma",
                &[
                    "docs/src/format.md",
                    "src/cmd/mail.rs",
                    "src/main.rs",
                    "tests/src_map.rs"
                ]
            ),
            vec!["src/main.rs", "src/cmd/mail.rs", "docs/src/format.md"]
        );
        // The file's own name over its folders.
        assert_eq!(
            ranked("main", &["main/lib/x.rs", "src/main.rs", "domain/remain.txt"]),
            vec!["src/main.rs", "main/lib/x.rs", "domain/remain.txt"]
        );
        // Initials of words, camel case included.
        assert_eq!(
            ranked("fb", &["foobar.rs", "foo_bar.rs", "FooBar.rs"]),
            vec!["FooBar.rs", "foo_bar.rs", "foobar.rs"]
        );
    }

    #[test]
    fn ties_go_to_the_shorter_path_then_by_name() {
        assert_eq!(ranked("a", &["b/a", "a", "c/a"]), vec!["a", "b/a", "c/a"]);
    }

    #[test]
    fn smart_case_and_wide_characters() {
        assert_eq!(
            ranked("readme", &["README.md", "src/read_me.rs"]),
            vec!["README.md", "src/read_me.rs"]
        );
        assert_eq!(ranked("README", &["readme.md", "README.md"]), vec!["README.md"]);
        let matched = Query::new("日本").score("docs/日本語.md").unwrap();
        assert_eq!(matched.positions, vec![5, 8]);
    }

    #[test]
    fn the_tight_match_is_found_not_the_first() {
        // "ab" first at 0..=5 ("a....b"), tightest at the end ("ab").
        let matched = Query::new("ab").score("a/x/y/ab").unwrap();
        assert_eq!(matched.positions, vec![6, 7]);
    }

    #[test]
    fn narrowing_to_earlier_matches_and_the_limit() {
        let paths: Vec<String> = (0..100).map(|n| format!("dir/file{n}.rs")).collect();
        let first = rank(&Query::new("file"), &paths, None, 5);
        assert_eq!(first.all.len(), 100);
        assert_eq!(
            first.best.iter().map(|&i| paths[i].as_str()).collect::<Vec<_>>(),
            vec![
                "dir/file0.rs",
                "dir/file1.rs",
                "dir/file2.rs",
                "dir/file3.rs",
                "dir/file4.rs"
            ]
        );
        let second = rank(&Query::new("file9"), &paths, Some(&first.all), 3);
        assert_eq!(
            second.best.iter().map(|&i| paths[i].as_str()).collect::<Vec<_>>(),
            vec!["dir/file9.rs", "dir/file90.rs", "dir/file91.rs"]
        );
        // file9, file90…file99, and file19…file89 (a 9 after the 1…8).
        assert_eq!(second.all.len(), 19);
    }
}
