//! Is a found credential live? Each validator (one per provider, [`aws`] first) is named by
//! the rules whose matches it checks (`validator = { name = "aws", part = "secret" }` in the
//! rule's TOML). A validator pairs the parts found into credential sets and reads what it can
//! offline ([`annotate`], always); with validation on, [`validate`] checks each distinct
//! credential once, through the cache. Adding a provider is one module that implements
//! [`Validator`], listed in [`VALIDATORS`], plus the rules that name it.
//!
//! Never is a 429, a 5xx, a timeout or a network error called `invalid`: those are `unknown`
//! with the reason. Results are cached in memory and on disk, keyed by a keyed hash of the
//! credential.

pub mod aws;
pub mod bedrock;

use crate::model::{keyed_hash, unix_now, Finding, Reach, Secret, Validation};
use crate::rules::Rule;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

pub use crate::model::{now_rfc3339, Status};
pub use crate::policy::state_dir;

/// One provider's credentials: how their parts pair, what they carry offline, how to check
/// them. Implementations hold no state; a run's settings come in [`Options`].
pub trait Validator: Sync {
    /// The name rules use for it.
    fn name(&self) -> &'static str;
    /// The parts a rule may say its matches are (`key-id`, `secret`, ...).
    fn parts(&self) -> &'static [&'static str];
    /// Offline, on every scan: set `credential_set` on the parts (`members`, indexes into
    /// `findings`) that form one credential, and add what the parts carry (an account).
    fn annotate(&self, findings: &mut [Finding], members: &[usize]);
    /// The credential that the members of one credential set form, if it is complete.
    fn credential(&self, findings: &[Finding], members: &[usize]) -> Option<Credential>;
    /// A verdict reached without asking anyone (a canary account, a missing part).
    fn precheck(&self, c: &Credential, opts: &Options) -> Option<Validation>;
    /// Ask the provider about each credential, in order, within `opts`' deadline.
    fn check(&self, creds: &[&Credential], opts: &Options) -> Vec<Validation>;
    /// The verdict for a part that is in no complete credential.
    fn unpaired(&self, f: &Finding) -> Validation;
    /// What each live credential (with the identity its check named) can do, asked with the
    /// credential's own read-only calls, in order. Providers without a way to tell say so.
    fn reach(&self, creds: &[(&Credential, &str)], _opts: &Options) -> Vec<Reached> {
        creds
            .iter()
            .map(|(_, identity)| Reached {
                reach: Reach::unknown(
                    identity,
                    format!("reach is not mapped for {} credentials", self.name()),
                ),
                calls: Vec::new(),
            })
            .collect()
    }
}

/// One credential's reach, and every request made to find it (for the audit log).
#[derive(Debug, Clone)]
pub struct Reached {
    pub reach: Reach,
    pub calls: Vec<Call>,
}

/// One read-only request made for `--reach`.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// `iam:ListAttachedUserPolicies`.
    pub action: &'static str,
    /// What it was asked about (a user, group or role name, a policy ARN); never a secret.
    pub target: String,
    /// `ok`, or the error code or reason.
    pub outcome: String,
}

/// Every validator, by name.
pub static VALIDATORS: &[&dyn Validator] = &[&aws::Aws, &bedrock::Bedrock];

/// The validator called `name`.
pub fn validator(name: &str) -> Option<&'static dyn Validator> {
    VALIDATORS.iter().copied().find(|v| v.name() == name)
}

