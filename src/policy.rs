//! The operator's decisions about what not to report: the config file (`leakhound.toml`), the
//! inline `leakhound:allow` marker, and a baseline of accepted fingerprints.
//!
//! A config file is only ever the operator's: one inside a scanned tree is not loaded unless
//! named with `--config`, so a scanned repository cannot switch detection off.

use crate::engine::Match;
use crate::rules::glob_error;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

mod validate_config;
pub use validate_config::ValidateConfig;

/// The marker that allows every finding on its line.
pub const INLINE_ALLOW: &[&[u8]] = &[b"leakhound:allow", b"gitleaks:allow"];

/// `leakhound.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub allow: AllowConfig,
    #[serde(default)]
    pub rules: RulesConfig,
    #[serde(default)]
    pub validate: ValidateConfig,
    /// The key fingerprints are made with (`[fingerprint]`).
    #[serde(default)]
    pub fingerprint: FingerprintConfig,
    /// Commands run on findings (`[[hooks]]`).
    #[serde(default)]
    pub hooks: Vec<HookConfig>,
    /// Where the file was, for paths in it (hook commands run there).
    #[serde(skip)]
    pub dir: PathBuf,
}

/// Where the fingerprint key comes from. A team that shares baselines shares this key (best
/// through a CI secret in `LEAKHOUND_FINGERPRINT_KEY` or a file outside the repository).
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FingerprintConfig {
    /// A file holding the key (relative to the config file).
    pub key_file: Option<PathBuf>,
}

impl std::fmt::Debug for FingerprintConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FingerprintConfig")
            .field("key_file", &self.key_file)
            .finish()
    }
}

/// The environment variable that holds the fingerprint key (a CI secret, say).
pub const FINGERPRINT_KEY_VAR: &str = "LEAKHOUND_FINGERPRINT_KEY";

/// Where this run's fingerprint key came from, for a note to the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    Env,
    File(PathBuf),
    /// Made for this machine's user, kept in the state directory.
    State(PathBuf),
    /// No state directory could hold one: fingerprints differ from run to run.
    Ephemeral(String),
}

/// The fingerprint key: `LEAKHOUND_FINGERPRINT_KEY`, else the config's `key_file`, else a
/// random key made once and kept (0600) in the state directory. Returns the key and where it
/// came from.
pub fn fingerprint_key(cfg: &Config) -> Result<(Vec<u8>, KeySource), PolicyError> {
    if let Some(v) = std::env::var_os(FINGERPRINT_KEY_VAR).filter(|v| !v.is_empty()) {
        return Ok((v.as_encoded_bytes().to_vec(), KeySource::Env));
    }
    if let Some(f) = &cfg.fingerprint.key_file {
        let path = if f.is_relative() {
            cfg.dir.join(f)
        } else {
            f.clone()
        };
        let key = std::fs::read(&path).map_err(|cause| PolicyError::Read {
            path: path.display().to_string(),
            cause,
        })?;
        let key = key.trim_ascii().to_vec();
        if key.len() < 16 {
            return Err(PolicyError::Invalid {
                path: path.display().to_string(),
                message: "fingerprint key file: the key needs at least 16 bytes".into(),
            });
        }
        return Ok((key, KeySource::File(path)));
    }
    match state_dir().map(|d| state_key(&d.join("fingerprint.key"))) {
        Some(Ok((key, path))) => Ok((key, KeySource::State(path))),
        Some(Err(e)) => Ok((Vec::new(), KeySource::Ephemeral(e.to_string()))),
        None => Ok((
            Vec::new(),
            KeySource::Ephemeral("no HOME or XDG_STATE_HOME".into()),
        )),
    }
}

