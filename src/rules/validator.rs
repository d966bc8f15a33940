//! A declarative HTTP validator, as a signature file writes it (`[[validators]]`): one request
//! to the provider's documented "who am I" (or cheapest read-only) endpoint, and how to read
//! the answer. The rules it checks are named in it (`rules = [...]`), so adding a provider to
//! existing rules touches no rule and no Rust. Loading checks the shape here
//! ([`HttpSpec::check`]); `crate::validate::http` sends the request.

use serde::Deserialize;
use std::collections::BTreeMap;

/// One provider's check.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpSpec {
    /// The provider id: what rules' findings are checked by, what `[validate.endpoints]` in
    /// the operator's config names, what the report shows (`github`, `openai`).
    pub name: String,
    /// The rules whose matches are the credential's `secret` part.
    pub rules: Vec<String>,
    /// Other parts, each from its own rule found near the secret (`{ sid = "twilio.sid" }`),
    /// filled into the request as `{{sid}}`. A secret without all of them is not checked.
    #[serde(default)]
    pub with: BTreeMap<String, String>,
    /// The provider's documentation of the endpoint, for `docs/validators.md` and reviewers.
    pub docs: String,
    #[serde(default = "get")]
    pub method: String,
    /// `https://HOST/PATH?QUERY`: the host is fixed; `{{part}}` placeholders may appear in
    /// the path and query only (filled percent-encoded).
    pub url: String,
    /// Header templates (`Authorization = "Bearer {{secret}}"`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// HTTP Basic credentials, each a template.
    #[serde(default)]
    pub basic: Option<Basic>,
    /// A body template (with a `Content-Type` header of its own).
    #[serde(default)]
    pub body: Option<String>,
    /// The answers this provider gives, tried in order; the first that matches decides. An
    /// answer none matches is `unknown`, with the status.
    pub answers: Vec<Answer>,
    /// Where a live answer names who the credential is.
    #[serde(default)]
    pub identity: IdentityFields,
    /// How a live answer's scopes (or the provider's nature) map to a reach.
    #[serde(default)]
    pub reach: Option<ReachSpec>,
    /// How a live key revokes itself, where the provider allows it from the key alone; used
    /// only with `--rotate`.
    #[serde(default)]
    pub revoke: Option<RevokeSpec>,
    /// Regexes over the secret: a match is a canary (honeytoken) and is never sent.
    #[serde(default)]
    pub canaries: Vec<String>,
    /// Requests in flight at once to this provider.
    #[serde(default = "four")]
    pub concurrency: usize,
    /// Requests per second at most to this provider.
    #[serde(default = "five")]
    pub rate: f64,
    /// Where the spec came from (file name), for messages.
    #[serde(skip)]
    pub origin: String,
}

fn get() -> String {
    "GET".into()
}
fn four() -> usize {
    4
}
fn five() -> f64 {
    5.0
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Basic {
    pub user: String,
    #[serde(default)]
    pub password: String,
}

/// A request by which a credential revokes itself (GitHub's `POST /credentials/revoke`,
/// Slack's `auth.revoke`): templates as in [`HttpSpec`], to the same host, and the answers
/// that mean it is done (`outcome = "revoked"`). Any other answer is a failure, said as it is.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RevokeSpec {
    /// The provider's documentation of the endpoint.
    pub docs: String,
    /// `POST` (default) or `DELETE`.
    #[serde(default = "post")]
    pub method: String,
    /// `https://HOST/PATH`, HOST the validator's own.
    pub url: String,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub basic: Option<Basic>,
    /// A body template; a JSON body (starting `{` or `[`) gets each part JSON-escaped.
    #[serde(default)]
    pub body: Option<String>,
    pub answers: Vec<Answer>,
}

fn post() -> String {
    "POST".into()
}

/// What an answer means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Live,
    Invalid,
    Revoked,
    Expired,
    RateLimited,
    Unknown,
}

/// One kind of answer: every condition given must hold.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Answer {
    /// The HTTP status is one of these (none given: any).
    #[serde(default)]
    pub status: Vec<u16>,
    /// JSON pointers (`/login`) that must be present and not null.
    #[serde(default)]
    pub has: Vec<String>,
    /// JSON pointers and the value each must equal (`{ "/ok" = false }`).
    #[serde(default)]
    pub json: BTreeMap<String, toml::Value>,
    /// Substrings the body must contain.
    #[serde(default)]
    pub body: Vec<String>,
    /// Header names and a substring each value must contain (case-insensitive names).
    #[serde(default)]
    pub header: BTreeMap<String, String>,
    pub outcome: Outcome,
    /// Said in the verdict (`token_revoked`); the provider's own words where it has them.
    #[serde(default)]
    pub reason: Option<String>,
}

