//! Reading a provider's answer with its validator's spec: which answer it is, who the
//! credential is, and what the answer says it can reach. No network here: an answer in, a
//! verdict out, so every mapping is tested without a server.

use crate::model::Validation;
use crate::model::{severity, Identity, Reach, ReachFlag, ReachLevel, Status};
use crate::rules::validator::{Answer, HttpSpec, IdentityFields, Outcome, ReachSpec};
use serde_json::Value;

/// What came back: the status, the headers (names lowercased) and the body, cut at a limit.
#[derive(Debug, Clone, Default)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub(super) fn unknown(reason: impl Into<String>) -> Validation {
    Validation::new(Status::Unknown, Some(reason.into()))
}

fn matches(a: &Answer, r: &Response, json: Option<&Value>) -> bool {
    if !a.status.is_empty() && !a.status.contains(&r.status) {
        return false;
    }
    let present = |p: &str| {
        json.and_then(|j| j.pointer(p))
            .is_some_and(|v| !v.is_null())
    };
    if !a.has.iter().all(|p| present(p)) {
        return false;
    }
    let equal = |p: &str, want: &toml::Value| {
        let Some(got) = json.and_then(|j| j.pointer(p)) else {
            return false;
        };
        serde_json::to_value(want).is_ok_and(|w| &w == got)
    };
    if !a.json.iter().all(|(p, want)| equal(p, want)) {
        return false;
    }
    let body = String::from_utf8_lossy(&r.body);
    if !a.body.iter().all(|s| body.contains(s.as_str())) {
        return false;
    }
    a.header.iter().all(|(name, want)| {
        r.header(name)
            .is_some_and(|v| v.to_ascii_lowercase().contains(&want.to_ascii_lowercase()))
    })
}

/// What the answer `r` means under `spec`. A retryable answer (5xx, an unmatched 429) is
/// `Err(reason)`; the caller retries it or reports it `unknown`.
pub fn read(spec: &HttpSpec, r: &Response) -> Result<Validation, String> {
    let json: Option<Value> = serde_json::from_slice(&r.body).ok();
    let Some(a) = spec.answers.iter().find(|a| matches(a, r, json.as_ref())) else {
        if (300..400).contains(&r.status) {
            return Ok(unknown(format!(
                "HTTP {}: a redirect, not followed (to {})",
                r.status,
                r.header("location").map_or("nowhere named".into(), host_of)
            )));
        }
        if r.status == 429 || r.status >= 500 {
            return Err(format!("HTTP {}", r.status));
        }
        return Ok(unknown(format!(
            "HTTP {}: not an answer the {} validator knows{}",
            r.status,
            spec.name,
            if json.is_none() && !r.body.is_empty() {
                " (the body is not JSON)"
            } else {
                ""
            }
        )));
    };
    let why = |default: &str| {
        Some(
            a.reason
                .clone()
                .unwrap_or_else(|| format!("{default} (HTTP {})", r.status)),
        )
    };
    Ok(match a.outcome {
        Outcome::Live => {
            let mut v = Validation::new(Status::Live, None);
            let id = identity(&spec.name, &spec.identity, r, json.as_ref());
            v.account = id.account.clone();
            v.identity = Some(Box::new(id));
            v
        }
        Outcome::Invalid => Validation::new(Status::Invalid, why("invalid")),
        Outcome::Revoked => Validation::new(Status::Revoked, why("revoked")),
        Outcome::Expired => Validation::new(Status::Expired, why("expired")),
        // Retried by the caller, then `unknown`: a limit says nothing about the key.
        Outcome::RateLimited => return Err(format!("rate-limited (HTTP {})", r.status)),
        Outcome::Unknown => unknown(why("unknown").unwrap_or_default()),
    })
}

/// What a revoke's answer `r` says: `Ok` with what was done when an answer whose outcome is
/// `revoked` matches; else `Err` with why not (never retried: a revoke is sent once).
#[cfg_attr(not(feature = "http-validate"), allow(dead_code))]
pub fn revoked(answers: &[Answer], r: &Response) -> Result<String, String> {
    let json: Option<Value> = serde_json::from_slice(&r.body).ok();
    let said = |a: &Answer, what: &str| {
        a.reason
            .clone()
            .unwrap_or_else(|| format!("{what} (HTTP {})", r.status))
    };
    match answers.iter().find(|a| matches(a, r, json.as_ref())) {
        Some(a) if a.outcome == Outcome::Revoked => Ok(said(a, "revoked")),
        Some(a) => Err(said(a, "not revoked")),
        None => Err(format!("HTTP {}: not an answer the revoke knows", r.status)),
    }
}

