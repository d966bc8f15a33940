//! Rules are data: TOML files with one `[[rules]]` table per rule. The default set lives in
//! `signatures/` and is embedded at build time; operators add their own files.
//!
//! Loading parses (a field this model does not know is an error) and settles each rule's
//! pattern facts; the static checks (unique ids, a `secret` group, a bounded match length,
//! keywords present) are made when [`crate::engine::Engine::new`] compiles the set, and
//! [`crate::engine::check`] runs every rule's examples and negatives through the whole engine.

pub mod facts;
pub mod gitleaks;
mod set;
pub mod validator;

pub use facts::regex_error;
pub use set::{glob_error, load_set, load_set_from, RuleSet, SetError};

use serde::Deserialize;
use std::path::PathBuf;

/// A built-in rule's name, pattern and description, which `build.rs` embeds beside its JSON.
type Texts = (&'static str, &'static str, Option<&'static str>);

include!(concat!(env!("OUT_DIR"), "/signatures.rs"));

/// The embedded rule set's id: the first 12 hex digits of a SHA-256 over its files' names and
/// contents (computed by `build.rs`). Two builds with the same id find the same things; a
/// report carries it (`rules_version`) so a finding can be traced to the rules that made it.
/// Operators' own rule files are not part of it.
pub const RULESET: &str = env!("LEAKHOUND_RULESET");

/// How many rules the embedded set holds.
pub const RULE_COUNT: &str = env!("LEAKHOUND_RULE_COUNT");

/// `leakhound --version`: the crate version and the rule set, e.g.
/// `0.1.0 (rules 202, set 1a2b3c4d5e6f)`.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (rules ",
    env!("LEAKHOUND_RULE_COUNT"),
    ", set ",
    env!("LEAKHOUND_RULESET"),
    ")"
);

/// Longest window a rule may ask for around a keyword hit. Bounds the work per hit.
pub const MAX_WINDOW: usize = 16 * 1024;

/// One rule as written in a signature file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Stable identifier, e.g. `aws.access-key-id`. Never renamed once published.
    pub id: String,
    /// Human-readable name.
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Literals (matched ASCII case-insensitively) of which at least one occurs in every match.
    pub keywords: Vec<String>,
    /// A regular expression with a capture group named `secret`.
    pub pattern: String,
    /// Minimum Shannon entropy (bits per byte) of the secret.
    #[serde(default)]
    pub entropy: Option<f64>,
    /// A structural check on the secret: `github` (CRC32 in the last six characters),
    /// `jwt` (the header decodes to JSON), `base64-credentials` (decodes to `user:password`).
    #[serde(default)]
    pub checksum: Option<Checksum>,
    /// Another rule that must match near this one (e.g. an AWS secret needs a key id).
    #[serde(default)]
    pub requires: Option<Requires>,
    /// The matched value is an identifier, not a secret (AWS key ids): never redacted.
    #[serde(default)]
    pub public: bool,
    /// Generic assignment rule: extra filters against variable references, hashes, uuids,
    /// paths and values without a mix of character classes.
    #[serde(default)]
    pub generic: bool,
    /// A `generic` rule whose name alone vouches: its value is kept whatever its shape (hex,
    /// a uuid, one class of characters), and its finding never rises above its confidence.
    #[serde(default)]
    pub by_name: bool,
    /// A password a person chose (in a URL, a `.netrc`): a weak one makes the finding `low`.
    #[serde(default)]
    pub password: bool,
    /// Test vectors of this shape are common (hashing libraries ship password hashes by the
    /// dozen): a finding in a test, an example, documentation or a comment falls to `low`.
    #[serde(default)]
    pub fixtures: bool,
    /// Who checks its matches, and which part they are (`{ name = "aws", part = "secret" }`).
    #[serde(default)]
    pub validator: Option<ValidatorRef>,
    /// The value must be a literal: a quoted string (the same quote on both sides), or the
    /// unquoted rest of a `KEY=VALUE` / `key: value` line (config, env, YAML, INI, shell) or
    /// of a `--flag=value`; never an identifier, a member access, a call or a type in code.
    #[serde(default)]
    pub literal: bool,
    /// Reject values made of dictionary words, as identifiers are (`TKTokenKeychainItem`,
    /// `session_token_utilization`, `AccessKeysPerUserQuota`).
    #[serde(default)]
    pub words: bool,
    /// How sure a match of this rule is to be a secret. Derived when not given: `low` for
    /// generic rules, `high` for a checksum, a companion (`requires`) or a fixed prefix in
    /// the secret, else `medium`. Each finding's value can move it ([`crate::engine::confidence`]).
    #[serde(default)]
    confidence: Option<Confidence>,
    /// A regex over the path (as reported): the rule applies only to files whose path matches
    /// (gitleaks' `path`).
    #[serde(default)]
    pub path: Option<String>,
    /// The rule's own allowlists: a match that one of them allows is not reported
    /// (gitleaks' `[[rules.allowlists]]`).
    #[serde(default)]
    pub allow: Vec<RuleAllow>,
    /// Bytes searched on each side of a keyword hit, for patterns whose length is unbounded.
    #[serde(default)]
    pub window: Option<usize>,
    /// Strings that must produce a finding of this rule.
    pub examples: Vec<String>,
    /// Strings that must not produce a finding of this rule.
    #[serde(default)]
    pub negatives: Vec<String>,
    /// The examples were generated from the pattern (a rule converted from gitleaks): the
    /// check then accepts an example that another rule reports at the same place.
    #[serde(skip)]
    pub generated_examples: bool,
    /// Where the rule came from (file name), for messages.
    #[serde(skip)]
    pub origin: String,
    /// What its pattern says ([`facts`]): read by `build.rs` for the embedded set, so loading
    /// it parses no pattern; read at load for the operator's rules ([`Rule::settle`]).
    #[serde(default, rename = "_facts")]
    pub facts: Option<facts::Facts>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Checksum {
    Github,
    Jwt,
    Base64Credentials,
}

