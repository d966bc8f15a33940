//! Declarative HTTP validators: one [`Validator`] per `[[validators]]` table of the rule files
//! ([`crate::rules::validator::HttpSpec`]), so adding a provider is TOML, not Rust.
//!
//! Safety, by construction: the request goes to the spec's fixed host over HTTPS, or to the
//! base URL the operator's config names for that provider (`[validate.endpoints]`, never a
//! file in what is scanned); nothing of the scanned text chooses a host; redirects are
//! answers, not followed; no proxy is used; a secret a canary pattern matches is never sent.

mod answer;
#[cfg(feature = "http-validate")]
mod client;
#[cfg(not(feature = "http-validate"))]
#[path = "client_offline.rs"]
mod client;

pub use answer::{read, Response};

use super::{Credential, Options, Validator};
use crate::model::{Finding, Reach, Secret, Status, Validation};
use crate::rules::validator::HttpSpec;
use sha2::{Digest, Sha256};
use std::sync::{OnceLock, RwLock};

/// Largest distance, in bytes, between a secret and the other parts of its credential.
const PAIR_WITHIN: usize = 4096;

/// One declarative validator.
pub struct HttpValidator {
    pub spec: HttpSpec,
    name: &'static str,
    parts: &'static [&'static str],
    canaries: Vec<regex::Regex>,
}

/// A request ready to send. `Debug` shows the method only.
// Without the HTTP client nothing is sent, so nothing builds a request.
#[cfg_attr(not(feature = "http-validate"), allow(dead_code))]
pub(crate) struct Request {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Request({} <redacted>)", self.method)
    }
}

impl HttpValidator {
    fn new(spec: HttpSpec) -> HttpValidator {
        let name: &'static str = Box::leak(spec.name.clone().into_boxed_str());
        let parts: Vec<&'static str> = spec
            .parts()
            .into_iter()
            .map(|p| &*Box::leak(p.to_string().into_boxed_str()))
            .collect();
        let canaries = spec
            .canaries
            .iter()
            .filter_map(|c| regex::Regex::new(c).ok())
            .collect();
        HttpValidator {
            name,
            parts: Box::leak(parts.into_boxed_slice()),
            canaries,
            spec,
        }
    }

    /// The base (scheme and host) requests go to, and whether the operator overrode it.
    pub fn base(&self, opts: &Options) -> (String, bool) {
        match opts.endpoints.get(self.name) {
            Some(b) => (b.trim_end_matches('/').to_string(), true),
            None => (format!("https://{}", self.spec.host().unwrap_or("")), false),
        }
    }

    /// The request for `c`, its templates filled with the credential's parts.
    #[cfg_attr(not(feature = "http-validate"), allow(dead_code))]
    pub(crate) fn request(&self, c: &Credential, opts: &Options) -> Result<Request, String> {
        let s = &self.spec;
        let t = Templates {
            method: &s.method,
            path: s.path(),
            headers: &s.headers,
            basic: s.basic.as_ref(),
            body: s.body.as_deref(),
        };
        self.build(&t, c, opts)
    }

    /// The request by which `c` revokes itself (`--rotate`), to the same base as its check.
    #[cfg_attr(not(feature = "http-validate"), allow(dead_code))]
    pub(crate) fn revoke_request(&self, c: &Credential, opts: &Options) -> Result<Request, String> {
        let r = self.spec.revoke.as_ref().ok_or("cannot revoke itself")?;
        let host = self.spec.host().unwrap_or_default();
        // Checked at load: the revoke URL is on the validator's own host.
        let path = r
            .url
            .strip_prefix("https://")
            .and_then(|u| u.strip_prefix(host))
            .ok_or_else(|| format!("validator {}: revoke url not on {host}", self.name))?;
        let t = Templates {
            method: &r.method,
            path,
            headers: &r.headers,
            basic: r.basic.as_ref(),
            body: r.body.as_deref(),
        };
        self.build(&t, c, opts)
    }