/// The host of a URL, for a message: never its path or query, which may hold a secret.
fn host_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    rest[..end].to_string()
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// Each identity field the answer gave.
fn identity(provider: &str, f: &IdentityFields, r: &Response, json: Option<&Value>) -> Identity {
    let raw = |at: Option<&String>| -> Option<Value> {
        let at = at?;
        match at.strip_prefix("header:") {
            Some(h) => r.header(h).map(|v| Value::String(v.to_string())),
            None => json?.pointer(at).cloned(),
        }
    };
    let one = |at: Option<&String>| raw(at).as_ref().and_then(text);
    let scopes = raw(f.scopes.as_ref()).map(|v| match v {
        Value::Array(a) => a.iter().filter_map(text).collect(),
        Value::String(s) => s
            .split([',', ' '])
            .filter(|x| !x.is_empty())
            .map(String::from)
            .collect(),
        other => vec![other.to_string()],
    });
    let mode = raw(f.mode.as_ref()).and_then(|v| match v {
        Value::Bool(true) => Some("live".to_string()),
        Value::Bool(false) => Some("test".to_string()),
        other => text(&other),
    });
    Identity {
        provider: provider.to_string(),
        account: one(f.account.as_ref()),
        user: one(f.user.as_ref()),
        org: one(f.org.as_ref()),
        scopes,
        expires: one(f.expires.as_ref()),
        mode,
    }
}

