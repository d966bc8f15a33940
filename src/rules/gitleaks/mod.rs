//! The rule files users already have: a gitleaks (or betterleaks) TOML config, read as rules.
//!
//! `[[rules]]` with `id`, `description`, `regex`, `secretGroup`, `keywords`, `entropy`, `path`
//! and allowlists (`[[rules.allowlists]]`, the older `[rules.allowlist]`), the global
//! allowlists (`[[allowlists]]` with `targetRules`, the older `[allowlist]`) and `[extend]`
//! (`disabledRules`) carry over. What cannot is an error naming the rule and why: a rule with
//! only a `path` (leakhound reports secrets, not files by name), composite rules (`required`),
//! and a regex Rust's engine does not accept (Go-only RE2 syntax such as `\C` or `\Q…\E`).
//! gitleaks rules have no examples: one is generated from each regex, so the rule still runs
//! through the engine-level check.

use super::{AllowTarget, Condition, Rule, RuleAllow, RuleError};
mod pattern;

use pattern::{example, literal_keywords, parse, secret_pattern};
use serde::Deserialize;

/// Whether `text` is a gitleaks-format config rather than a leakhound rule file: its rules
/// have `regex` (not `pattern`), or it has gitleaks' top-level tables.
pub fn detect(text: &str) -> bool {
    let Ok(v) = text.parse::<toml::Table>() else {
        return false;
    };
    let gitleaks_rule = v
        .get("rules")
        .and_then(|r| r.as_array())
        .is_some_and(|rules| {
            rules.iter().any(|r| {
                r.as_table().is_some_and(|t| {
                    !t.contains_key("pattern")
                        && ["regex", "secretGroup", "path", "allowlists", "allowlist"]
                            .iter()
                            .any(|k| t.contains_key(*k))
                })
            })
        });
    gitleaks_rule
        || ["extend", "allowlist", "allowlists", "title"]
            .iter()
            .any(|k| v.contains_key(*k))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Config {
    #[serde(default)]
    extend: Extend,
    #[serde(default)]
    rules: Vec<GlRule>,
    allowlist: Option<GlAllow>,
    #[serde(default)]
    allowlists: Vec<GlAllow>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Extend {
    path: Option<String>,
    url: Option<String>,
    #[serde(default)]
    disabled_rules: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GlRule {
    id: String,
    description: Option<String>,
    regex: Option<String>,
    #[serde(default)]
    secret_group: usize,
    entropy: Option<f64>,
    #[serde(default)]
    keywords: Vec<String>,
    path: Option<String>,
    allowlist: Option<GlAllow>,
    #[serde(default)]
    allowlists: Vec<GlAllow>,
    #[serde(default)]
    required: Vec<toml::Value>,
    #[serde(default)]
    skip_report: bool,
}

#[derive(Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase")]
struct GlAllow {
    condition: Option<String>,
    #[serde(default)]
    commits: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
    regex_target: Option<String>,
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stop_words: Vec<String>,
    /// Global allowlists only: the rules they apply to (all when empty).
    #[serde(default)]
    target_rules: Vec<String>,
}

/// A gitleaks config as leakhound rules, plus what applies beyond them.
#[derive(Debug, Default)]
pub struct Converted {
    pub rules: Vec<Rule>,
    /// Global allowlists: (the rule ids they target, empty for every rule, and the allowlist).
    /// They apply to the built-in rules too.
    pub global: Vec<(Vec<String>, RuleAllow)>,
    /// `[extend] disabledRules`, mapped to leakhound's rule ids where one corresponds.
    pub disable: Vec<String>,
    /// What was carried over differently, for the operator to read.
    pub notes: Vec<String>,
}

/// gitleaks' default rule ids with a leakhound rule of the same kind, for `disabledRules`.
const SAME_KIND: &[(&str, &str)] = &[
    ("aws-access-token", "aws.access-key-id"),
    ("github-pat", "github.pat"),
    ("github-fine-grained-pat", "github.fine-grained-pat"),
    ("github-oauth", "github.oauth-token"),
    ("github-app-token", "github.app-token"),
    ("gitlab-pat", "gitlab.pat"),
    ("slack-bot-token", "slack.bot-token"),
    ("slack-user-token", "slack.user-token"),
    ("slack-webhook-url", "slack.webhook-url"),
    ("stripe-access-token", "stripe.secret-key"),
    ("openai-api-key", "openai.api-key"),
    ("anthropic-api-key", "anthropic.api-key"),
    ("private-key", "private-key.*"),
    ("jwt", "jwt"),
    ("generic-api-key", "generic.*"),
    ("npm-access-token", "npm.access-token"),
    ("pypi-upload-token", "pypi.upload-token"),
    ("sendgrid-api-token", "sendgrid.api-key"),
    ("gcp-api-key", "google.api-key"),
    ("heroku-api-key", "heroku.api-key"),
];

fn allow(a: &GlAllow, what: &str, notes: &mut Vec<String>) -> RuleAllow {
    let target = match a
        .regex_target
        .as_deref()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("match") => AllowTarget::Match,
        Some("line") => AllowTarget::Line,
        Some("secret") | Some("") | None => AllowTarget::Secret,
        Some(other) => {
            notes.push(format!(
                "{what}: regexTarget {other:?} is not known; the secret is used"
            ));
            AllowTarget::Secret
        }
    };
    let condition = match a.condition.as_deref() {
        Some(c) if c.eq_ignore_ascii_case("and") => Condition::And,
        _ => Condition::Or,
    };
    RuleAllow {
        regexes: a.regexes.clone(),
        target,
        stopwords: a.stop_words.clone(),
        paths: a.paths.clone(),
        commits: a.commits.clone(),
        condition,
    }
}

/// Convert gitleaks config `text` (from `origin`). Errors name the rule and what cannot be
/// carried over.
pub fn convert(origin: &str, text: &str) -> Result<Converted, RuleError> {
    let cfg: Config = toml::from_str(text).map_err(|e| RuleError::Parse {
        file: origin.to_string(),
        message: super::toml_error(text, &e),
    })?;
    let mut out = Converted::default();
    let fail = |rule: &str, field: &'static str, message: String| RuleError::Invalid {
        file: origin.to_string(),
        rule: rule.to_string(),
        field,
        message,
    };
    if cfg.extend.path.is_some() || cfg.extend.url.is_some() {
        return Err(fail(
            "[extend]",
            "path",
            "extending another config file or URL is not carried over: merge it into this \
             file first"
                .into(),
        ));
    }
    for id in &cfg.extend.disabled_rules {
        match SAME_KIND.iter().find(|(g, _)| g == id) {
            Some((_, ours)) => out.disable.push(ours.to_string()),
            None => out.notes.push(format!(
                "[extend] disabledRules: gitleaks rule {id:?} has no leakhound counterpart; \
                 nothing disabled for it"
            )),
        }
    }
    for r in &cfg.rules {
        if r.skip_report {
            out.notes.push(format!(
                "rule {:?}: skipReport rules only feed composite rules; left out",
                r.id
            ));
            continue;
        }
        if !r.required.is_empty() {
            return Err(fail(
                &r.id,
                "required",
                "composite rules (required) are not carried over".into(),
            ));
        }
        let Some(regex) = &r.regex else {
            return Err(fail(
                &r.id,
                "regex",
                "a rule with only a path reports files by name; leakhound reports secrets, \
                 so it is not carried over"
                    .into(),
            ));
        };
        let id: String =
            r.id.to_ascii_lowercase()
                .chars()
                .map(|c| if c == '_' || c == ' ' { '-' } else { c })
                .collect();
        let pattern = secret_pattern(regex, r.secret_group).map_err(|m| fail(&r.id, "regex", m))?;
        let hir = parse(&pattern).map_err(|e| {
            fail(
                &r.id,
                "regex",
                format!("{e} (Go RE2 syntax that Rust's regex does not accept?)"),
            )
        })?;
        let mut keywords: Vec<String> = r.keywords.iter().map(|k| k.to_ascii_lowercase()).collect();
        keywords.retain(|k| k.len() >= 2);
        if keywords.is_empty() {
            keywords = literal_keywords(&hir).ok_or_else(|| {
                fail(
                    &r.id,
                    "keywords",
                    "no keywords, and no literal that every match contains: add keywords".into(),
                )
            })?;
        }
        let window = hir.properties().maximum_len().is_none().then(|| {
            out.notes.push(format!(
                "rule {:?}: its regex can match without bound; matches are searched within \
                 4 KiB of a keyword",
                r.id
            ));
            4096
        });
        let example = example(&hir).ok_or_else(|| {
            fail(
                &r.id,
                "regex",
                "no example can be generated from it to check the rule".into(),
            )
        })?;
        let mut allowlists: Vec<RuleAllow> = Vec::new();
        for (n, a) in r.allowlist.iter().chain(&r.allowlists).enumerate() {
            allowlists.push(allow(
                a,
                &format!("rule {:?} allowlist {n}", r.id),
                &mut out.notes,
            ));
        }
        out.rules.push(Rule {
            id,
            name: r.description.clone().unwrap_or_else(|| r.id.clone()),
            description: r.description.clone(),
            keywords,
            pattern,
            entropy: r.entropy.filter(|e| *e > 0.0),
            checksum: None,
            requires: None,
            public: false,
            generic: false,
            by_name: false,
            password: false,
            fixtures: false,
            validator: None,
            literal: false,
            words: false,
            confidence: None,
            path: r.path.clone(),
            allow: allowlists,
            window,
            examples: vec![example],
            negatives: Vec::new(),
            generated_examples: true,
            origin: origin.to_string(),
            facts: None,
        });
    }
    for (n, a) in cfg.allowlist.iter().chain(&cfg.allowlists).enumerate() {
        // Checked here, where the file can be named: merged into every rule, a bad one
        // failed at the first rule it was merged into, a built-in one.
        for p in &a.regexes {
            // Parsed as a rule's scope parses them (`engine::scope`).
            regex_syntax::ParserBuilder::new()
                .utf8(false)
                .build()
                .parse(p)
                .map_err(|e| {
                    let e = super::regex_error(&e.to_string());
                    fail(&format!("[allowlist] {n}"), "regexes", e)
                })?;
        }
        let converted = allow(a, &format!("allowlist {n}"), &mut out.notes);
        let targets = a
            .target_rules
            .iter()
            .map(|t| {
                SAME_KIND
                    .iter()
                    .find(|(g, _)| g == t)
                    .map_or_else(|| t.clone(), |(_, ours)| ours.to_string())
            })
            .collect();
        out.global.push((targets, converted));
    }
    for r in &mut out.rules {
        r.settle();
    }
    Ok(out)
}

/// One converted rule as leakhound writes it.
#[derive(serde::Serialize)]
struct Written<'a> {
    id: &'a str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    keywords: &'a [String],
    pattern: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    entropy: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<usize>,
    examples: &'a [String],
    #[serde(skip_serializing_if = "<[RuleAllow]>::is_empty")]
    allow: &'a [RuleAllow],
}

