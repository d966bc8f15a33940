//! What a runtime can reach: every place code running here can read a credential from.
//! Environments (this process's and every other process's it may read), the credential files
//! under `$HOME` and those the AWS SDKs' credential chain names, the instance metadata service
//! and the ECS/EKS container credential endpoint.
//!
//! The endpoints speak plain HTTP on link-local addresses, so a few lines of HTTP/1.1 over a
//! socket with short timeouts do: a runtime without a metadata service answers in well under
//! a second. The credentials they hand out become blobs like any file's, and the engine finds
//! and pairs them as it does a `curl` of the same endpoint printed by an interpreter.

use super::env::Environment;
use super::{Blob, Provenance};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Credential files under `$HOME` that tools read without being told to.
pub const HOME_CREDENTIALS: &[&str] = &[
    ".aws/credentials",
    ".aws/config",
    ".aws/sso/cache",
    ".aws/cli/cache",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".kube/config",
    ".config/gcloud/application_default_credentials.json",
    ".config/gcloud/credentials.db",
    ".azure",
];

/// The files an AWS SDK's credential chain reads, named by variables of `env`: shared
/// credentials and config files moved elsewhere, and a web identity token (EKS IRSA).
pub fn aws_chain_files(env: &Environment) -> Vec<PathBuf> {
    const VARS: &[&str] = &[
        "AWS_SHARED_CREDENTIALS_FILE",
        "AWS_CONFIG_FILE",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    ];
    VARS.iter()
        .filter_map(|v| var(env, v))
        .map(PathBuf::from)
        .collect()
}

/// The value of `name` in `env`, if set and not empty.
pub fn var(env: &Environment, name: &str) -> Option<String> {
    env.vars
        .iter()
        .find(|(k, _)| k == name.as_bytes())
        .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
        .filter(|v| !v.is_empty())
}

/// Every other process's environment this one may read, and how many it may not.
pub fn other_environments() -> (Vec<Environment>, usize) {
    let me = std::process::id();
    let (mut found, mut denied) = (Vec::new(), 0);
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return (found, denied);
    };
    let mut pids: Vec<u32> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&p| p != me)
        .collect();
    pids.sort_unstable();
    for pid in pids {
        match Environment::of_pid(pid) {
            // A kernel thread's environment is empty.
            Ok(e) if e.vars.is_empty() => {}
            Ok(e) => found.push(e),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => denied += 1,
            // The process ended meanwhile.
            Err(_) => {}
        }
    }
    (found, denied)
}

/// What the metadata endpoints gave: credential documents as blobs, and what was learnt
/// about the endpoints themselves.
#[derive(Default)]
pub struct Endpoints {
    pub blobs: Vec<Blob>,
    /// Plain-language notes: which endpoint answered, and how.
    pub notes: Vec<String>,
    /// The instance metadata service answered a request without a session token (IMDSv1):
    /// any code that can make a GET (a server-side request forgery) can read its credentials.
    pub imds_v1: Option<String>,
}

/// Where to look for the endpoints, from the variables the AWS SDKs honour.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// `AWS_EC2_METADATA_SERVICE_ENDPOINT`, default `http://169.254.169.254`; `None` when
    /// `AWS_EC2_METADATA_DISABLED=true`.
    pub imds: Option<String>,
    /// `AWS_CONTAINER_CREDENTIALS_FULL_URI`, or `http://169.254.170.2` +
    /// `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI`.
    pub container: Option<String>,
    /// `AWS_CONTAINER_AUTHORIZATION_TOKEN`, or the contents of `..._TOKEN_FILE`.
    pub container_token: Option<String>,
    pub timeout: Duration,
}

impl EndpointConfig {
    pub fn from_env(env: &Environment, timeout: Duration) -> EndpointConfig {
        let disabled =
            var(env, "AWS_EC2_METADATA_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let imds = (!disabled).then(|| {
            var(env, "AWS_EC2_METADATA_SERVICE_ENDPOINT")
                .unwrap_or_else(|| "http://169.254.169.254".into())
        });
        let container = var(env, "AWS_CONTAINER_CREDENTIALS_FULL_URI").or_else(|| {
            var(env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
                .map(|r| format!("http://169.254.170.2{r}"))
        });
        let container_token = var(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN").or_else(|| {
            var(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")
                .and_then(|f| std::fs::read_to_string(f).ok())
                .map(|t| t.trim().to_string())
        });
        EndpointConfig {
            imds,
            container,
            container_token,
            timeout,
        }
    }
}