impl Answer {
    /// Whether anything beyond the status is looked at.
    fn reads_content(&self) -> bool {
        !(self.has.is_empty() && self.json.is_empty() && self.body.is_empty())
    }
}

/// Where each identity field is read: a JSON pointer (`/login`), or `header:NAME`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdentityFields {
    pub account: Option<String>,
    pub user: Option<String>,
    pub org: Option<String>,
    /// A list, or one string split on commas and spaces.
    pub scopes: Option<String>,
    pub expires: Option<String>,
    /// A boolean read as `live` (true) or `test` (false), or a string kept as it is.
    pub mode: Option<String>,
}

impl IdentityFields {
    pub fn all(&self) -> [(&'static str, Option<&String>); 6] {
        [
            ("account", self.account.as_ref()),
            ("user", self.user.as_ref()),
            ("org", self.org.as_ref()),
            ("scopes", self.scopes.as_ref()),
            ("expires", self.expires.as_ref()),
            ("mode", self.mode.as_ref()),
        ]
    }
}

/// A reach from a live answer: scopes to level and flags, or a fixed level where the
/// provider's keys carry no scopes and can all do the same.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReachSpec {
    /// Scopes (exact) that make the level `admin`, `write` or `read-only`.
    #[serde(default)]
    pub admin: Vec<String>,
    #[serde(default)]
    pub write: Vec<String>,
    #[serde(default)]
    pub read: Vec<String>,
    /// Scope to a reach flag (`admin`, `mint-credentials`, `read-secrets`, `data-read`).
    #[serde(default)]
    pub flags: BTreeMap<String, String>,
    /// The level when the answer names no scopes (`write`: every key of this kind can
    /// spend, send or change); none given: `unknown`.
    #[serde(default)]
    pub level: Option<String>,
    /// Flags every live key of this kind has.
    #[serde(default)]
    pub always: Vec<String>,
}

pub const LEVELS: &[&str] = &["admin", "write", "read-only"];
pub const FLAGS: &[&str] = &[
    "admin",
    "mint-credentials",
    "read-secrets",
    "data-read",
    "assume-role",
    "cross-account",
];

impl HttpSpec {
    /// The host every request of this validator goes to (the URL's, fixed).
    pub fn host(&self) -> Option<&str> {
        let rest = self.url.strip_prefix("https://")?;
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        Some(&rest[..end])
    }

    /// The URL's path and query (everything after the host).
    pub fn path(&self) -> &str {
        let host = self.host().unwrap_or_default();
        &self.url[("https://".len() + host.len()).min(self.url.len())..]
    }

    /// The names `{{...}}` a template may use: `secret` and the `with` parts.
    pub fn parts(&self) -> Vec<&str> {
        std::iter::once("secret")
            .chain(self.with.keys().map(String::as_str))
            .collect()
    }

    /// Problems with the spec, as messages: a validator that could send a secret somewhere
    /// else than its provider, or that reads a bare 200 as live, is refused at load.
    pub fn check(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut bad = |m: String| out.push(format!("validator {:?}: {m}", self.name));
        match self.host() {
            None => bad(format!("url {:?} is not https://HOST/...", self.url)),
            Some(h) if h.is_empty() || h.contains("{{") || h.contains('@') => {
                bad(format!("url {:?}: the host must be fixed", self.url))
            }
            Some(_) => {}
        }
        if !matches!(self.method.as_str(), "GET" | "POST" | "HEAD") {
            bad(format!("method {:?}: GET, POST or HEAD", self.method));
        }
        if self.rules.is_empty() {
            bad("rules: names no rule".into());
        }
        let known = self.parts();
        let mut templates: Vec<&str> = vec![&self.url];
        templates.extend(self.headers.values().map(String::as_str));
        templates.extend(self.body.as_deref());
        if let Some(b) = &self.basic {
            templates.extend([b.user.as_str(), b.password.as_str()]);
        }
        let mut uses_secret = false;
        for t in templates {
            for name in placeholders(t) {
                uses_secret |= name == "secret";
                if !known.contains(&name) {
                    bad(format!(
                        "{{{{{name}}}}}: no such part (parts: {})",
                        known.join(", ")
                    ));
                }
            }
        }
        if !uses_secret {
            bad("no template sends {{secret}}".into());
        }
        if let Some(r) = &self.revoke {
            for m in r.check(self) {
                bad(format!("revoke: {m}"));
            }
        }
        if !self.answers.iter().any(|a| a.outcome == Outcome::Live) {
            bad("answers: none is live".into());
        }
        for a in &self.answers {
            // A 200 alone proves nothing (a stub, a captive portal): live must read the body.
            if a.outcome == Outcome::Live && !a.reads_content() {
                bad(
                    "a live answer must check the body (has, json or body), not the status alone"
                        .into(),
                );
            }
            for p in a.has.iter().chain(a.json.keys()) {
                if !p.starts_with('/') {
                    bad(format!("{p:?} is not a JSON pointer (/field/sub)"));
                }
            }
        }
        for (field, at) in self.identity.all() {
            if let Some(at) = at {
                if !(at.starts_with('/') || at.starts_with("header:")) {
                    bad(format!(
                        "identity.{field}: {at:?} is neither /pointer nor header:NAME"
                    ));
                }
            }
        }
        if let Some(r) = &self.reach {
            if let Some(l) = &r.level {
                if !LEVELS.contains(&l.as_str()) {
                    bad(format!("reach.level {l:?}: one of {}", LEVELS.join(", ")));
                }
            }
            for f in r.flags.values().chain(&r.always) {
                if !FLAGS.contains(&f.as_str()) {
                    bad(format!("reach flag {f:?}: one of {}", FLAGS.join(", ")));
                }
            }
        }
        for c in &self.canaries {
            if let Err(e) = regex::Regex::new(c) {
                bad(format!("canaries: {}", super::regex_error(&e.to_string())));
            }
        }
        if self.concurrency == 0 || self.rate.is_nan() || self.rate <= 0.0 {
            bad("concurrency and rate must be above 0".into());
        }
        out
    }
}