/// What a live answer says the credential can reach, by the spec's `reach` table: the level
/// of its most powerful scope, the flags its scopes carry. `None`: the spec maps no reach.
pub fn reach(spec: &ReachSpec, id: &Identity) -> Reach {
    let who = id.display();
    let flag = |f: &str| -> Option<ReachFlag> {
        serde_json::from_value(Value::String(f.to_string())).ok()
    };
    let mut flags: Vec<ReachFlag> = spec.always.iter().filter_map(|f| flag(f)).collect();
    let mut notes = Vec::new();
    let level = match &id.scopes {
        Some(scopes) => {
            let has = |list: &[String]| scopes.iter().any(|s| list.contains(s));
            for s in scopes {
                flags.extend(spec.flags.get(s).and_then(|f| flag(f)));
            }
            let unmapped: Vec<&str> = scopes
                .iter()
                .filter(|s| {
                    !(spec.admin.contains(s) || spec.write.contains(s) || spec.read.contains(s))
                })
                .map(String::as_str)
                .collect();
            notes.push(format!(
                "scopes: {}",
                if scopes.is_empty() {
                    "(none)".into()
                } else {
                    scopes.join(", ")
                }
            ));
            if has(&spec.admin) {
                ReachLevel::Admin
            } else if has(&spec.write) {
                ReachLevel::Write
            } else if !unmapped.is_empty() {
                // A scope not in the table may be anything: not knowing is not reading.
                notes.push(format!("scopes not mapped: {}", unmapped.join(", ")));
                ReachLevel::Unknown
            } else if has(&spec.read) {
                ReachLevel::ReadOnly
            } else {
                ReachLevel::None
            }
        }
        None => match spec.level.as_deref() {
            Some("admin") => ReachLevel::Admin,
            Some("write") => ReachLevel::Write,
            Some("read-only") => ReachLevel::ReadOnly,
            _ => ReachLevel::Unknown,
        },
    };
    if level == ReachLevel::Admin {
        flags.push(ReachFlag::Admin);
    }
    flags.sort();
    flags.dedup();
    for (k, v) in [
        ("org", &id.org),
        ("account", &id.account),
        ("mode", &id.mode),
        ("expires", &id.expires),
    ] {
        if let Some(v) = v {
            notes.push(format!("{k}: {v}"));
        }
    }
    let reason = (level == ReachLevel::Unknown && id.scopes.is_none())
        .then(|| "the provider's answer names no scopes".to_string());
    Reach {
        level,
        severity: severity(level, &flags),
        flags,
        identity: who,
        not_evaluated: vec!["resource-permissions".into()],
        policies: Vec::new(),
        notes,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(toml_text: &str) -> HttpSpec {
        toml::from_str(toml_text).unwrap()
    }

    const GH: &str = r#"
name = "gh"
rules = ["x"]
docs = "d"
url = "https://api.example/user"
headers = { Authorization = "token {{secret}}" }
answers = [
  { status = [200], has = ["/login"], outcome = "live" },
  { status = [401], outcome = "invalid", reason = "Bad credentials" },
  { status = [403], header = { "x-ratelimit-remaining" = "0" }, outcome = "rate-limited" },
  { status = [200], json = { "/ok" = false, "/error" = "token_revoked" }, outcome = "revoked" },
]
identity = { user = "/login", account = "/id", scopes = "header:x-oauth-scopes" }
reach = { admin = ["admin:org"], write = ["repo"], read = ["read:user"], flags = { repo = "data-read" } }
"#;

    fn resp(status: u16, headers: &[(&str, &str)], body: &str) -> Response {
        Response {
            status,
            headers: headers
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn answers_map_to_states_in_order_and_anything_else_is_unknown() {
        let s = spec(GH);
        assert!(s.check().is_empty(), "{:?}", s.check());
        let live = read(
            &s,
            &resp(
                200,
                &[("X-OAuth-Scopes", "repo, read:user")],
                r#"{"login":"octo","id":7}"#,
            ),
        )
        .unwrap();
        assert_eq!(live.status, Status::Live);
        let id = live.identity.unwrap();
        assert_eq!(
            (id.user.as_deref(), id.account.as_deref()),
            (Some("octo"), Some("7"))
        );
        assert_eq!(
            id.scopes,
            Some(vec!["repo".to_string(), "read:user".to_string()])
        );
        let r = reach(s.reach.as_ref().unwrap(), &id);
        assert_eq!(
            (r.level, r.flags.clone()),
            (ReachLevel::Write, vec![ReachFlag::DataRead])
        );
        assert_eq!(
            read(&s, &resp(401, &[], "{}")).unwrap().status,
            Status::Invalid
        );
        assert_eq!(
            read(
                &s,
                &resp(200, &[], r#"{"ok":false,"error":"token_revoked"}"#)
            )
            .unwrap()
            .status,
            Status::Revoked
        );
        // A 200 without the proof is not live.
        let bare = read(&s, &resp(200, &[], "<html>hello</html>")).unwrap();
        assert_eq!(bare.status, Status::Unknown);
        assert!(bare.reason.unwrap().contains("not JSON"));
        assert!(read(&s, &resp(403, &[("x-ratelimit-remaining", "0")], ""))
            .unwrap_err()
            .contains("rate-limited"));
        assert!(read(&s, &resp(503, &[], "")).is_err());
        let moved = read(
            &s,
            &resp(
                302,
                &[("location", "https://elsewhere.example/x?token=abc")],
                "",
            ),
        )
        .unwrap();
        assert_eq!(moved.status, Status::Unknown);
        let why = moved.reason.unwrap();
        assert!(
            why.contains("elsewhere.example") && !why.contains("abc"),
            "{why}"
        );
    }

    #[test]
    fn a_spec_that_could_leak_or_guess_is_refused() {
        let bad = |from: &str, to: &str, says: &str| {
            let s = spec(&GH.replace(from, to));
            let problems = s.check().join("; ");
            assert!(problems.contains(says), "{from} -> {to}: {problems}");
        };
        bad(
            "https://api.example/user",
            "http://api.example/user",
            "not https",
        );
        bad(
            "https://api.example/user",
            "https://{{secret}}.example/user",
            "host must be fixed",
        );
        bad(
            r#"has = ["/login"], outcome = "live""#,
            r#"outcome = "live""#,
            "must check the body",
        );
        bad("token {{secret}}", "token {{nope}}", "no such part");
        bad("token {{secret}}", "token", "no template sends");
    }

    #[test]
    fn scopes_outside_the_table_make_the_level_unknown() {
        let s = spec(GH);
        let id = |scopes: Option<Vec<&str>>| Identity {
            provider: "gh".into(),
            scopes: scopes.map(|v| v.into_iter().map(String::from).collect()),
            ..Identity::default()
        };
        let level = |i| reach(s.reach.as_ref().unwrap(), &i).level;
        assert_eq!(
            level(id(Some(vec!["admin:org", "repo"]))),
            ReachLevel::Admin
        );
        assert_eq!(level(id(Some(vec!["read:user"]))), ReachLevel::ReadOnly);
        assert_eq!(
            level(id(Some(vec!["read:user", "gist"]))),
            ReachLevel::Unknown
        );
        assert_eq!(level(id(Some(vec![]))), ReachLevel::None);
        assert_eq!(level(id(None)), ReachLevel::Unknown);
    }
}