/// Rules that name a validator or a part that does not exist, as messages: a typo there
/// would silently keep a credential from ever being paired or checked.
pub fn check_rules(rules: &[Rule]) -> Vec<String> {
    let mut out = Vec::new();
    for r in rules {
        let Some(v) = &r.validator else { continue };
        match validator(&v.name) {
            None => out.push(format!(
                "{}: rule {:?}: validator: no validator {:?} (known: {})",
                r.origin,
                r.id,
                v.name,
                VALIDATORS
                    .iter()
                    .map(|v| v.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Some(val) if !val.parts().contains(&v.part.as_str()) => out.push(format!(
                "{}: rule {:?}: validator: {} has no part {:?} (parts: {})",
                r.origin,
                r.id,
                v.name,
                v.part,
                val.parts().join(", ")
            )),
            Some(_) => {}
        }
    }
    out
}

/// A complete credential, ready to check: its parts by name, and the findings it was found
/// as. `Debug` shows no part.
pub struct Credential {
    pub validator: &'static str,
    /// What names the credential without revealing it (an AWS key id): for the audit log
    /// and for actions.
    pub id: String,
    /// A keyed hash of the parts: the cache key, and what makes the same credential found in
    /// many places one.
    pub hash: String,
    parts: Vec<(&'static str, Secret)>,
    /// Indexes of the findings that are its parts, wherever they were found.
    pub members: Vec<usize>,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Credential({} {}, <parts redacted>)",
            self.validator, self.id
        )
    }
}

impl Credential {
    pub fn new(validator: &'static str, id: String, parts: Vec<(&'static str, Secret)>) -> Self {
        let mut bytes: Vec<&[u8]> = vec![validator.as_bytes()];
        let revealed: Vec<String> = parts.iter().map(|(_, s)| s.reveal()).collect();
        for ((name, _), value) in parts.iter().zip(&revealed) {
            bytes.extend([&[0u8][..], name.as_bytes(), &[0], value.as_bytes()]);
        }
        let hash = crate::model::hex(&keyed_hash(&bytes));
        Credential {
            validator,
            id,
            hash,
            parts,
            members: Vec::new(),
        }
    }

    /// The part called `name`.
    pub fn part(&self, name: &str) -> Option<&Secret> {
        self.parts.iter().find(|(n, _)| *n == name).map(|(_, s)| s)
    }

    fn validator(&self) -> &'static dyn Validator {
        validator(self.validator).expect("built by a listed validator")
    }
}

/// Offline, on every scan: each validator pairs its parts into credential sets and reads
/// what it can from them.
pub fn annotate(findings: &mut [Finding]) {
    for v in VALIDATORS {
        let members: Vec<usize> = (0..findings.len())
            .filter(|&i| findings[i].is_part_of(v.name()))
            .collect();
        if !members.is_empty() {
            v.annotate(findings, &members);
        }
    }
    // Outcomes are merged (runtime-audit's environments, files and endpoints), and each
    // merge annotates again: a fact once, however often it was learnt.
    for f in findings.iter_mut() {
        let mut seen = std::collections::HashSet::new();
        f.annotations
            .retain(|a| seen.insert((a.key, a.value.clone())));
    }
}

/// The complete credentials among `findings`, each once however many places hold it, with
/// the findings that belong to it. In a stable order (by hash).
pub fn credentials(findings: &[Finding]) -> Vec<Credential> {
    let mut sets: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (i, f) in findings.iter().enumerate() {
        if let (Some(s), Some(p)) = (&f.credential_set, &f.part) {
            sets.entry((p.validator.as_str(), s.as_str()))
                .or_default()
                .push(i);
        }
    }
    let mut distinct: HashMap<String, Credential> = HashMap::new();
    for ((name, _), members) in sets {
        let Some(c) = validator(name).and_then(|v| v.credential(findings, &members)) else {
            continue;
        };
        distinct
            .entry(c.hash.clone())
            .or_insert(c)
            .members
            .extend(members);
    }
    let mut out: Vec<Credential> = distinct.into_values().collect();
    out.sort_by(|a, b| a.hash.cmp(&b.hash));
    out
}

/// Check one credential now, without the cache (after an action changed it).
pub fn check_now(c: &Credential, opts: &Options) -> Validation {
    c.validator()
        .check(&[c], opts)
        .pop()
        .unwrap_or_else(|| Validation::skipped("not checked", None))
}

/// Record a credential's new state (after an action changed it) so later runs do not trust an
/// old answer from the cache.
pub fn remember(c: &Credential, v: &Validation, opts: &Options) {
    if !v.status.definitive() {
        return;
    }
    let mut cache = Cache::load(opts);
    cache.put(&c.hash, v);
    cache.save();
}