/// `c` as a leakhound rule file (`leakhound rules import`). Global allowlists that target
/// the file's rules are written into those rules; what belongs in `leakhound.toml` instead
/// (allowlists for every rule, disabled rules) is written as comments.
pub fn to_toml(c: &Converted) -> Result<String, toml::ser::Error> {
    #[derive(serde::Serialize)]
    struct File<'a> {
        rules: Vec<Written<'a>>,
    }
    let mut merged: Vec<Vec<RuleAllow>> = c.rules.iter().map(|r| r.allow.clone()).collect();
    for (targets, a) in &c.global {
        for (r, allow) in c.rules.iter().zip(&mut merged) {
            if targets.is_empty() || targets.contains(&r.id) {
                allow.push(a.clone());
            }
        }
    }
    let rules = c
        .rules
        .iter()
        .zip(&merged)
        .map(|(r, allow)| Written {
            id: &r.id,
            name: &r.name,
            description: r.description.as_deref(),
            keywords: &r.keywords,
            pattern: &r.pattern,
            entropy: r.entropy,
            path: r.path.as_deref(),
            window: r.window,
            examples: &r.examples,
            allow,
        })
        .collect();
    let mut out = String::from(
        "# Converted from a gitleaks config by `leakhound rules import`. Each example was\n\
         # generated from its pattern: replace it with a realistic line, and add negatives.\n",
    );
    for n in &c.notes {
        out.push_str(&format!("# note: {n}\n"));
    }
    if c.global.iter().any(|(t, _)| t.is_empty()) {
        out.push_str(
            "# The config's global allowlists are written into every rule below; loaded\n\
             # directly with --rules they also apply to the built-in rules.\n",
        );
    }
    if !c.disable.is_empty() {
        out.push_str(&format!(
            "# For leakhound.toml: [rules] disable = {:?}\n",
            c.disable
        ));
    }
    out.push('\n');
    out.push_str(&toml::to_string(&File { rules })?);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_group_is_named() {
        assert_eq!(
            secret_pattern(r"acme_(?:live|test)_([a-z0-9]{32})", 0).unwrap(),
            r"acme_(?:live|test)_(?P<secret>[a-z0-9]{32})"
        );
        assert_eq!(
            secret_pattern(r"(key)[=:]([A-Z]{8})(\b)", 2).unwrap(),
            r"(key)[=:](?P<secret>[A-Z]{8})(\b)"
        );
        assert_eq!(
            secret_pattern(r"[(]x(?P<tok>[a-f]{9})", 1).unwrap(),
            r"[(]x(?P<secret>[a-f]{9})"
        );
        assert_eq!(
            secret_pattern(r"ak_[0-9]{9}", 0).unwrap(),
            r"(?P<secret>ak_[0-9]{9})"
        );
        assert!(secret_pattern(r"a(b)", 3).is_err());
    }

    #[test]
    fn examples_match_their_regex() {
        for p in [
            r"(?i)acme[_-]?token[\s:=]{1,3}(?P<secret>[a-z0-9]{32})\b",
            r"\b(?P<secret>xoxq-[0-9]{10,13}-[a-zA-Z0-9-]{20,40})",
            r"(?P<secret>(?:abc|def)_[A-F0-9]+)",
        ] {
            let hir = parse(p).unwrap();
            let e = example(&hir).unwrap();
            assert!(regex::Regex::new(p).unwrap().is_match(&e), "{p}: {e}");
        }
    }

    #[test]
    fn keywords_from_literals() {
        let hir = parse(r"\b(?P<secret>(?:xoxq|xoxz)-[0-9]{10})").unwrap();
        assert_eq!(literal_keywords(&hir).unwrap(), ["xoxq-", "xoxz-"]);
        assert_eq!(literal_keywords(&parse(r"[a-z]{32}").unwrap()), None);
        let hir = parse(r"(?i)acme[_-]token[=:]([a-z0-9]{32})").unwrap();
        assert_eq!(literal_keywords(&hir).unwrap(), ["acme"]);
    }
}