/// Read the key at `path`, or make it: random bytes written to a private temporary file and
/// linked into place, so two runs starting at once agree on one key.
fn state_key(path: &Path) -> std::io::Result<(Vec<u8>, PathBuf)> {
    if let Ok(k) = std::fs::read(path) {
        if k.len() >= 32 {
            return Ok((k, path.to_path_buf()));
        }
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    // From the system's randomness or not at all: a key kept for good is no guess of time.
    let mut key = [0u8; 32];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut key)?;
    let hexed = crate::model::hex(&key);
    if crate::write::create_private(path, hexed.as_bytes())? {
        Ok((hexed.into_bytes(), path.to_path_buf()))
    } else {
        // Another run made it first: use theirs.
        Ok((std::fs::read(path)?, path.to_path_buf()))
    }
}

/// `$XDG_STATE_HOME/leakhound`, else `~/.local/state/leakhound`: the operator's state
/// (fingerprint key, validation cache, hook runs).
pub fn state_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    Some(base.join("leakhound"))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllowConfig {
    /// Globs over reported paths (`tests/fixtures/**`, `**/*.lock`).
    #[serde(default)]
    pub paths: Vec<String>,
    /// Regexes over the secret.
    #[serde(default)]
    pub regexes: Vec<String>,
    /// Case-insensitive words; a secret containing one is not reported.
    #[serde(default)]
    pub stopwords: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesConfig {
    /// Rule ids or globs (`generic.*`) to turn off.
    #[serde(default)]
    pub disable: Vec<String>,
    /// Extra rule files, relative to the config file.
    #[serde(default)]
    pub files: Vec<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("{path}: cannot read: {cause}")]
    Read {
        path: String,
        // Not `source`: the message holds it already, and a chain would say it twice.
        cause: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
}

impl Config {
    /// Load and check a config file. Errors name the file and, for syntax, the line.
    pub fn load(path: &Path) -> Result<Config, PolicyError> {
        let p = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|cause| PolicyError::Read {
            path: p.clone(),
            cause,
        })?;
        Config::parse(&text, path)
    }

    /// Check the text of a config file read from `path` (the fuzz targets give it no file).
    pub fn parse(text: &str, path: &Path) -> Result<Config, PolicyError> {
        let p = path.display().to_string();
        let mut cfg: Config = toml::from_str(text).map_err(|e| PolicyError::Invalid {
            path: p.clone(),
            message: crate::rules::toml_error(text, &e),
        })?;
        // A bare file name's parent is "", which no command can be started in.
        let base = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        cfg.dir = base.to_path_buf();
        for a in &cfg.validate.canary_accounts {
            if a.len() != 12 || !a.bytes().all(|b| b.is_ascii_digit()) {
                return Err(PolicyError::Invalid {
                    path: p.clone(),
                    message: "validate.canary_accounts: a value is not a 12-digit AWS account"
                        .into(),
                });
            }
        }
        cfg.validate
            .check()
            .map_err(|message| PolicyError::Invalid {
                path: p.clone(),
                message,
            })?;
        for f in &mut cfg.rules.files {
            if f.is_relative() {
                *f = base.join(&*f);
            }
        }
        Ok(cfg)
    }
}

/// The operator's config as found: the config, the name it was loaded from (empty: none),
/// and a note for the operator when a config was passed over.
#[derive(Debug, Default)]
pub struct Found {
    pub config: Config,
    pub name: String,
    pub note: Option<String>,
}

impl Config {
    /// The operator's config: `explicit`, else `./leakhound.toml` unless it lies inside one
    /// of the `scanned` paths. A scanned tree must not be able to allow its own secrets: a
    /// config inside it is passed over, with a note.
    pub fn find(explicit: Option<&Path>, scanned: &[PathBuf]) -> Result<Found, PolicyError> {
        if let Some(p) = explicit {
            return Ok(Found {
                config: Config::load(p)?,
                name: p.display().to_string(),
                note: None,
            });
        }
        let local = Path::new("leakhound.toml");
        if !local.is_file() {
            return Ok(Found::default());
        }
        let cwd = std::env::current_dir().map_err(|cause| PolicyError::Read {
            path: "the current directory".into(),
            cause,
        })?;
        let inside = scanned.iter().any(|p| {
            p.as_os_str() != "-"
                && p.canonicalize()
                    .is_ok_and(|root| cwd.join(local).starts_with(root))
        });
        if inside {
            return Ok(Found {
                note: Some(
                    "./leakhound.toml lies inside the scanned tree and is not loaded; \
                     pass --config leakhound.toml to use it"
                        .into(),
                ),
                ..Found::default()
            });
        }
        Ok(Found {
            config: Config::load(local)?,
            name: "leakhound.toml".into(),
            note: None,
        })
    }
}