/// Ask the instance metadata service and the container endpoint for credentials.
pub fn endpoints(cfg: &EndpointConfig) -> Endpoints {
    let mut out = Endpoints::default();
    if let Some(base) = &cfg.imds {
        imds(base.trim_end_matches('/'), cfg.timeout, &mut out);
    }
    if let Some(uri) = &cfg.container {
        let headers: Vec<(&str, &str)> = cfg
            .container_token
            .as_deref()
            .map(|t| vec![("Authorization", t)])
            .unwrap_or_default();
        match http("GET", uri, &headers, cfg.timeout) {
            Ok((200, body)) => {
                out.notes
                    .push(format!("container credential endpoint {uri} answered"));
                out.blobs
                    .push(blob(&format!("container-credentials {uri}"), body));
            }
            Ok((code, _)) => out.notes.push(format!(
                "container credential endpoint {uri} answered HTTP {code}"
            )),
            Err(e) => out
                .notes
                .push(format!("container credential endpoint {uri}: {e}")),
        }
    }
    out
}

const CREDENTIALS_PATH: &str = "/latest/meta-data/iam/security-credentials/";

fn imds(base: &str, timeout: Duration, out: &mut Endpoints) {
    // IMDSv2: a session token first, then every request carries it.
    let token = match http(
        "PUT",
        &format!("{base}/latest/api/token"),
        &[("X-aws-ec2-metadata-token-ttl-seconds", "60")],
        timeout,
    ) {
        Ok((200, t)) => Some(String::from_utf8_lossy(&t).trim().to_string()),
        Ok(_) => None,
        Err(e) => {
            out.notes.push(format!(
                "instance metadata service {base}: not reachable ({e})"
            ));
            return;
        }
    };
    // Does it answer without one?
    if let Ok((200, _)) = http("GET", &format!("{base}/latest/meta-data/"), &[], timeout) {
        out.imds_v1 = Some(format!(
            "instance metadata service {base} answers without a session token (IMDSv1): \
             require IMDSv2 (HttpTokens=required)"
        ));
    }
    let headers: Vec<(&str, &str)> = token
        .as_deref()
        .map(|t| vec![("X-aws-ec2-metadata-token", t)])
        .unwrap_or_default();
    out.notes.push(format!(
        "instance metadata service {base} answered ({})",
        if token.is_some() {
            "IMDSv2"
        } else {
            "IMDSv1 only"
        }
    ));
    let roles = match http(
        "GET",
        &format!("{base}{CREDENTIALS_PATH}"),
        &headers,
        timeout,
    ) {
        Ok((200, body)) => String::from_utf8_lossy(&body).into_owned(),
        Ok((404, _)) => {
            out.notes
                .push("instance metadata service: no instance role".into());
            return;
        }
        Ok((code, _)) => {
            out.notes.push(format!(
                "instance metadata service: role list answered HTTP {code}"
            ));
            return;
        }
        Err(e) => {
            out.notes
                .push(format!("instance metadata service: role list: {e}"));
            return;
        }
    };
    for role in roles.lines().map(str::trim).filter(|r| is_role_name(r)) {
        let url = format!("{base}{CREDENTIALS_PATH}{role}");
        match http("GET", &url, &headers, timeout) {
            Ok((200, body)) => out.blobs.push(blob(&format!("imds {url}"), body)),
            Ok((code, _)) => out.notes.push(format!("{url}: HTTP {code}")),
            Err(e) => out.notes.push(format!("{url}: {e}")),
        }
    }
}

/// An IAM role name (`[\w+=,.@-]{1,64}`): nothing else goes into a URL.
fn is_role_name(r: &str) -> bool {
    (1..=64).contains(&r.len())
        && r.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+=,.@_-".contains(&b))
}

fn blob(name: &str, body: Vec<u8>) -> Blob {
    Blob {
        provenance: Provenance::Stream {
            name: name.to_string(),
        },
        data: body,
    }
}

/// Largest answer read from an endpoint: a credential document is about 1.5 KB.
const MAX_BODY: u64 = 1 << 20;