/// How sure a finding is to be a secret.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, serde::Serialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Confidence {
    /// A generic value known by its context alone (`password = "..."`).
    Low,
    /// A provider's secret known by its context or a loose shape.
    Medium,
    /// A provider format with a fixed prefix, a checksum, or a paired structure.
    High,
}

impl Confidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

impl Rule {
    /// The rule's confidence: as written, or as derived from its shape when it was loaded
    /// (see the field).
    pub fn confidence(&self) -> Confidence {
        self.confidence.unwrap_or_else(|| self.derived_confidence())
    }

    /// Read the pattern's facts once, unless the build did, and fix the confidence they give:
    /// loading does this for every rule, so neither the engine nor a finding parses a pattern
    /// again. A pattern that does not parse keeps no facts; compiling it names the error.
    pub(crate) fn settle(&mut self) {
        if self.facts.is_none() {
            self.facts = facts::of(&self.pattern).ok();
        }
        self.confidence = Some(self.confidence());
    }

    /// What its pattern says: as loading read it, else parsed now.
    pub fn pattern_facts(&self) -> Result<facts::Facts, String> {
        match self.facts {
            Some(f) => Ok(f),
            None => facts::of(&self.pattern),
        }
    }

    /// What the rule's shape says (see the field); runs once, at load, not per finding.
    fn derived_confidence(&self) -> Confidence {
        if self.generic {
            Confidence::Low
        } else if self.checksum.is_some()
            || self.requires.is_some()
            || self.pattern_facts().is_ok_and(|f| f.fixed_prefix)
        {
            Confidence::High
        } else {
            Confidence::Medium
        }
    }
}

/// One allowlist of a rule, as gitleaks has them: it allows a match when any of its criteria
/// holds (`condition = "or"`, the default) or when every criterion it has holds (`"and"`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleAllow {
    /// Regexes over `target`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regexes: Vec<String>,
    /// What `regexes` look at: the `secret` (default), the whole `match`, or its `line`.
    #[serde(default, skip_serializing_if = "AllowTarget::is_default")]
    pub target: AllowTarget,
    /// Case-insensitive words; a secret containing one is allowed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stopwords: Vec<String>,
    /// Regexes over the path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Commit ids (full, or prefixes of 7 or more) whose findings are allowed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commits: Vec<String>,
    #[serde(default, skip_serializing_if = "Condition::is_default")]
    pub condition: Condition,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AllowTarget {
    #[default]
    Secret,
    Match,
    Line,
}