/// Compiled allow decisions.
#[derive(Debug, Default)]
pub struct Policy {
    paths: GlobSet,
    regexes: Option<regex::bytes::RegexSet>,
    stopwords: Vec<Vec<u8>>,
    baseline: Baseline,
}

impl Policy {
    pub fn new(allow: &AllowConfig, origin: &str) -> Result<Policy, PolicyError> {
        let invalid = |message: String| PolicyError::Invalid {
            path: origin.to_string(),
            message,
        };
        let mut gs = GlobSetBuilder::new();
        for g in &allow.paths {
            gs.add(
                GlobBuilder::new(g)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| invalid(format!("allow.paths: {}", glob_error(&e))))?,
            );
        }
        let paths = gs
            .build()
            .map_err(|e| invalid(format!("allow.paths: {}", glob_error(&e))))?;
        let regexes = if allow.regexes.is_empty() {
            None
        } else {
            Some(
                regex::bytes::RegexSetBuilder::new(&allow.regexes)
                    .size_limit(1 << 20)
                    .build()
                    .map_err(|e| {
                        let e = crate::rules::regex_error(&e.to_string());
                        invalid(format!("allow.regexes: {e}"))
                    })?,
            )
        };
        Ok(Policy {
            paths,
            regexes,
            stopwords: allow
                .stopwords
                .iter()
                .map(|w| w.to_ascii_lowercase().into_bytes())
                .collect(),
            baseline: Baseline::default(),
        })
    }

    /// Suppress every fingerprint in `fingerprints`.
    pub fn with_baseline(mut self, baseline: Baseline) -> Policy {
        self.baseline = baseline;
        self
    }

    /// Whether a whole path is allowed (and need not be read).
    pub fn path_allowed(&self, path: &str) -> bool {
        !self.paths.is_empty() && self.paths.is_match(path)
    }

    /// Whether a match is allowed by the inline marker, a regex or a stopword.
    pub fn match_allowed(&self, hay: &[u8], m: &Match) -> bool {
        let secret = &hay[m.span()];
        let lines = &hay[crate::engine::line_around(hay, m.match_start, m.end)];
        INLINE_ALLOW
            .iter()
            .any(|w| memchr::memmem::find(lines, w).is_some())
            || self.regexes.as_ref().is_some_and(|r| r.is_match(secret))
            || (!self.stopwords.is_empty() && crate::engine::has_stopword(secret, &self.stopwords))
    }

    /// Whether there is a baseline at all: without one, [`Policy::in_baseline`] is false
    /// whatever the finding.
    pub fn has_baseline(&self) -> bool {
        !self.baseline.is_empty()
    }

    /// Whether the baseline accepts finding `f`.
    pub fn in_baseline(&self, f: &crate::model::Finding) -> bool {
        self.baseline
            .accepts(&f.rule_id, &f.fingerprint, f.secret.bytes())
    }
}

/// What a baseline accepts: fingerprints (from an earlier report, tied to the fingerprint key
/// it was made with), and salted secret hashes by rule (from `--write-baseline`, portable).
#[derive(Debug, Default)]
pub struct Baseline {
    fingerprints: HashSet<String>,
    hashed: Option<Hashed>,
}

#[derive(Debug)]
struct Hashed {
    salt: Vec<u8>,
    kdf: crate::model::BaselineKdf,
    by_rule: HashMap<String, HashSet<String>>,
    /// Each secret is hashed once per run, however often it is found (by fingerprint).
    seen: std::sync::Mutex<HashMap<String, bool>>,
}

