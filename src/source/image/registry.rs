//! Registries: the OCI distribution API with anonymous, basic or bearer-token auth, and
//! credentials from the flags or ~/.docker/config.json.

use super::*;
use std::sync::Mutex;

const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";

struct Registry {
    agent: ureq::Agent,
    base: String,
    repo: String,
    host: String,
    creds: Option<(String, String)>,
    token: Mutex<Option<String>>,
}

pub(super) fn from_registry(reference: &str, opts: &RegistryOptions) -> Result<Image, ImageError> {
    let (host, repo, tag) = parse_registry_ref(reference)?;
    let creds = match &opts.creds {
        Some(c) => Some(
            c.split_once(':')
                .map(|(u, p)| (u.to_string(), p.to_string()))
                .ok_or_else(|| {
                    ImageError::Reference(reference.into(), "--creds is USER:PASS".into())
                })?,
        ),
        None => docker_config_creds(&host),
    };
    let scheme = if opts.plain_http { "http" } else { "https" };
    let reg = Arc::new(Registry {
        agent: ureq::AgentBuilder::new()
            .timeout_connect(std::time::Duration::from_secs(15))
            .timeout_read(std::time::Duration::from_secs(60))
            .redirects(5)
            .build(),
        base: format!("{scheme}://{host}/v2/{repo}"),
        repo,
        host,
        creds,
        token: Mutex::new(None),
    });
    let accept = [OCI_INDEX, OCI_MANIFEST, DOCKER_LIST, DOCKER_MANIFEST].join(", ");
    let mut warnings = Vec::new();
    let (mut doc, mt) = reg.manifest(&tag, &accept)?;
    let mut digest = sha256_digest(&doc);
    if tag.starts_with("sha256:") {
        verify(&doc, &tag, "manifest", &mut warnings);
    }
    let mut m = json(&doc, "manifest")?;
    if is_index(&m, Some(&mt).filter(|t| !t.is_empty()).map(|t| t.as_str())) {
        digest = pick_platform(&m, &opts.platform)?;
        doc = reg.manifest(&digest, &accept)?.0;
        verify(&doc, &digest, "manifest", &mut warnings);
        m = json(&doc, "manifest")?;
    }
    with_config(reference, digest, &m, reg, warnings)
}

/// `~/.docker/config.json` (or `$DOCKER_CONFIG/config.json`): `auths.HOST.auth` is
/// base64 of `USER:PASS`.
fn docker_config_creds(host: &str) -> Option<(String, String)> {
    let dir = std::env::var_os("DOCKER_CONFIG")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker")))?;
    let v: Value = serde_json::from_slice(&std::fs::read(dir.join("config.json")).ok()?).ok()?;
    let auths = v["auths"].as_object()?;
    let keys = [
        host.to_string(),
        format!("https://{host}"),
        format!("http://{host}"),
        if host == "registry-1.docker.io" {
            "https://index.docker.io/v1/".to_string()
        } else {
            String::new()
        },
    ];
    let entry = keys.iter().find_map(|k| auths.get(k))?;
    use base64::Engine;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(entry["auth"].as_str()?)
        .ok()?;
    let s = String::from_utf8(raw).ok()?;
    let (u, p) = s.split_once(':')?;
    Some((u.to_string(), p.to_string()))
}

