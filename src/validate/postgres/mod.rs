//! PostgreSQL connection URLs (`postgres://user:password@host:port/db`): a credential that
//! names its own host. The check is a real login with the URL's user and password at the
//! URL's host, so it is made only with `--validate-hosts` (the operator's choice: the host
//! comes from the scanned text, and a scan must not probe a network on a file's say-so).
//! Without it the credential is `unknown`, saying so.
//!
//! The rule's `secret` is the password; the rest of the URL is read from the finding's line
//! (its context), where the match was found. The login speaks the frontend/backend protocol
//! itself ([`wire`]): SCRAM-SHA-256 (the default since PostgreSQL 14), so the password never
//! crosses the wire; a server that asks for it in clear text is not answered.

#[cfg(feature = "db-validate")]
mod wire;
#[cfg(not(feature = "db-validate"))]
#[path = "wire_offline.rs"]
mod wire;

use super::{Credential, Options, Validator};
use crate::model::{Finding, Identity, Secret, Status, Validation};

pub struct Postgres;

/// Where a URL says to log in, and as whom. `Debug` holds no password (there is none here).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub user: String,
    pub host: String,
    pub port: u16,
    pub database: String,
    /// `sslmode` from the query, if any.
    pub sslmode: Option<String>,
}

impl Target {
    /// `user@host:port/db`: names the credential without revealing it.
    pub fn display(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("{}@{host}:{}/{}", self.user, self.port, self.database)
    }
}

/// `%XX` escapes decoded, as libpq decodes a URL's parts.
fn unescape(s: &str) -> String {
    String::from_utf8_lossy(&crate::decode::percent_decoded(s.as_bytes())).into_owned()
}

/// The URL around the password `secret` on `line`: `postgres[ql]://USER:SECRET@HOST...`. The
/// first place on the line where the secret sits right there, else `None`.
pub fn target(line: &str, secret: &str) -> Option<Target> {
    if secret.is_empty() {
        return None;
    }
    let stop = |c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '<' | '>');
    for (at, _) in line.match_indices(secret) {
        let before = &line[..at];
        let Some(before) = before.strip_suffix(':') else {
            continue;
        };
        let Some(scheme_end) = before.rfind("://") else {
            continue;
        };
        let scheme_start = before[..scheme_end]
            .rfind(|c: char| !c.is_ascii_alphanumeric())
            .map_or(0, |i| i + 1);
        if !matches!(&before[scheme_start..scheme_end], "postgres" | "postgresql") {
            continue;
        }
        let user = &before[scheme_end + 3..];
        if user.is_empty() || user.contains(['/', '@', ':']) || user.contains(stop) {
            continue;
        }
        let Some(rest) = line[at + secret.len()..].strip_prefix('@') else {
            continue;
        };
        let rest = &rest[..rest.find(stop).unwrap_or(rest.len())];
        let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
        // Several hosts (`h1,h2`) are libpq's fallback list: which one answers is not ours
        // to pick.
        if authority.is_empty() || authority.contains(',') {
            return None;
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, p) = v6.split_once(']')?;
            (h, p.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        let port = match port {
            Some(p) => p.parse().ok()?,
            None => 5432,
        };
        let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
        let db = path.trim_start_matches('/');
        let user = unescape(user);
        let sslmode = query
            .split('&')
            .find_map(|kv| kv.strip_prefix("sslmode="))
            .map(unescape);
        return Some(Target {
            database: if db.is_empty() {
                user.clone()
            } else {
                unescape(db)
            },
            user,
            host: unescape(host),
            port,
            sslmode,
        });
    }
    None
}

/// The verdict of one login, as the wire module reports it.
#[derive(Debug, PartialEq, Eq)]
pub enum Login {
    /// Logged in (the server then said it was ready).
    Ok,
    /// Logged in without the password being asked for (`trust`): the URL works, but this
    /// proves nothing about the password.
    Trusted,
    /// The server refused the password or the user (SQLSTATE 28P01, 28000).
    Refused(String),
    /// No verdict: the reason.
    Unknown(String),
}

fn verdict(status: Status, reason: Option<String>, t: &Target) -> Validation {
    let mut v = Validation::new(status, reason);
    if status == Status::Live {
        v.identity = Some(Box::new(Identity {
            provider: "postgres".into(),
            account: Some(format!("{}:{}", t.host, t.port)),
            user: Some(t.user.clone()),
            org: Some(t.database.clone()),
            scopes: None,
            expires: None,
            mode: None,
        }));
    }
    v
}

/// The target a credential's parts name (see [`Postgres::credential`]).
fn the_target(c: &Credential) -> Option<Target> {
    let get = |name: &str| c.part(name).map(Secret::reveal);
    let sslmode = get("sslmode").filter(|m| !m.is_empty());
    Some(Target {
        user: get("user")?,
        host: get("host")?,
        port: get("port")?.parse().ok()?,
        database: get("database")?,
        sslmode,
    })
}