    #[cfg_attr(not(feature = "http-validate"), allow(dead_code))]
    fn build(&self, t: &Templates<'_>, c: &Credential, opts: &Options) -> Result<Request, String> {
        let (base, overridden) = self.base(opts);
        // Checked again here, whatever loading checked: a secret only goes over HTTPS to the
        // spec's own host, unless the operator named another base.
        if self
            .spec
            .host()
            .is_none_or(|h| h.is_empty() || h.contains("{{"))
            && !overridden
        {
            return Err(format!("validator {}: no fixed https host", self.name));
        }
        let value = |name: &str| c.part(name).map(Secret::reveal);
        #[derive(Clone, Copy, PartialEq)]
        enum In {
            Url,
            Header,
            Json,
        }
        let fill = |t: &str, place: In| -> Result<String, String> {
            let mut out = String::with_capacity(t.len());
            let mut rest = t;
            while let Some(i) = rest.find("{{") {
                out.push_str(&rest[..i]);
                let after = &rest[i + 2..];
                let j = after.find("}}").ok_or("an unclosed {{")?;
                let name = after[..j].trim();
                let v = value(name).ok_or_else(|| format!("no part {name}"))?;
                if place == In::Url {
                    out.push_str(&percent(&v));
                } else if v.bytes().any(|b| b < 0x20 || b == 0x7f) {
                    // A header value with a control character could start another header.
                    return Err("a part holds a control character; not sent".into());
                } else if place == In::Json {
                    // Inside a JSON string: a quote in the secret must not end it.
                    out.push_str(&v.replace('\\', "\\\\").replace('"', "\\\""));
                } else {
                    out.push_str(&v);
                }
                rest = &after[j + 2..];
            }
            out.push_str(rest);
            Ok(out)
        };
        let url = format!("{base}{}", fill(t.path, In::Url)?);
        let mut headers = Vec::new();
        for (k, v) in t.headers {
            headers.push((k.clone(), fill(v, In::Header)?));
        }
        if let Some(b) = t.basic {
            use base64::Engine;
            let pair = format!(
                "{}:{}",
                fill(&b.user, In::Header)?,
                fill(&b.password, In::Header)?
            );
            let enc = base64::engine::general_purpose::STANDARD.encode(pair);
            headers.push(("Authorization".into(), format!("Basic {enc}")));
        }
        let body = match t.body {
            Some(b) if b.trim_start().starts_with(['{', '[']) => Some(fill(b, In::Json)?),
            Some(b) => Some(fill(b, In::Header)?),
            None => None,
        };
        Ok(Request {
            method: t.method.to_string(),
            url,
            headers,
            body,
        })
    }
}

/// The templates of one request (a check or a revoke).
#[cfg_attr(not(feature = "http-validate"), allow(dead_code))]
struct Templates<'a> {
    method: &'a str,
    path: &'a str,
    headers: &'a std::collections::BTreeMap<String, String>,
    basic: Option<&'a crate::rules::validator::Basic>,
    body: Option<&'a str>,
}

/// `s` percent-encoded for a URL's path or query: every byte but unreserved ones and `:`
/// (allowed in both, and part of Telegram bot tokens).
#[cfg_attr(not(feature = "http-validate"), allow(dead_code))]
fn percent(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~:".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn registry() -> &'static RwLock<Vec<&'static HttpValidator>> {
    static R: OnceLock<RwLock<Vec<&'static HttpValidator>>> = OnceLock::new();
    R.get_or_init(|| {
        let all = crate::rules::builtin_validators()
            .into_iter()
            .map(|s| &*Box::leak(Box::new(HttpValidator::new(s))))
            .collect();
        RwLock::new(all)
    })
}