/// A record of each check, for the audit log.
#[derive(Debug, Clone)]
pub struct Checked {
    pub key_id: String,
    pub fingerprint: String,
    pub rule: String,
    pub validation: Validation,
    /// Answered from the cache, no request sent.
    pub cached: bool,
}

/// Check every credential among `findings` and attach the outcome to each member. Parts that
/// are in no complete credential are `skipped` ("no pair"). Returns one record per distinct
/// credential.
pub fn validate(findings: &mut [Finding], opts: &Options) -> Vec<Checked> {
    let creds = credentials(findings);
    let mut cache = Cache::load(opts);
    let mut verdicts: Vec<Option<(Validation, bool)>> = Vec::with_capacity(creds.len());
    for c in &creds {
        let v = c
            .validator()
            .precheck(c, opts)
            .or_else(|| cache.get(&c.hash));
        verdicts.push(v.map(|v| {
            let cached = v.status.definitive();
            (v, cached)
        }));
    }
    // The rest, asked for together per validator (each runs its own requests in parallel).
    for v in VALIDATORS {
        let ask: Vec<usize> = (0..creds.len())
            .filter(|&i| verdicts[i].is_none() && creds[i].validator == v.name())
            .collect();
        if ask.is_empty() {
            continue;
        }
        let batch: Vec<&Credential> = ask.iter().map(|&i| &creds[i]).collect();
        for (&i, answer) in ask.iter().zip(v.check(&batch, opts)) {
            if answer.status.definitive() {
                cache.put(&creds[i].hash, &answer);
            }
            verdicts[i] = Some((answer, false));
        }
    }
    cache.save();
    let mut records = Vec::new();
    for (c, verdict) in creds.iter().zip(verdicts) {
        let (v, cached) =
            verdict.unwrap_or_else(|| (Validation::skipped("not checked", None), false));
        for &i in &c.members {
            findings[i].validation = Some(v.clone());
        }
        // The record names the credential by its public part's finding when there is one.
        let first = c
            .members
            .iter()
            .copied()
            .find(|&i| findings[i].public)
            .unwrap_or(c.members[0]);
        records.push(Checked {
            key_id: c.id.clone(),
            fingerprint: findings[first].fingerprint.clone(),
            rule: findings[first].rule_id.clone(),
            validation: v,
            cached,
        });
    }
    // Parts with no complete credential: nothing to check them with.
    for f in findings.iter_mut() {
        if f.validation.is_some() {
            continue;
        }
        if let Some(v) = f.part.as_ref().and_then(|p| validator(&p.validator)) {
            f.validation = Some(v.unpaired(f));
        }
    }
    records
}

/// A record of each credential whose reach was read, for the audit log.
#[derive(Debug, Clone)]
pub struct ReachChecked {
    pub key_id: String,
    pub fingerprint: String,
    pub rule: String,
    pub reached: Reached,
}

/// `--reach`: for every credential that validation found live (with the identity it named),
/// read what it can do with its own read-only calls and attach the [`Reach`] to each member.
/// Run after [`validate`]; credentials not live are left without one. Not cached: policies
/// change, and the question is asked on purpose.
pub fn reach(findings: &mut [Finding], opts: &Options) -> Vec<ReachChecked> {
    let creds = credentials(findings);
    let live: Vec<(usize, String)> = creds
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let v = findings[c.members[0]].validation.as_ref()?;
            (v.status == Status::Live)
                .then(|| v.arn.clone())
                .flatten()
                .map(|arn| (i, arn))
        })
        .collect();
    let mut records = Vec::new();
    for v in VALIDATORS {
        let mine: Vec<&(usize, String)> = live
            .iter()
            .filter(|(i, _)| creds[*i].validator == v.name())
            .collect();
        if mine.is_empty() {
            continue;
        }
        let batch: Vec<(&Credential, &str)> = mine
            .iter()
            .map(|(i, arn)| (&creds[*i], arn.as_str()))
            .collect();
        for (&&(i, _), reached) in mine.iter().zip(v.reach(&batch, opts)) {
            let c = &creds[i];
            for &m in &c.members {
                findings[m].reach = Some(reached.reach.clone());
            }
            let first = c
                .members
                .iter()
                .copied()
                .find(|&m| findings[m].public)
                .unwrap_or(c.members[0]);
            records.push(ReachChecked {
                key_id: c.id.clone(),
                fingerprint: findings[first].fingerprint.clone(),
                rule: findings[first].rule_id.clone(),
                reached,
            });
        }
    }
    records
}