impl Validator for Postgres {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn parts(&self) -> &'static [&'static str] {
        &["secret"]
    }

    fn annotate(&self, findings: &mut [Finding], members: &[usize]) {
        for &i in members {
            let f = &mut findings[i];
            // Each URL is a whole credential by itself.
            f.credential_set = Some(format!("postgres-{}", f.fingerprint));
        }
    }

    fn credential(&self, findings: &[Finding], members: &[usize]) -> Option<Credential> {
        let f = &findings[*members.first()?];
        let mut parts = vec![("secret", f.secret.clone())];
        // The rest of the URL, from the line it is on; the parts (not the line) make the
        // credential, so one URL found on many lines is checked once.
        let id = match target(f.context.text(), &f.secret.reveal()) {
            Some(t) => {
                let id = t.display();
                let port = t.port.to_string();
                let ssl = t.sslmode.unwrap_or_default();
                for (name, value) in [
                    ("user", &t.user),
                    ("host", &t.host),
                    ("port", &port),
                    ("database", &t.database),
                    ("sslmode", &ssl),
                ] {
                    parts.push((name, Secret::new(value.as_bytes())));
                }
                id
            }
            None => format!(
                "postgres URL {}",
                &f.fingerprint[..f.fingerprint.len().min(16)]
            ),
        };
        Some(Credential::new(self.name(), id, parts))
    }

    fn precheck(&self, c: &Credential, opts: &Options) -> Option<Validation> {
        let unknown = |why: String| Some(Validation::new(Status::Unknown, Some(why)));
        let Some(t) = the_target(c) else {
            return unknown("the URL's user and host could not be read from its line".into());
        };
        if !opts.validate_hosts {
            return unknown(format!(
                "names its own host ({}:{}): checked only with --validate-hosts",
                t.host, t.port
            ));
        }
        if matches!(
            t.sslmode.as_deref(),
            Some("require" | "verify-ca" | "verify-full")
        ) {
            return unknown(format!(
                "sslmode={}: TLS logins are not supported yet",
                t.sslmode.as_deref().unwrap_or_default()
            ));
        }
        None
    }

    fn check(&self, creds: &[&Credential], opts: &Options) -> Vec<Validation> {
        // One login at a time: each goes to a different host as often as not, and a scan
        // holds few database URLs.
        creds
            .iter()
            .map(|c| {
                let Some(t) = the_target(c) else {
                    return Validation::new(Status::Unknown, Some("no URL".into()));
                };
                let password = unescape(&c.part("secret").map(Secret::reveal).unwrap_or_default());
                match wire::login(&t, &password, opts.timeout) {
                    Login::Ok => verdict(Status::Live, None, &t),
                    Login::Trusted => verdict(
                        Status::Live,
                        Some("the server let the user in without asking for a password".into()),
                        &t,
                    ),
                    Login::Refused(why) => verdict(Status::Invalid, Some(why), &t),
                    Login::Unknown(why) => verdict(Status::Unknown, Some(why), &t),
                }
            })
            .collect()
    }

    fn unpaired(&self, _f: &Finding) -> Validation {
        Validation::skipped("not checked", None)
    }

    fn endpoint(&self, _opts: &Options) -> Option<(String, bool)> {
        Some(("postgres login at the URL's own host".into(), false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_around_a_password_names_user_host_port_and_database() {
        let t = |line: &str, secret: &str| target(line, secret);
        assert_eq!(
            t(
                "DATABASE_URL=postgres://app:pw1@db.internal:6543/main?sslmode=disable x",
                "pw1"
            ),
            Some(Target {
                user: "app".into(),
                host: "db.internal".into(),
                port: 6543,
                database: "main".into(),
                sslmode: Some("disable".into()),
            })
        );
        let v6 = t("\"postgresql://svc%40x:p%2Fw@[::1]/\"", "p%2Fw").unwrap();
        assert_eq!(
            (
                v6.user.as_str(),
                v6.host.as_str(),
                v6.port,
                v6.database.as_str()
            ),
            ("svc@x", "::1", 5432, "svc@x")
        );
        assert_eq!(v6.display(), "svc@x@[::1]:5432/svc@x");
        // The secret elsewhere on the line first, then in the URL.
        let two = t("pw=pw1 url=postgres://app:pw1@h/d", "pw1").unwrap();
        assert_eq!(two.host, "h");
        assert_eq!(t("mysql://app:pw1@h/d", "pw1"), None);
        assert_eq!(t("postgres://app:pw1@h1,h2/d", "pw1"), None);
        assert_eq!(t("postgres://app:pw1@h:port/d", "pw1"), None);
        assert_eq!(t("postgres://app:pw1", "pw1"), None);
    }
}