/// Whether [`register`] was given any validator in this process.
static OPERATORS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether the operator's validators were added ([`register`]): only then can the set differ
/// from the built-in one the test suite checks.
pub fn operators_registered() -> bool {
    OPERATORS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Add the operator's validators (from their rule files); one named as a built-in one
/// replaces it for this run. None: nothing is built (the built-in ones are built on first use).
pub fn register(specs: Vec<HttpSpec>) {
    if specs.is_empty() {
        return;
    }
    OPERATORS.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut r = crate::sync::write(registry());
    for s in specs {
        r.retain(|v| v.name != s.name);
        r.push(Box::leak(Box::new(HttpValidator::new(s))));
    }
}

/// The declarative validator called `name`.
pub fn find(name: &str) -> Option<&'static HttpValidator> {
    let r = crate::sync::read(registry());
    r.iter().copied().find(|v| v.name == name)
}

/// Every declarative validator, by name.
pub fn all() -> Vec<&'static HttpValidator> {
    let mut v = crate::sync::read(registry()).clone();
    v.sort_by_key(|v| v.name);
    v
}

/// Problems with the registered specs, as messages.
pub fn problems() -> Vec<String> {
    all()
        .iter()
        .flat_map(|v| {
            v.spec
                .check()
                .into_iter()
                .map(|m| format!("{}: {m}", v.spec.origin))
        })
        .collect()
}

fn part_of<'a>(f: &'a Finding, name: &str) -> Option<&'a str> {
    f.part
        .as_ref()
        .filter(|p| p.validator == name)
        .map(|p| p.part.as_str())
}