/// `Bearer realm="...",service="...",scope="..."` or `Basic realm="..."`.
fn parse_challenge(h: &str) -> (String, HashMap<String, String>) {
    let (scheme, rest) = h.trim().split_once(' ').unwrap_or((h.trim(), ""));
    let mut params = HashMap::new();
    let mut rest = rest.trim();
    while !rest.is_empty() {
        let Some((k, after)) = rest.split_once('=') else {
            break;
        };
        let (v, next) = if let Some(q) = after.strip_prefix('"') {
            let end = q.find('"').unwrap_or(q.len());
            (&q[..end], q.get(end + 1..).unwrap_or(""))
        } else {
            let end = after.find(',').unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        params.insert(k.trim().to_ascii_lowercase(), v.to_string());
        rest = next.trim_start_matches([',', ' ']);
    }
    (scheme.to_ascii_lowercase(), params)
}

impl Registry {
    fn basic(&self) -> Option<String> {
        use base64::Engine;
        self.creds.as_ref().map(|(u, p)| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
            )
        })
    }

    /// GET `url`; on a 401, authenticate as the registry asks and try once more.
    fn get(&self, url: &str, accept: Option<&str>) -> Result<ureq::Response, ImageError> {
        let send = |auth: Option<String>| {
            let mut r = self.agent.get(url);
            if let Some(a) = accept {
                r = r.set("Accept", a);
            }
            if let Some(a) = auth {
                r = r.set("Authorization", &a);
            }
            r.call().map_err(Box::new)
        };
        let token = crate::sync::lock(&self.token).clone();
        let first = send(
            token
                .map(|t| format!("Bearer {t}"))
                .or_else(|| self.basic()),
        );
        let resp = match first {
            Err(e) => match *e {
                ureq::Error::Status(401, r) => {
                    let challenge = r.header("www-authenticate").unwrap_or("").to_string();
                    send(Some(self.authenticate(&challenge)?))
                }
                other => Err(Box::new(other)),
            },
            ok => ok,
        };
        resp.map_err(|e| self.error(url, *e))
    }

    fn authenticate(&self, challenge: &str) -> Result<String, ImageError> {
        let (scheme, params) = parse_challenge(challenge);
        match scheme.as_str() {
            "basic" => self.basic().ok_or_else(|| {
                ImageError::Registry(format!(
                    "{}: authentication required (401); pass --creds USER:PASS or log in with docker",
                    self.host
                ))
            }),
            "bearer" => {
                let realm = params.get("realm").ok_or_else(|| {
                    ImageError::Registry(format!("{}: bearer challenge without a realm", self.host))
                })?;
                let scope = params
                    .get("scope")
                    .cloned()
                    .unwrap_or_else(|| format!("repository:{}:pull", self.repo));
                let mut req = self.agent.get(realm).query("scope", &scope);
                if let Some(s) = params.get("service") {
                    req = req.query("service", s);
                }
                if let Some(b) = self.basic() {
                    req = req.set("Authorization", &b);
                }
                let resp = req.call().map_err(|e| self.error(realm, e))?;
                let body = read_all(resp.into_reader(), "token response", 1 << 20)?;
                let v = json(&body, "token response")?;
                let token = v["token"]
                    .as_str()
                    .or(v["access_token"].as_str())
                    .ok_or_else(|| ImageError::Registry("token response without a token".into()))?
                    .to_string();
                *crate::sync::lock(&self.token) = Some(token.clone());
                Ok(format!("Bearer {token}"))
            }
            _ => Err(ImageError::Registry(format!(
                "{}: authentication required (401) by an unsupported scheme {scheme:?}",
                self.host
            ))),
        }
    }

    /// A clear error; never the credentials.
    fn error(&self, url: &str, e: ureq::Error) -> ImageError {
        let url = url.split('?').next().unwrap_or(url);
        match e {
            ureq::Error::Status(code, r) => {
                let what = match code {
                    401 | 403 => "not authorised (check --creds)",
                    404 => "not found",
                    429 => "rate limited",
                    500..=599 => "server error",
                    _ => "refused",
                };
                let text = r.status_text().to_string();
                ImageError::Registry(format!("{url}: {code} {text}: {what}"))
            }
            // ureq's message names the URL already.
            ureq::Error::Transport(t) => ImageError::Registry(t.to_string()),
        }
    }

    fn manifest(&self, reference: &str, accept: &str) -> Result<(Vec<u8>, String), ImageError> {
        let url = format!("{}/manifests/{reference}", self.base);
        let r = self.get(&url, Some(accept))?;
        let mt = r
            .header("content-type")
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        Ok((read_all(r.into_reader(), "manifest", MAX_DOC)?, mt))
    }
}

impl Opener for Registry {
    fn open(&self, digest: &str) -> Result<Box<dyn Read + Send>, ImageError> {
        check_digest(digest)?;
        let url = format!("{}/blobs/{digest}", self.base);
        Ok(self.get(&url, None)?.into_reader())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_references() {
        let p = |s| parse_registry_ref(s).unwrap();
        assert_eq!(
            p("alpine"),
            (
                "registry-1.docker.io".into(),
                "library/alpine".into(),
                "latest".into()
            )
        );
        assert_eq!(
            p("127.0.0.1:5000/team/app:v1"),
            ("127.0.0.1:5000".into(), "team/app".into(), "v1".into())
        );
        let d = format!("sha256:{}", "a".repeat(64));
        assert_eq!(p(&format!("ghcr.io/o/r@{d}")).2, d);
        assert!(parse_registry_ref("Bad/Name").is_err());
        assert!(parse_registry_ref("x@sha256:zz").is_err());
    }

    #[test]
    fn challenges() {
        let (s, p) = parse_challenge(
            r#"Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull""#,
        );
        assert_eq!(s, "bearer");
        assert_eq!(p["realm"], "https://auth.example/token");
        assert_eq!(p["scope"], "repository:a/b:pull");
        assert_eq!(parse_challenge(r#"Basic realm="x""#).0, "basic");
    }
}
