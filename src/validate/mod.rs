//! Is a found credential live? Each validator (one per provider, [`aws`] first) is named by
//! the rules whose matches it checks (`validator = { name = "aws", part = "secret" }` in the
//! rule's TOML). A validator pairs the parts found into credential sets and reads what it can
//! offline ([`annotate`], always); with validation on, [`validate`] checks each distinct
//! credential once, through the cache. Most providers are declarative ([`http`]: a
//! `[[validators]]` table in a rule file, no Rust); a check that needs code (SigV4) is one
//! module that implements [`Validator`], listed in [`VALIDATORS`], plus the rules that name it.
//!
//! Never is a 429, a 5xx, a timeout or a network error called `invalid`: those are `unknown`
//! with the reason. Results are cached in memory and on disk, keyed by a keyed hash of the
//! credential.

mod action;
pub mod aws;
pub mod bedrock;
mod cache;
pub mod http;
pub mod postgres;

use cache::Cache;

use crate::model::{Finding, FingerprintKey, Reach, Secret, Validation};
use crate::rules::Rule;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::time::Duration;

pub use crate::model::{now_rfc3339, Status};
pub use crate::policy::state_dir;
pub use action::{action, actions, operator_credential_vars, Action};

/// One provider's credentials: how their parts pair, what they carry offline, how to check
/// them. Implementations hold no state; a run's settings come in [`Options`].
pub trait Validator: Sync {
    /// The name rules use for it.
    fn name(&self) -> &'static str;
    /// `code` (a module of its own) or `http` (a declarative spec in a rule file).
    fn kind(&self) -> &'static str {
        "code"
    }
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
    /// Whether a live credential of this kind can revoke itself (`--rotate`).
    fn can_revoke(&self) -> bool {
        false
    }
    /// Revoke `c` with the provider's own request, sent once: what was done, or why not.
    fn revoke(&self, _c: &Credential, _opts: &Options) -> Result<String, String> {
        Err(format!(
            "{} credentials cannot revoke themselves",
            self.name()
        ))
    }
    /// A reach read from the validation's own answer (scopes, a mode), with no request of
    /// its own; `None`: ask [`Validator::reach`].
    fn reach_from(&self, _v: &Validation) -> Option<Reach> {
        None
    }
    /// What a check requests (`GET https://api.github.com/user`, never a secret), and whether
    /// the operator's config overrode where it goes; for the audit log and the report.
    fn endpoint(&self, _opts: &Options) -> Option<(String, bool)> {
        None
    }
    /// The built-in responses this provider offers for its live credentials (a hook's
    /// `action`); none by default.
    fn actions(&self) -> &'static [&'static dyn Action] {
        &[]
    }
    /// The environment variables holding the operator's own credentials for this provider,
    /// which command hooks do not inherit unless they ask (`pass_env`).
    fn operator_credential_vars(&self) -> &'static [&'static str] {
        &[]
    }
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
pub static VALIDATORS: &[&dyn Validator] = &[&aws::Aws, &bedrock::Bedrock, &postgres::Postgres];