impl AllowTarget {
    fn is_default(&self) -> bool {
        *self == AllowTarget::Secret
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Condition {
    #[default]
    Or,
    And,
}

impl Condition {
    fn is_default(&self) -> bool {
        *self == Condition::Or
    }
}

/// A rule's link to a validator: the validator's name and the credential part it matches.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidatorRef {
    pub name: String,
    pub part: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requires {
    /// Id of the companion rule.
    pub rule: String,
    /// Largest distance in bytes between the two matches.
    #[serde(default = "default_within")]
    pub within: usize,
}

fn default_within() -> usize {
    1024
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    #[serde(default)]
    rules: Vec<Rule>,
    /// Declarative HTTP validators ([`validator::HttpSpec`]), each naming its rules.
    #[serde(default)]
    validators: Vec<validator::HttpSpec>,
}

/// A problem with a rule file, naming the file, the rule and the field.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    #[error("{file}: cannot read: {cause}")]
    Read {
        file: String,
        // Not `source`: the message holds it already, and a chain would say it twice.
        cause: std::io::Error,
    },
    #[error("{file}: {message}")]
    Parse { file: String, message: String },
    #[error("{file}: rule {rule:?}: {field}: {message}")]
    Invalid {
        file: String,
        rule: String,
        field: &'static str,
        message: String,
    },
}

impl Rule {
    pub(crate) fn invalid(&self, field: &'static str, message: impl Into<String>) -> RuleError {
        RuleError::Invalid {
            file: self.origin.clone(),
            rule: self.id.clone(),
            field,
            message: message.into(),
        }
    }
}

/// Parse one rule file's text. `origin` names it in errors.
pub fn parse(origin: &str, text: &str) -> Result<Vec<Rule>, RuleError> {
    Ok(parse_file(origin, text)?.0)
}

/// Parse one rule file's text: its rules and its validators.
pub fn parse_file(
    origin: &str,
    text: &str,
) -> Result<(Vec<Rule>, Vec<validator::HttpSpec>), RuleError> {
    let file: RuleFile = toml::from_str(text).map_err(|e| RuleError::Parse {
        file: origin.to_string(),
        message: toml_error(text, &e),
    })?;
    let mut rules = file.rules;
    for r in &mut rules {
        r.origin = origin.to_string();
        // Facts are the build's to give: the operator's patterns are read as written.
        r.facts = None;
        r.settle();
    }
    let mut specs = file.validators;
    for s in &mut specs {
        s.origin = origin.to_string();
    }
    Ok((rules, specs))
}

/// Link each rule a validator names to it (`validator = { name, part }`), unless the rule
/// names a validator of its own; a conflict is left for [`crate::validate::check_rules`].
pub fn attach_validators(rules: &mut [Rule], specs: &[validator::HttpSpec]) {
    let mut by_id: std::collections::HashMap<&str, (&str, &str)> = Default::default();
    for s in specs {
        for id in &s.rules {
            by_id.insert(id, (&s.name, "secret"));
        }
        for (part, id) in &s.with {
            by_id.insert(id, (&s.name, part));
        }
    }
    for r in rules.iter_mut() {
        if r.validator.is_some() {
            continue;
        }
        if let Some((name, part)) = by_id.get(r.id.as_str()) {
            r.validator = Some(ValidatorRef {
                name: name.to_string(),
                part: part.to_string(),
            });
        }
    }
}

/// The validators of the embedded rule set (`build.rs` keeps them apart from the rules, so
/// that loading the rules parses none of them).
pub fn builtin_validators() -> Vec<validator::HttpSpec> {
    EMBEDDED_VALIDATORS
        .iter()
        .flat_map(|(name, json)| {
            let file: RuleFile = serde_json::from_str(json).expect("embedded rules parse (tested)");
            let origin = format!("{BUILTIN_ORIGIN}signatures/{name}");
            file.validators.into_iter().map(move |mut s| {
                s.origin = origin.clone();
                s
            })
        })
        .collect()
}

/// A TOML error as `line L, column C: message`, without the input line the toml crate quotes
/// and with quoted values masked: a file given here by mistake (a `.env`) holds secrets.
pub fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let at = e.span().map(|s| {
        let before = &text.as_bytes()[..s.start.min(text.len())];
        let line = 1 + memchr::memchr_iter(b'\n', before).count();
        let col = 1 + before.len() - memchr::memrchr(b'\n', before).map_or(0, |p| p + 1);
        format!("line {line}, column {col}: ")
    });
    format!("{}{}", at.unwrap_or_default(), mask_quoted(e.message()))
}