/// Settings for a validation run.
#[derive(Debug, Clone)]
pub struct Options {
    /// An STS endpoint from the operator (`AWS_ENDPOINT_URL_STS`, `AWS_ENDPOINT_URL`); never
    /// from anything scanned.
    pub endpoint: Option<String>,
    /// The IAM endpoint for `--reach`, the same way (`AWS_ENDPOINT_URL_IAM`,
    /// `AWS_ENDPOINT_URL`).
    pub iam_endpoint: Option<String>,
    pub region: String,
    pub canaries: HashSet<String>,
    pub concurrency: usize,
    /// For the whole run; sets not answered by then are `unknown`.
    pub deadline: Duration,
    /// Per request.
    pub timeout: Duration,
    pub retries: u32,
    /// Where results are kept between runs (`None`: memory only).
    pub cache_dir: Option<PathBuf>,
    pub cache_ttl: Duration,
}

impl Options {
    /// From the operator's environment: endpoint and region variables, the state directory.
    pub fn from_env() -> Options {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Options {
            endpoint: var("AWS_ENDPOINT_URL_STS").or_else(|| var("AWS_ENDPOINT_URL")),
            iam_endpoint: var("AWS_ENDPOINT_URL_IAM").or_else(|| var("AWS_ENDPOINT_URL")),
            region: var("AWS_REGION")
                .or_else(|| var("AWS_DEFAULT_REGION"))
                .unwrap_or_else(|| "us-east-1".into()),
            canaries: aws::DEFAULT_CANARY_ACCOUNTS
                .iter()
                .map(|s| s.to_string())
                .collect(),
            concurrency: 8,
            deadline: Duration::from_secs(120),
            timeout: Duration::from_secs(10),
            retries: 3,
            cache_dir: state_dir(),
            cache_ttl: Duration::from_secs(3600),
        }
    }
}

/// Results by set hash, in memory and in `validation-cache.json` under the state directory.
struct Cache {
    path: Option<PathBuf>,
    ttl: Duration,
    entries: HashMap<String, (u64, Validation)>,
    dirty: bool,
}

impl Cache {
    fn load(opts: &Options) -> Cache {
        let path = opts
            .cache_dir
            .as_ref()
            .map(|d| d.join("validation-cache.json"));
        let entries = path
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Cache {
            path,
            ttl: opts.cache_ttl,
            entries,
            dirty: false,
        }
    }

    fn get(&self, hash: &str) -> Option<Validation> {
        let (at, v) = self.entries.get(hash)?;
        (unix_now().saturating_sub(*at) < self.ttl.as_secs()).then(|| v.clone())
    }

    fn put(&mut self, hash: &str, v: &Validation) {
        self.entries
            .insert(hash.to_string(), (unix_now(), v.clone()));
        self.dirty = true;
    }

    /// Best effort: a cache that cannot be written costs only repeated requests.
    fn save(&mut self) {
        let Some(path) = &self.path else { return };
        if !self.dirty {
            return;
        }
        let now = unix_now();
        let ttl = self.ttl.as_secs();
        self.entries
            .retain(|_, (at, _)| now.saturating_sub(*at) < ttl);
        let Ok(body) = serde_json::to_vec(&self.entries) else {
            return;
        };
        let _ = write_private(path, &body);
    }
}

/// Write `body` to `path` (created 0700 directory, 0600 file), atomically by rename.
pub fn write_private(path: &std::path::Path, body: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&tmp)?;
    f.write_all(body)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}