/// The validator called `name`: a code one, else a declarative one.
pub fn validator(name: &str) -> Option<&'static dyn Validator> {
    VALIDATORS
        .iter()
        .copied()
        .find(|v| v.name() == name)
        .or_else(|| http::find(name).map(|v| v as &'static dyn Validator))
}

/// Every validator: the code ones, then the declarative ones by name.
pub fn all() -> Vec<&'static dyn Validator> {
    let mut v: Vec<&'static dyn Validator> = VALIDATORS.to_vec();
    v.extend(http::all().into_iter().map(|h| h as &'static dyn Validator));
    v
}

/// Rules that name a validator or a part that does not exist, as messages: a typo there
/// would silently keep a credential from ever being paired or checked.
pub fn check_rules(rules: &[Rule]) -> Vec<String> {
    let mut out = http::problems();
    // A validator that names a rule another validator already checks would check nothing.
    for h in http::all() {
        for id in h.spec.rules.iter().chain(h.spec.with.values()) {
            let taken = rules
                .iter()
                .find(|r| &r.id == id)
                .and_then(|r| r.validator.as_ref());
            if let Some(other) = taken.filter(|v| v.name != h.spec.name) {
                out.push(format!(
                    "{}: validator {:?}: rule {id:?} is checked by {:?} already",
                    h.spec.origin, h.spec.name, other.name
                ));
            }
        }
    }
    for r in rules {
        let Some(v) = &r.validator else { continue };
        match validator(&v.name) {
            None => out.push(format!(
                "{}: rule {:?}: validator: no validator {:?} (known: {})",
                r.origin,
                r.id,
                v.name,
                all()
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
        Credential {
            validator,
            id,
            parts,
            members: Vec::new(),
        }
    }

    /// A keyed hash of the parts under the run's key: the cache key, and what makes the same
    /// credential found in many places one.
    pub fn hash(&self, key: &FingerprintKey) -> String {
        let mut bytes: Vec<&[u8]> = vec![self.validator.as_bytes()];
        let revealed: Vec<String> = self.parts.iter().map(|(_, s)| s.reveal()).collect();
        for ((name, _), value) in self.parts.iter().zip(&revealed) {
            bytes.extend([&[0u8][..], name.as_bytes(), &[0], value.as_bytes()]);
        }
        crate::model::hex(&key.keyed_hash(&bytes))
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
    if !findings.iter().any(|f| f.part.is_some()) {
        return;
    }
    // Each finding's validator read once, not once per validator: a run's end goes through
    // thousands of findings on one thread.
    let mut by_validator: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, f) in findings.iter().enumerate() {
        if let Some(p) = &f.part {
            // The name copied once per validator, not once per finding.
            match by_validator.get_mut(&p.validator) {
                Some(members) => members.push(i),
                None => drop(by_validator.insert(p.validator.clone(), vec![i])),
            }
        }
    }
    for v in all() {
        if let Some(members) = by_validator.get(v.name()) {
            v.annotate(findings, members);
        }
    }
    // Scan results are merged (runtime-audit's environments, files and endpoints), and each
    // merge annotates again: a fact once, however often it was learnt.
    for f in findings.iter_mut().filter(|f| f.annotations.len() > 1) {
        let mut seen = std::collections::HashSet::new();
        f.annotations
            .retain(|a| seen.insert((a.key, a.value.clone())));
    }
}

/// `members` of `findings` grouped by the blob each is in (`Provenance::blob`): a credential's
/// parts pair only within one, where their offsets compare.
fn by_blob(findings: &[Finding], members: &[usize]) -> Vec<Vec<usize>> {
    let mut groups: HashMap<_, Vec<usize>> = HashMap::new();
    for &i in members {
        groups
            .entry(findings[i].provenance.blob())
            .or_default()
            .push(i);
    }
    groups.into_values().collect()
}

/// The complete credentials among `findings`, each once however many places hold it, with
/// the findings that belong to it. In a stable order (by hash under `key`).
pub fn credentials(findings: &[Finding], key: &FingerprintKey) -> Vec<Credential> {
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
            .entry(c.hash(key))
            .or_insert(c)
            .members
            .extend(members);
    }
    let mut out: Vec<(String, Credential)> = distinct.into_iter().collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.into_iter().map(|(_, c)| c).collect()
}

/// Check one credential now, without the cache (after an action changed it).
pub fn check_now(c: &Credential, opts: &Options) -> Validation {
    c.validator()
        .check(&[c], opts)
        .pop()
        .unwrap_or_else(|| Validation::skipped("not checked", None))
}

/// The validator of a credential.
pub fn validator_of(c: &Credential) -> &'static dyn Validator {
    c.validator()
}

/// Record a credential's new state (after an action changed it) so later runs do not trust an
/// old answer from the cache.
pub fn remember(c: &Credential, v: &Validation, opts: &Options) {
    if !v.status.definitive() {
        return;
    }
    let mut cache = Cache::load(opts);
    cache.put(&c.hash(&opts.key), v);
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
    /// The validator that checked it.
    pub validator: &'static str,
    /// What was requested (no secret), when a request was sent; and whether the operator's
    /// config overrode where it went.
    pub endpoint: Option<(String, bool)>,
}

/// Check every credential among `findings` and attach the outcome to each member. Parts that
/// are in no complete credential are `skipped` ("no pair"). Returns one record per distinct
/// credential.
pub fn validate(findings: &mut [Finding], opts: &Options) -> Vec<Checked> {
    let creds = credentials(findings, &opts.key);
    let mut cache = Cache::load(opts);
    let mut verdicts: Vec<Option<(Validation, bool)>> = Vec::with_capacity(creds.len());
    for c in &creds {
        let v = c
            .validator()
            .precheck(c, opts)
            .or_else(|| cache.get(&c.hash(&opts.key)));
        verdicts.push(v.map(|v| {
            let cached = v.status.definitive();
            (v, cached)
        }));
    }
    let asked: Vec<bool> = verdicts.iter().map(Option::is_none).collect();
    // The rest, asked for together per validator (each runs its own requests in parallel,
    // within its own limits); providers are independent, so they are asked at once.
    let work: Vec<(&'static dyn Validator, Vec<usize>)> = all()
        .into_iter()
        .filter_map(|v| {
            let ask: Vec<usize> = (0..creds.len())
                .filter(|&i| verdicts[i].is_none() && creds[i].validator == v.name())
                .collect();
            (!ask.is_empty()).then_some((v, ask))
        })
        .collect();
    let answers: Vec<Vec<Validation>> = std::thread::scope(|s| {
        let handles: Vec<_> = work
            .iter()
            .map(|(v, ask)| {
                let batch: Vec<&Credential> = ask.iter().map(|&i| &creds[i]).collect();
                s.spawn(move || v.check(&batch, opts))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    for ((_, ask), answer) in work.iter().zip(answers) {
        for (&i, answer) in ask.iter().zip(answer) {
            if answer.status.definitive() {
                cache.put(&creds[i].hash(&opts.key), &answer);
            }
            verdicts[i] = Some((answer, false));
        }
    }
    cache.save();
    let mut records = Vec::new();
    for ((c, verdict), asked) in creds.iter().zip(verdicts).zip(asked) {
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
            validator: c.validator,
            endpoint: asked.then(|| c.validator().endpoint(opts)).flatten(),
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
    let creds = credentials(findings, &opts.key);
    let live: Vec<(usize, String)> = creds
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let v = findings[c.members[0]].validation.as_ref()?;
            let who = v
                .arn
                .clone()
                .or_else(|| v.identity.as_ref().map(|i| i.display()));
            (v.status == Status::Live)
                .then_some(who)
                .flatten()
                .map(|w| (i, w))
        })
        .collect();
    let mut records = Vec::new();
    for v in all() {
        let mine: Vec<&(usize, String)> = live
            .iter()
            .filter(|(i, _)| creds[*i].validator == v.name())
            .collect();
        if mine.is_empty() {
            continue;
        }
        // What the validation's own answer tells needs no request.
        let from_answer: Vec<Option<Reach>> = mine
            .iter()
            .map(|(i, _)| {
                let validation = findings[creds[*i].members[0]].validation.as_ref()?;
                v.reach_from(validation)
            })
            .collect();
        let batch: Vec<(&Credential, &str)> = mine
            .iter()
            .zip(&from_answer)
            .filter(|(_, r)| r.is_none())
            .map(|((i, arn), _)| (&creds[*i], arn.as_str()))
            .collect();
        let mut asked = v.reach(&batch, opts).into_iter();
        let answers: Vec<Reached> = from_answer
            .into_iter()
            .map(|r| match r {
                Some(reach) => Some(Reached {
                    reach,
                    calls: Vec::new(),
                }),
                None => asked.next(),
            })
            .map(|r| {
                r.unwrap_or_else(|| Reached {
                    reach: Reach::unknown("", "not read"),
                    calls: Vec::new(),
                })
            })
            .collect();
        for (&&(i, _), reached) in mine.iter().zip(answers) {
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
    /// The run's fingerprint key, which cache entries are keyed with: the CLI sets the
    /// operator's; left as it is, entries made in one process are not found by another.
    pub key: FingerprintKey,
    /// Provider id to base URL (`github = "http://127.0.0.1:8080"`), from the operator's
    /// config (`[validate.endpoints]`) only: for tests and private deployments.
    pub endpoints: BTreeMap<String, String>,
    /// Regexes over a secret that mark it a canary for every declarative validator
    /// (`[validate] canary_patterns`).
    pub canary_patterns: Vec<regex::Regex>,
    /// `--validate-hosts`: credentials that name their own host (a database URL) are checked
    /// at that host. Off, they are `unknown`: a scanned file must not choose where this
    /// machine connects.
    pub validate_hosts: bool,
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
            key: FingerprintKey::ephemeral(),
            endpoints: BTreeMap::new(),
            canary_patterns: Vec::new(),
            validate_hosts: false,
        }
    }
}

/// Exponential, with jitter so many requests do not retry in lockstep. (Unused without the
/// HTTP client.)
#[cfg_attr(not(feature = "http-validate"), allow(dead_code))]
pub(crate) fn backoff(attempt: u32) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let base = 200u64 << attempt.min(5);
    Duration::from_millis(base + u64::from(nanos % 200))
}
