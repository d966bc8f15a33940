//! Where a rule applies: its `path` and its own allowlists (gitleaks' per-rule `path` and
//! `[[rules.allowlists]]`). Checked per finding, after the scan, since the same bytes are
//! scanned once for every path that holds them.

use super::Match;
use crate::rules::{AllowTarget, Condition, Rule, RuleAllow, RuleError};
use regex::bytes::{Regex, RegexSet};

/// A rule's compiled scope; `None` for the rules that have none (almost all).
pub(super) struct Scope {
    path: Option<Regex>,
    allow: Vec<Allow>,
}

struct Allow {
    regexes: Option<RegexSet>,
    target: AllowTarget,
    stopwords: Vec<Vec<u8>>,
    paths: Option<RegexSet>,
    commits: Vec<String>,
    condition: Condition,
}

fn set(r: &Rule, field: &'static str, patterns: &[String]) -> Result<Option<RegexSet>, RuleError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    regex::bytes::RegexSetBuilder::new(patterns)
        .size_limit(1 << 22)
        .build()
        .map(Some)
        .map_err(|e| r.invalid(field, e.to_string()))
}

pub(super) fn compile(r: &Rule) -> Result<Option<Scope>, RuleError> {
    if r.path.is_none() && r.allow.is_empty() {
        return Ok(None);
    }
    let path = r
        .path
        .as_deref()
        .map(|p| Regex::new(p).map_err(|e| r.invalid("path", e.to_string())))
        .transpose()?;
    let allow = r
        .allow
        .iter()
        .map(|a: &RuleAllow| {
            Ok(Allow {
                regexes: set(r, "allow.regexes", &a.regexes)?,
                target: a.target,
                stopwords: a
                    .stopwords
                    .iter()
                    .map(|w| w.to_ascii_lowercase().into_bytes())
                    .collect(),
                paths: set(r, "allow.paths", &a.paths)?,
                commits: a.commits.iter().map(|c| c.to_ascii_lowercase()).collect(),
                condition: a.condition,
            })
        })
        .collect::<Result<Vec<_>, RuleError>>()?;
    Ok(Some(Scope { path, allow }))
}

impl Scope {
    /// Whether match `m` in `hay`, found at `path` (in `commit`), is outside the rule's scope.
    pub(super) fn excludes(&self, hay: &[u8], m: &Match, path: &str, commit: Option<&str>) -> bool {
        if self
            .path
            .as_ref()
            .is_some_and(|p| !p.is_match(path.as_bytes()))
        {
            return true;
        }
        self.allow.iter().any(|a| a.allows(hay, m, path, commit))
    }
}

/// Whether `secret` contains one of `words` (lowercase), ASCII case-insensitively: the
/// stopwords of a rule's allowlist and of the operator's.
pub fn has_stopword(secret: &[u8], words: &[Vec<u8>]) -> bool {
    let lower = secret.to_ascii_lowercase();
    words
        .iter()
        .any(|w| memchr::memmem::find(&lower, w).is_some())
}

impl Allow {
    fn allows(&self, hay: &[u8], m: &Match, path: &str, commit: Option<&str>) -> bool {
        let secret = &hay[m.span()];
        let target = match self.target {
            AllowTarget::Secret => secret,
            AllowTarget::Match => &hay[m.match_start..m.match_end],
            AllowTarget::Line => {
                let from = memchr::memrchr(b'\n', &hay[..m.match_start]).map_or(0, |p| p + 1);
                let to = memchr::memchr(b'\n', &hay[m.match_end..])
                    .map_or(hay.len(), |p| m.match_end + p);
                &hay[from..to]
            }
        };
        // Each criterion the allowlist has: `None` when it has none.
        let criteria = [
            self.regexes.as_ref().map(|r| r.is_match(target)),
            (!self.stopwords.is_empty()).then(|| has_stopword(secret, &self.stopwords)),
            self.paths.as_ref().map(|p| p.is_match(path.as_bytes())),
            (!self.commits.is_empty()).then(|| {
                commit.is_some_and(|c| {
                    let c = c.to_ascii_lowercase();
                    self.commits
                        .iter()
                        .any(|a| c == *a || (a.len() >= 7 && c.starts_with(a.as_str())))
                })
            }),
        ];
        let mut present = criteria.iter().flatten().peekable();
        if present.peek().is_none() {
            return false;
        }
        match self.condition {
            Condition::Or => present.any(|&b| b),
            Condition::And => present.all(|&b| b),
        }
    }
}