impl RevokeSpec {
    /// Problems, as messages: a revoke that could go to another host, or that never says done.
    fn check(&self, of: &HttpSpec) -> Vec<String> {
        let mut out = Vec::new();
        let as_spec = HttpSpec {
            url: self.url.clone(),
            ..of.clone()
        };
        if as_spec.host().is_none() || as_spec.host() != of.host() {
            out.push(format!(
                "url {:?}: https:// on the validator's own host {:?}",
                self.url,
                of.host().unwrap_or_default()
            ));
        }
        if !matches!(self.method.as_str(), "POST" | "DELETE") {
            out.push(format!("method {:?}: POST or DELETE", self.method));
        }
        let mut templates: Vec<&str> = vec![&self.url];
        templates.extend(self.headers.values().map(String::as_str));
        templates.extend(self.body.as_deref());
        if let Some(b) = &self.basic {
            templates.extend([b.user.as_str(), b.password.as_str()]);
        }
        let known = of.parts();
        let used: Vec<&str> = templates.into_iter().flat_map(placeholders).collect();
        if !used.contains(&"secret") {
            out.push("no template sends {{secret}}".into());
        }
        for u in used.iter().filter(|u| !known.contains(u)) {
            out.push(format!("{{{{{u}}}}}: no such part"));
        }
        if !self.answers.iter().any(|a| a.outcome == Outcome::Revoked) {
            out.push("answers: none says revoked".into());
        }
        out
    }
}

/// The `{{name}}` placeholders of a template, in order.
pub fn placeholders(t: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = t;
    while let Some(i) = rest.find("{{") {
        let after = &rest[i + 2..];
        let Some(j) = after.find("}}") else { break };
        out.push(after[..j].trim());
        rest = &after[j + 2..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revoke_goes_only_to_the_validators_own_host_and_must_say_done() {
        let spec = |revoke: &str| -> HttpSpec {
            toml::from_str(&format!(
                r#"
name = "t"
rules = ["x"]
docs = "d"
url = "https://api.example/me"
headers = {{ Authorization = "Bearer {{{{secret}}}}" }}
answers = [{{ status = [200], has = ["/id"], outcome = "live" }}]
[revoke]
docs = "d"
{revoke}
"#
            ))
            .unwrap()
        };
        let done = r#"answers = [{ status = [204], outcome = "revoked" }]"#;
        let ok = spec(&format!(
            "method = \"DELETE\"\nurl = \"https://api.example/me\"\nheaders = {{ X = \"{{{{secret}}}}\" }}\n{done}"
        ));
        assert_eq!(ok.check(), Vec::<String>::new());
        for (revoke, says) in [
            (
                format!("url = \"https://evil.example/r?t={{{{secret}}}}\"\n{done}"),
                "on the validator's own host",
            ),
            (
                format!("url = \"http://api.example/r?t={{{{secret}}}}\"\n{done}"),
                "on the validator's own host",
            ),
            (
                format!("method = \"GET\"\nurl = \"https://api.example/r?t={{{{secret}}}}\"\n{done}"),
                "POST or DELETE",
            ),
            (
                format!("url = \"https://api.example/r\"\n{done}"),
                "no template sends {{secret}}",
            ),
            (
                "url = \"https://api.example/r?t={{secret}}\"\nanswers = [{ status = [200], outcome = \"invalid\" }]".into(),
                "none says revoked",
            ),
        ] {
            let problems = spec(&revoke).check().join("; ");
            assert!(problems.contains(says), "{revoke}: {problems}");
        }
    }
}