impl Validator for HttpValidator {
    fn name(&self) -> &'static str {
        self.name
    }

    fn kind(&self) -> &'static str {
        "http"
    }

    fn parts(&self) -> &'static [&'static str] {
        self.parts
    }

    /// Each secret is one credential with the nearest of each other part in the same place.
    fn annotate(&self, findings: &mut [Finding], members: &[usize]) {
        for group in &super::by_blob(findings, members) {
            for &s in group {
                if part_of(&findings[s], self.name) != Some("secret") {
                    continue;
                }
                let at = findings[s].start;
                let mut set = vec![s];
                for part in self.spec.with.keys() {
                    let near = group
                        .iter()
                        .copied()
                        .filter(|&i| part_of(&findings[i], self.name) == Some(part.as_str()))
                        .map(|i| (findings[i].start.abs_diff(at), i))
                        .filter(|&(d, _)| d <= PAIR_WITHIN)
                        .min();
                    match near {
                        Some((_, i)) => set.push(i),
                        None => {
                            set.clear();
                            break;
                        }
                    }
                }
                if set.is_empty() {
                    continue;
                }
                let mut h = Sha256::new();
                for &m in &set {
                    h.update(findings[m].fingerprint.as_bytes());
                }
                let id = crate::model::hex(&h.finalize()[..8]);
                // A part shared by two secrets keeps the first set; the secret is what counts.
                for m in set {
                    if findings[m].credential_set.is_none() || m == s {
                        findings[m].credential_set = Some(id.clone());
                    }
                }
            }
        }
    }

    fn credential(&self, findings: &[Finding], members: &[usize]) -> Option<Credential> {
        let pick = |part: &str| {
            members
                .iter()
                .copied()
                .find(|&i| part_of(&findings[i], self.name) == Some(part))
        };
        let secret = pick("secret")?;
        let mut parts = vec![("secret", findings[secret].secret.clone())];
        for &p in &self.parts[1..] {
            parts.push((p, findings[pick(p)?].secret.clone()));
        }
        // Named by the finding's fingerprint: it identifies the secret without revealing it.
        let fp = &findings[secret].fingerprint;
        let id = format!("{}:{}", self.name, &fp[..fp.len().min(16)]);
        Some(Credential::new(self.name, id, parts))
    }

    fn precheck(&self, c: &Credential, opts: &Options) -> Option<Validation> {
        let secret = c.part("secret")?.reveal();
        let canary = self
            .canaries
            .iter()
            .chain(&opts.canary_patterns)
            .any(|r| r.is_match(&secret));
        canary.then(|| Validation::skipped("canary", None))
    }

    fn check(&self, creds: &[&Credential], opts: &Options) -> Vec<Validation> {
        client::check_all(self, creds, opts)
    }

    fn unpaired(&self, _f: &Finding) -> Validation {
        // A validator of one part pairs nothing: its finding was left out of every credential
        // (a record without its rule's part, say), and no other part is missing.
        let why = match &self.parts[1..] {
            [] => format!("not checked: no {} credential holds it", self.name),
            others => format!("no pair: {} needs {}", self.name, others.join(", ")),
        };
        Validation::skipped(&why, None)
    }

    fn can_revoke(&self) -> bool {
        self.spec.revoke.is_some()
    }

    fn revoke(&self, c: &Credential, opts: &Options) -> Result<String, String> {
        client::revoke(self, c, opts)
    }

    fn reach_from(&self, v: &Validation) -> Option<Reach> {
        let id = v.identity.as_ref().filter(|_| v.status == Status::Live)?;
        let spec = self.spec.reach.clone().unwrap_or_default();
        Some(answer::reach(&spec, id))
    }

    fn endpoint(&self, opts: &Options) -> Option<(String, bool)> {
        let (base, overridden) = self.base(opts);
        // The path without its query: a query can hold the secret.
        let path = self.spec.path().split('?').next().unwrap_or("");
        Some((format!("{} {base}{path}", self.spec.method), overridden))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_validator_is_sound_and_names_existing_rules() {
        let rules = crate::rules::builtin();
        let specs = crate::rules::builtin_validators();
        assert!(!specs.is_empty());
        let mut names = std::collections::HashSet::new();
        // docs/validators.md lists each, with its request.
        let docs = include_str!("../../../docs/validators.md");
        for s in &specs {
            assert!(names.insert(&s.name), "two validators named {}", s.name);
            let url = s.url.replace("{{secret}}", "…");
            let row = format!("| `{}` |", s.name);
            assert!(
                docs.lines()
                    .any(|l| l.starts_with(&row) && l.contains(&url)),
                "docs/validators.md has no row for {} with {url}",
                s.name
            );
            assert_eq!(s.check(), Vec::<String>::new(), "{}", s.name);
            for id in s.rules.iter().chain(s.with.values()) {
                let r = rules.iter().find(|r| &r.id == id);
                let r = r.unwrap_or_else(|| panic!("{}: no rule {id}", s.name));
                assert_eq!(
                    r.validator.as_ref().map(|v| v.name.as_str()),
                    Some(s.name.as_str()),
                    "{id} is claimed by two validators"
                );
            }
        }
    }

    #[test]
    fn a_request_fills_parts_encodes_urls_and_refuses_header_injection() {
        let spec: HttpSpec = toml::from_str(
            r#"
name = "t"
rules = ["x"]
with = { id = "y" }
docs = "d"
url = "https://api.example/v1/{{id}}?key={{secret}}"
headers = { "X-Key" = "{{secret}}" }
basic = { user = "{{id}}", password = "{{secret}}" }
answers = [{ status = [200], has = ["/a"], outcome = "live" }]
"#,
        )
        .unwrap();
        let v = HttpValidator::new(spec);
        let cred = |s: &str| {
            Credential::new(
                "t",
                "t:1".into(),
                vec![
                    ("secret", Secret::new(s.as_bytes())),
                    ("id", Secret::new(b"ab/c")),
                ],
            )
        };
        let mut opts = Options::from_env();
        let r = v.request(&cred("s&t"), &opts).unwrap();
        assert_eq!(r.url, "https://api.example/v1/ab%2Fc?key=s%26t");
        assert!(r.headers.contains(&("X-Key".into(), "s&t".into())));
        assert!(v.request(&cred("a\r\nHost: evil"), &opts).is_err());
        assert!(!format!("{r:?}").contains("s&t"));
        opts.endpoints
            .insert("t".into(), "http://127.0.0.1:9/fake/".into());
        let r = v.request(&cred("k"), &opts).unwrap();
        assert_eq!(r.url, "http://127.0.0.1:9/fake/v1/ab%2Fc?key=k");
    }
}