/// `message` with the contents of every `"…"` and of long `` `…` `` masked: serde quotes
/// values (`invalid type: string "…"`) and unknown keys in them.
fn mask_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find(['"', '`']) {
        let q = rest.as_bytes()[i] as char;
        out.push_str(&rest[..=i]);
        rest = &rest[i + 1..];
        let Some(j) = rest.find(q) else {
            out.push('…');
            return out;
        };
        let inner = &rest[..j];
        let word = inner.len() <= 32
            && inner
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b));
        out.push_str(if q == '`' && word { inner } else { "…" });
        out.push(q);
        rest = &rest[j + 1..];
    }
    out.push_str(rest);
    out.replace(['\n', '\r'], " ")
}

/// The embedded default rule set.
pub fn builtin() -> Vec<Rule> {
    let mut rules = builtin_without_examples();
    let mut r = rules.iter_mut();
    for json in EMBEDDED_EXAMPLES {
        let pairs: Vec<(Vec<String>, Vec<String>)> =
            serde_json::from_str(json).expect("embedded examples parse (tested)");
        for (examples, negatives) in pairs {
            let rule = r.next().expect("one pair of lists per built-in rule");
            rule.examples = examples;
            rule.negatives = negatives;
        }
    }
    assert!(r.next().is_none(), "one pair of lists per built-in rule");
    rules
}

/// [`builtin`] with every rule's `examples` and `negatives` left empty: for a process that
/// checks no built-in rule (an agent hook event), which would otherwise parse some 4,000
/// strings at every start.
pub fn builtin_without_examples() -> Vec<Rule> {
    // `build.rs` wrote each file as JSON with its patterns' facts and each rule's link to the
    // validator that checks it ([`attach_validators`], done at build time), and the examples
    // apart: reading that is a small part of what parsing the TOML, the patterns and the
    // validators would cost, at every start. Each rule's name, pattern and description are
    // Rust string literals beside the JSON, which are quicker still to read.
    EMBEDDED
        .iter()
        .flat_map(|(name, json, texts)| {
            let file: RuleFile = serde_json::from_str(json).expect("embedded rules parse (tested)");
            assert_eq!(file.rules.len(), texts.len(), "one text per built-in rule");
            let origin = format!("{BUILTIN_ORIGIN}signatures/{name}");
            file.rules.into_iter().zip(texts.iter()).map(
                move |(mut r, &(name, pattern, description))| {
                    r.name = name.to_string();
                    r.pattern = pattern.to_string();
                    r.description = description.map(str::to_string);
                    r.origin = origin.clone();
                    r.settle();
                    r
                },
            )
        })
        .collect()
}

/// Whether a rule comes from the embedded default set.
pub fn is_builtin(rule: &Rule) -> bool {
    rule.origin.starts_with(BUILTIN_ORIGIN)
}

const BUILTIN_ORIGIN: &str = "<builtin>/";

/// What the operator's rule files hold: rules, and from gitleaks configs, allowlists for
/// every rule and rules to turn off.
#[derive(Debug, Default)]
pub struct Loaded {
    pub rules: Vec<Rule>,
    /// (target rule ids or globs, empty for all; the allowlist).
    pub global_allow: Vec<(Vec<String>, RuleAllow)>,
    pub disable: Vec<String>,
    /// How a gitleaks config was carried over, for the operator.
    pub notes: Vec<String>,
    /// Declarative validators from the operator's files.
    pub validators: Vec<validator::HttpSpec>,
}

impl Loaded {
    /// Add these rules to `set`, then apply the global allowlists to every rule of `set`
    /// they target and turn off what was disabled.
    pub fn merge_into(self, set: &mut Vec<Rule>) -> Result<(), globset::Error> {
        set.extend(self.rules);
        attach_validators(set, &self.validators);
        for (targets, a) in &self.global_allow {
            let targets = glob_set(targets)?;
            for r in set.iter_mut() {
                if targets.as_ref().is_none_or(|t| t.is_match(&r.id)) {
                    r.allow.push(a.clone());
                }
            }
        }
        disable(set, &self.disable)
    }
}