impl Baseline {
    /// Whether the baseline accepts a finding of `rule_id` with `fingerprint` and `secret`.
    /// Only a finding of a rule the baseline names pays for a hash.
    pub fn accepts(&self, rule_id: &str, fingerprint: &str, secret: &[u8]) -> bool {
        if self.fingerprints.contains(fingerprint) {
            return true;
        }
        let Some(h) = &self.hashed else {
            return false;
        };
        let Some(hashes) = h.by_rule.get(rule_id) else {
            return false;
        };
        let mut seen = crate::sync::lock(&h.seen);
        if let Some(&known) = seen.get(fingerprint) {
            return known;
        }
        let hit = h
            .kdf
            .hash(&h.salt, rule_id, secret)
            .is_some_and(|x| hashes.contains(&x));
        seen.insert(fingerprint.to_string(), hit);
        hit
    }

    pub fn is_empty(&self) -> bool {
        self.fingerprints.is_empty() && self.hashed.is_none()
    }
}

/// A baseline: one written by `--write-baseline` (salted secret hashes, portable), or an
/// earlier report used as one (a JSON report, a JSON array of findings, or JSON Lines), whose
/// fingerprints hold under the key that made them.
pub fn read_baseline(path: &Path, key_id: &str) -> Result<Baseline, PolicyError> {
    let p = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|cause| PolicyError::Read {
        path: p.clone(),
        cause,
    })?;
    let invalid = |message: String| PolicyError::Invalid {
        path: p.clone(),
        message,
    };
    let mut hashed = None;
    let docs: Vec<serde_json::Value> = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(mut o)) => {
            if let Some(b) = o.get("baseline") {
                hashed = Some(hashed_header(b).map_err(invalid)?);
            } else {
                check_key_id(o.get("fingerprint_key_id"), key_id).map_err(invalid)?;
            }
            match o.remove("findings") {
                Some(serde_json::Value::Array(a)) => a,
                _ => return Err(invalid("a JSON report needs a \"findings\" array".into())),
            }
        }
        Ok(serde_json::Value::Array(a)) => a,
        Ok(_) => return Err(invalid("not a leakhound report".into())),
        Err(_) => text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                // serde_json's messages name a position, never the input.
                serde_json::from_str(l).map_err(|e| invalid(format!("line {}: {e}", i + 1)))
            })
            .collect::<Result<_, _>>()?,
    };
    let mut out = Baseline::default();
    for (i, d) in docs.into_iter().enumerate() {
        // A written baseline holds entries (a hash, no fingerprint); a report, findings.
        match &mut hashed {
            Some(h) => {
                let e: crate::model::BaselineEntry = serde_json::from_value(d)
                    .map_err(|e| invalid(format!("entry {}: {}", i + 1, entry_error(&e))))?;
                h.by_rule.entry(e.rule).or_default().insert(e.argon2);
            }
            None => {
                let f = crate::model::Record::from_value(d)
                    .map_err(|e| invalid(format!("finding {}: {e}", i + 1)))?;
                out.fingerprints.insert(f.fingerprint);
            }
        }
    }
    out.hashed = hashed;
    Ok(out)
}

/// Why a baseline entry is not one: serde's message without a value it may quote.
fn entry_error(e: &serde_json::Error) -> String {
    let m = e.to_string();
    if m.starts_with("missing field") {
        m
    } else {
        "needs \"rule\" and \"argon2\" as text".into()
    }
}