/// One HTTP/1.1 request to an `http://` URL: (status, body). Connect, write and each read
/// are bounded by `timeout`, and the whole request by twice that: an endpoint that drips a
/// byte at a time cannot hold a runtime audit for long.
pub fn http(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    timeout: Duration,
) -> Result<(u16, Vec<u8>), String> {
    use std::io::{Read, Write};
    use std::net::{TcpStream, ToSocketAddrs};
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| "only http:// endpoints are supported".to_string())?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let addr_text = if authority.contains(':') && !authority.ends_with(']') {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    let addr = addr_text
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .next()
        .ok_or_else(|| format!("{authority}: no address"))?;
    let deadline = std::time::Instant::now() + 2 * timeout;
    let mut s = TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\nContent-Length: 0\r\n"
    );
    for (k, v) in headers {
        if v.contains(['\r', '\n']) {
            return Err(format!("header {k} holds a line break"));
        }
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 << 10];
    let limit = (MAX_BODY + (16 << 10)) as usize;
    while raw.len() < limit {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return Err(format!(
                "no complete answer within {} ms",
                (2 * timeout).as_millis()
            ));
        }
        s.set_read_timeout(Some(left.min(timeout)))
            .map_err(|e| e.to_string())?;
        match s.read(&mut buf[..(limit - raw.len()).min(16 << 10)]) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // The last read's time ran out with the whole request's: say which.
            Err(_) if std::time::Instant::now() >= deadline => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
    let head_end = memchr::memmem::find(&raw, b"\r\n\r\n").ok_or("no HTTP answer")?;
    let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or("no HTTP status")?;
    let mut body = raw[head_end + 4..].to_vec();
    let lower = head.to_ascii_lowercase();
    if lower.contains("transfer-encoding: chunked") {
        body = dechunk(&body);
    } else if let Some(n) = lower
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|n| n.trim().parse::<usize>().ok())
    {
        body.truncate(n);
    }
    Ok((status, body))
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = memchr::memmem::find(b, b"\r\n") {
        let size = std::str::from_utf8(&b[..eol])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next()?.trim(), 16).ok());
        match size {
            Some(n) if n > 0 && eol + 2 + n <= b.len() => {
                out.extend_from_slice(&b[eol + 2..eol + 2 + n]);
                b = &b[(eol + 4 + n).min(b.len())..];
            }
            _ => break,
        }
    }
    out
}

/// The credential files under `home` that exist.
pub fn home_files(home: &Path) -> Vec<PathBuf> {
    HOME_CREDENTIALS
        .iter()
        .map(|p| home.join(p))
        .filter(|p| p.exists())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_names_and_chunks() {
        assert!(is_role_name("app-role_1@x"));
        assert!(!is_role_name("../etc"));
        assert!(!is_role_name(""));
        assert_eq!(dechunk(b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"), b"abcde");
    }

    #[test]
    fn a_slow_drip_endpoint_meets_the_whole_request_deadline() {
        use std::io::Write;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        // One byte every 50 ms, each well within the per-read timeout, for up to 20 s.
        let server = std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            for _ in 0..400 {
                if c.write_all(b"x").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let start = std::time::Instant::now();
        let r = http(
            "GET",
            &format!("http://127.0.0.1:{port}/"),
            &[],
            Duration::from_millis(300),
        );
        let took = start.elapsed();
        // An error (the deadline's, or a read's own timeout on a loaded machine) ...
        assert!(r.is_err());
        // ... long before the drip ends: the deadline is 600 ms, the drip lasts 20 s.
        assert!(took < Duration::from_secs(10), "{took:?}");
        drop(server);
    }

    #[test]
    fn an_unreachable_endpoint_is_an_error_not_a_hang() {
        // A listener that accepts and never answers: only the timeout can end the request.
        // It is held for the whole test, so no other process can take its port meanwhile.
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let url = format!("http://127.0.0.1:{port}/");
        let (tx, rx) = std::sync::mpsc::channel();
        let server = std::thread::spawn(move || {
            let (c, _) = l.accept().unwrap();
            // Keep the connection open, silent, until the test is done with it.
            let _ = rx.recv();
            drop(c);
        });
        let timeout = Duration::from_millis(300);
        // The request in a thread of its own: a request that hangs fails the test instead
        // of hanging it.
        let (done, ended) = std::sync::mpsc::channel();
        let client = std::thread::spawn(move || {
            let start = std::time::Instant::now();
            let r = http("GET", &url, &[], timeout);
            let _ = done.send((r, start.elapsed()));
        });
        let ended = ended.recv_timeout(Duration::from_secs(10));
        // Let the server close the connection, which ends a hung request too.
        tx.send(()).unwrap();
        server.join().unwrap();
        client.join().unwrap();
        let (r, took) = ended.expect("the request to a silent endpoint hung");
        let e = r.expect_err("a silent endpoint gave an answer");
        // It ended because time ran out (a read's own timeout, or the whole request's), not
        // because the connection failed or closed ...
        assert!(
            e.contains("within")
                || e.contains("timed out")
                || e.contains("temporarily unavailable"),
            "{e}"
        );
        assert!(
            took >= timeout,
            "ended after {took:?}, before its timeout: {e}"
        );
        // Anything but plain http:// is refused before any connection.
        assert!(http("GET", "https://example.org/", &[], timeout).is_err());
    }
}