/// Rules from the operator's files: leakhound rule files, or gitleaks/betterleaks configs
/// (detected by their shape).
pub fn load_files(paths: &[PathBuf]) -> Result<Loaded, RuleError> {
    let mut out = Loaded::default();
    for path in paths {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|cause| RuleError::Read {
            file: file.clone(),
            cause,
        })?;
        if gitleaks::detect(&text) {
            let c = gitleaks::convert(&file, &text)?;
            out.rules.extend(c.rules);
            out.global_allow.extend(c.global);
            out.disable.extend(c.disable);
            out.notes
                .extend(c.notes.into_iter().map(|n| format!("{file}: {n}")));
        } else {
            let (rules, specs) = parse_file(&file, &text)?;
            out.rules.extend(rules);
            out.validators.extend(specs);
        }
    }
    Ok(out)
}

fn glob_set(globs: &[String]) -> Result<Option<globset::GlobSet>, globset::Error> {
    if globs.is_empty() {
        return Ok(None);
    }
    let mut b = globset::GlobSetBuilder::new();
    for g in globs {
        b.add(
            globset::GlobBuilder::new(g)
                .literal_separator(false)
                .build()?,
        );
    }
    b.build().map(Some)
}

/// Drop rules whose id matches one of `globs` (`generic.*`, `aws.session-token`).
pub fn disable(rules: &mut Vec<Rule>, globs: &[String]) -> Result<(), globset::Error> {
    if let Some(set) = glob_set(globs)? {
        rules.retain(|r| !set.is_match(&r.id));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_words_are_kept_and_values_masked() {
        assert_eq!(
            mask_quoted("unknown field `TOKEN`, expected one of `allow`, `rules`"),
            "unknown field `TOKEN`, expected one of `allow`, `rules`"
        );
        assert_eq!(
            mask_quoted("invalid type: string \"hunter2hunter2\", expected a sequence"),
            "invalid type: string \"…\", expected a sequence"
        );
        assert_eq!(mask_quoted("cut \"abc"), "cut \"…");
    }

    /// The regex crates' errors quote the pattern, which may be a secret: none of it is
    /// kept, only where the error is and what it is.
    #[test]
    fn regex_errors_never_quote_the_pattern() {
        let secret = "+Zk9mQ2vX7pL4nR8tY1wE6sA3dF5gH0jK2lB9cV";
        for e in [
            regex::Regex::new(secret).unwrap_err().to_string(),
            regex::bytes::RegexSetBuilder::new([format!("ok|{secret}")])
                .build()
                .unwrap_err()
                .to_string(),
            regex_syntax::Parser::new()
                .parse(&format!("abc(?P<secret>{secret}"))
                .unwrap_err()
                .to_string(),
            regex_syntax::Parser::new()
                .parse(&format!("(?P<a>x)\n{secret}(?P<a>y)"))
                .unwrap_err()
                .to_string(),
        ] {
            assert!(e.contains(&secret[1..]), "{e}");
            let m = regex_error(&e);
            assert!(!m.contains(&secret[1..9]), "{m}");
            assert!(m.starts_with("regex parse error"), "{m}");
        }
        assert_eq!(
            regex_error(&regex::Regex::new(secret).unwrap_err().to_string()),
            "regex parse error at column 1: repetition operator missing expression"
        );
    }

    #[test]
    fn build_links_rules_to_validators_as_loading_would() {
        // build.rs links each built-in rule to its validator; linking the rules as loaded,
        // with those links removed, to the built-in validators must give the very same.
        let built = builtin();
        let mut linked = built.clone();
        let names: Vec<String> = builtin_validators().into_iter().map(|s| s.name).collect();
        for r in &mut linked {
            if r.validator
                .as_ref()
                .is_some_and(|v| names.contains(&v.name))
            {
                r.validator = None;
            }
        }
        attach_validators(&mut linked, &builtin_validators());
        let refs = |set: &[Rule]| -> Vec<Option<ValidatorRef>> {
            set.iter().map(|r| r.validator.clone()).collect()
        };
        assert_eq!(refs(&built), refs(&linked));
        let declarative = built
            .iter()
            .filter(|r| {
                r.validator
                    .as_ref()
                    .is_some_and(|v| names.contains(&v.name))
            })
            .count();
        assert!(declarative > 80, "{declarative}");
    }
}