/// The `baseline` header of a written baseline: its salt and hash parameters.
fn hashed_header(b: &serde_json::Value) -> Result<Hashed, String> {
    let num = |k: &str| {
        b.get(k)
            .and_then(|v| v.as_u64())
            .and_then(|v| u32::try_from(v).ok())
    };
    if b.get("kdf").and_then(|v| v.as_str()) != Some("argon2id") || num("p") != Some(1) {
        return Err("baseline: only kdf \"argon2id\" with p = 1 is read".into());
    }
    let kdf = crate::model::BaselineKdf {
        m_kib: num("m_kib").ok_or("baseline: no m_kib")?,
        t: num("t").ok_or("baseline: no t")?,
    };
    if !kdf.acceptable() {
        return Err("baseline: its hash parameters are out of range".into());
    }
    let salt = b
        .get("salt")
        .and_then(|v| v.as_str())
        .and_then(unhex)
        .filter(|s| s.len() >= 8)
        .ok_or("baseline: no salt (hex, 8 bytes or more)")?;
    Ok(Hashed {
        salt,
        kdf,
        by_rule: HashMap::new(),
        seen: Default::default(),
    })
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A baseline names the key its fingerprints were made with; under another key none of them
/// would match, and every accepted finding would come back without a word of why.
fn check_key_id(id: Option<&serde_json::Value>, ours: &str) -> Result<(), String> {
    let Some(id) = id.and_then(|v| v.as_str()) else {
        return Ok(());
    };
    if id == ours {
        return Ok(());
    }
    Err(format!(
        "its fingerprints were made with another fingerprint key (id {id}; this run's is \
         {ours}): run with the key that wrote it ({FINGERPRINT_KEY_VAR} or [fingerprint] key_file \
         in the config), or write the baseline again"
    ))
}

/// `[[hooks]]` as written in the config.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookConfig {
    pub name: String,
    /// `live`, `any`, or a list of statuses.
    #[serde(default = "default_when")]
    pub when: When,
    /// Rule-id globs; all rules when empty.
    #[serde(default)]
    pub rules: Vec<String>,
    pub command: Option<Vec<String>>,
    /// A built-in action (`aws-deactivate-key`, `aws-delete-key`).
    pub action: Option<String>,
    #[serde(default)]
    pub with_secret: bool,
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// `30s`, `500ms`, `2m`.
    #[serde(default = "default_timeout")]
    pub timeout: String,
}

fn default_when() -> When {
    When::One("live".into())
}

fn default_timeout() -> String {
    "30s".into()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum When {
    One(String),
    Many(Vec<String>),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An inline marker allows the findings of its line, looked for as far as 4 KiB from
    /// each: on a long line of findings, one farther away does not allow.
    #[test]
    fn an_inline_marker_is_looked_for_near_the_finding() {
        let policy = Policy::new(&AllowConfig::default(), "test").unwrap();
        let allowed = |text: &str| {
            let start = text.find("q8Vz").unwrap();
            policy.match_allowed(text.as_bytes(), &Match::at(start, 16, 6))
        };
        assert!(allowed("token=q8Vz3LmT0pWx9RkJ # leakhound:allow"));
        assert!(!allowed("# gitleaks:allow\ntoken=q8Vz3LmT0pWx9RkJ\n"));
        let pad = "x ".repeat(1000);
        assert!(allowed(&format!(
            "# leakhound:allow {pad}token=q8Vz3LmT0pWx9RkJ"
        )));
        let far = "x ".repeat(3000);
        assert!(!allowed(&format!(
            "# leakhound:allow {far}token=q8Vz3LmT0pWx9RkJ"
        )));
        assert!(allowed(&format!(
            "token=q8Vz3LmT0pWx9RkJ {pad} # leakhound:allow"
        )));
    }

    #[test]
    fn toml_errors_never_quote_the_input() {
        let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        for text in [
            format!("GITHUB_TOKEN={token}\n"),
            format!("allow = \"{token}\"\n"),
            format!("[allow]\npaths = \"{token}\"\n"),
            format!("{token} = 1\n"),
            format!("\"{token}\" = 1\n"),
        ] {
            let e = toml::from_str::<Config>(&text).unwrap_err();
            let m = crate::rules::toml_error(&text, &e);
            assert!(!m.contains("ghp_abcdef"), "{m}");
            assert!(m.starts_with("line 1") || m.starts_with("line 2"), "{m}");
        }
    }
}
