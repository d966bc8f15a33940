//! Where a rule applies: its `path` and its own allowlists (gitleaks' per-rule `path` and
//! `[[rules.allowlists]]`). Checked per finding, after the scan, since the same bytes are
//! scanned once for every path that holds them.
//!
//! A hook builds a built-in rule's scope at its first finding, not at start: most rules
//! never find anything, and building the few built-in scopes (a `(?i)` alternation of paths
//! among them) was a tenth of an agent hook event's time. Their syntax is checked at start
//! ([`check`]), so a mistake in an allowlist an operator adds to them (a gitleaks config's
//! global one) still fails the event before it scans. Every other scope is built at start.

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
        .map_err(|e| r.invalid(field, crate::rules::regex_error(&e.to_string())))
}

/// Every pattern of `r`'s scope parsed as [`compile`] will build it: the errors a build
/// would meet, bar its size limit, at a fraction of its cost.
pub(super) fn check(r: &Rule) -> Result<(), RuleError> {
    let parser = || regex_syntax::ParserBuilder::new().utf8(false).build();
    let path = r.path.iter().map(|p| ("path", p));
    let allow = r.allow.iter().flat_map(|a| {
        let regexes = a.regexes.iter().map(|p| ("allow.regexes", p));
        regexes.chain(a.paths.iter().map(|p| ("allow.paths", p)))
    });
    for (field, p) in path.chain(allow) {
        parser()
            .parse(p)
            .map_err(|e| r.invalid(field, crate::rules::regex_error(&e.to_string())))?;
    }
    Ok(())
}

/// `r`'s scope, at its first finding. A scope that passed [`check`] and still fails to build
/// (over the size limit) is left out, with a warning: its finding is then reported, or
/// masked, as if the rule had no allowlist, which errs toward showing a secret's place
/// rather than hiding it.
pub(super) fn compile_or_warn(r: &Rule) -> Option<Scope> {
    compile(r).unwrap_or_else(|e| {
        eprintln!("leakhound: warning: {e}; the rule's path and allowlists are not applied");
        None
    })
}

pub(super) fn compile(r: &Rule) -> Result<Option<Scope>, RuleError> {
    if r.path.is_none() && r.allow.is_empty() {
        return Ok(None);
    }
    let path = r
        .path
        .as_deref()
        .map(|p| {
            Regex::new(p).map_err(|e| r.invalid("path", crate::rules::regex_error(&e.to_string())))
        })
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

/// How far from a match its line is read on each side ([`line_around`]).
const LINE_REACH: usize = 4096;

/// The line, or lines, of `start..end` in `hay`, as far as 4 KiB on each side: what an
/// allowlist's `line` target and an inline `leakhound:allow` look at. A long line of matches
/// (minified code, a log line) read whole at each was quadratic in the line; a marker
/// further away than that on one line does not allow, which errs toward reporting.
pub fn line_around(hay: &[u8], start: usize, end: usize) -> std::ops::Range<usize> {
    let lo = start.saturating_sub(LINE_REACH);
    let hi = hay.len().min(end.saturating_add(LINE_REACH));
    let from = memchr::memrchr(b'\n', &hay[lo..start]).map_or(lo, |p| lo + p + 1);
    let to = memchr::memchr(b'\n', &hay[end..hi]).map_or(hi, |p| end + p);
    from..to
}

impl Allow {
    fn allows(&self, hay: &[u8], m: &Match, path: &str, commit: Option<&str>) -> bool {
        let secret = &hay[m.span()];
        let target = match self.target {
            AllowTarget::Secret => secret,
            AllowTarget::Match => &hay[m.match_start..m.match_end],
            AllowTarget::Line => &hay[line_around(hay, m.match_start, m.match_end)],
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Scopes are built at a rule's first finding, so no start proves the built-in ones
    /// build: this does.
    #[test]
    fn every_built_in_scope_builds() {
        let rules = crate::rules::builtin();
        let scoped: Vec<_> = rules
            .iter()
            .filter(|r| r.path.is_some() || !r.allow.is_empty())
            .collect();
        assert!(scoped.len() >= 4, "{}", scoped.len());
        for r in scoped {
            assert!(compile(r).unwrap().is_some(), "{}", r.id);
        }
    }

    /// What a build would reject for its syntax, [`check`] rejects at start, naming the
    /// field; a valid scope passes.
    #[test]
    fn a_scope_with_bad_syntax_fails_at_start() {
        let mut r = crate::rules::builtin().remove(0);
        r.allow = vec![RuleAllow {
            paths: vec!["(unclosed".into()],
            ..RuleAllow::default()
        }];
        let e = check(&r).unwrap_err().to_string();
        assert!(
            e.contains("allow.paths") && e.contains("unclosed group"),
            "{e}"
        );
        assert!(compile(&r).is_err());
        r.allow[0].paths = vec!["^docs/".into()];
        r.path = Some("[z-a]".into());
        let e = check(&r).unwrap_err().to_string();
        assert!(
            e.contains("path") && e.contains("invalid character class range"),
            "{e}"
        );
        r.path = None;
        check(&r).unwrap();
    }

    /// A `line` target is the match's line, as far as `LINE_REACH` each side of it.
    #[test]
    fn a_line_target_reaches_a_bounded_way() {
        let mut r = crate::rules::builtin().remove(0);
        r.allow = vec![RuleAllow {
            regexes: vec!["acme-allow".into()],
            target: AllowTarget::Line,
            ..RuleAllow::default()
        }];
        let scope = compile(&r).unwrap().unwrap();
        let allowed = |gap: usize| {
            let hay = format!("acme-allow {} key=q8Vz3LmT0pWx9RkJ\nnext", "x".repeat(gap));
            let start = hay.find("q8Vz").unwrap();
            scope.excludes(hay.as_bytes(), &Match::at(start, 16, 4), "a.env", None)
        };
        assert!(allowed(10));
        assert!(allowed(LINE_REACH - 32));
        assert!(!allowed(LINE_REACH + 32));
        // The line ends at its line end, not at the reach.
        let hay = b"key=q8Vz3LmT0pWx9RkJ\nacme-allow";
        assert!(!scope.excludes(hay, &Match::at(4, 16, 4), "a.env", None));
    }
}
