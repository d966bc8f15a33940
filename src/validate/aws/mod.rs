//! AWS credentials: access key ids, secret access keys and session tokens.
//!
//! Offline, always: the parts found near each other (or named alike in an environment) are
//! paired into credential sets, and each key id's account is decoded. Online, with
//! validation: a set is checked with STS GetCallerIdentity ([`sts`]), unless its account is
//! a known canary (honeytoken) account, whose owner a check would alert.

mod actions;
// IAM's responses to a live key; without the AWS SDK, a stand-in that refuses them.
#[cfg(feature = "aws")]
mod iam;
#[cfg(not(feature = "aws"))]
#[path = "iam_offline.rs"]
mod iam;
pub mod iam_policy;
#[cfg(feature = "aws")]
mod reach;
// Without the AWS SDK, a stand-in that reads nothing and says why.
#[cfg(not(feature = "aws"))]
#[path = "reach_offline.rs"]
mod reach;
#[cfg(feature = "aws")]
mod sts;
// Without the AWS SDK, a stand-in that checks nothing and says why.
#[cfg(not(feature = "aws"))]
#[path = "sts_offline.rs"]
mod sts;

/// The network plumbing of every AWS call leakhound makes (STS checks, IAM reads, the IAM
/// responses), built one way: a small tokio runtime, and the SDK's HTTPS client on rustls.
#[cfg(feature = "aws")]
pub(crate) mod net {
    /// A runtime for a batch of calls; the error says what failed, without a secret.
    pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, String> {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the network runtime: {e}"))
    }

    /// The HTTPS client the SDK's clients share (called inside the runtime).
    pub(crate) fn https() -> aws_sdk_sts::config::SharedHttpClient {
        use aws_smithy_http_client::tls::{rustls_provider::CryptoMode, Provider};
        aws_smithy_http_client::Builder::new()
            .tls_provider(Provider::Rustls(CryptoMode::Ring))
            .build_https()
    }
}

use super::{Credential, Options, Reached, Validator};
use crate::model::{Annotation, Finding, Secret, Validation};
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// The validator, as rules name it (`validator = { name = "aws", part = ... }`).
pub struct Aws;

/// The parts a rule can say its matches are.
const KEY_ID: &str = "key-id";
const SECRET: &str = "secret";
const TOKEN: &str = "session-token";
/// Largest distance, in bytes, between the parts of one credential in a file.
const PAIR_WITHIN: usize = 2048;

/// Thinkst canarytokens.org AWS accounts: a key from one of them is a tripwire, and checking
/// it would alert its owner. Operators add their own (`[validate] canary_accounts`).
pub const DEFAULT_CANARY_ACCOUNTS: &[&str] = &[
    "052310077262",
    "171436882533",
    "266735846894",
    "534261010715",
    "595918472158",
    "717712589309",
    "730335385048",
    "819147034852",
    "992382622183",
];

/// The AWS account an access key id belongs to, decoded offline: the 16 characters after the
/// prefix are base32; bits 1..41 of the first 6 decoded bytes are the account number.
pub fn account(key_id: &str) -> Option<String> {
    let body = key_id.get(4..)?;
    if key_id.len() != 20 || !key_id.is_char_boundary(4) {
        return None;
    }
    let mut bits: u128 = 0;
    for c in body.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'2'..=b'7' => c - b'2' + 26,
            _ => return None,
        };
        bits = (bits << 5) | v as u128;
    }
    // 16 characters are 80 bits; the first 48 are the 6 bytes that hold the account.
    let six = (bits >> 32) as u64;
    let account = (six & 0x7fff_ffff_ff80) >> 7;
    Some(format!("{account:012}"))
}

/// The account an STS answer for `key_id` must name, where the key id is known to carry it:
/// an `AKIA` or `ASIA` id in the format AWS has issued since 2019, whose first encoded bit
/// (the top bit of the fifth character: `Q`..`Z`, `2`..`7`) is set. Older ids (`AKIAI...`,
/// `AKIAJ...`) decode to a number that is not their account, so they prove nothing either
/// way and give `None`.
pub fn owner_account(key_id: &str) -> Option<String> {
    let marked = matches!(key_id.as_bytes().get(4), Some(b'Q'..=b'Z' | b'2'..=b'7'));
    let prefix = key_id.starts_with("AKIA") || key_id.starts_with("ASIA");
    if !(prefix && marked) {
        return None;
    }
    account(key_id)
}

/// An AWS credential from its parts, for a caller that found them some other way than a scan
/// (a runtime's environment, a metadata service): what [`reach`] and
/// [`crate::validate::check_now`] take.
pub fn credential(key_id: &str, secret: &Secret, token: Option<&Secret>) -> Credential {
    let mut parts = vec![
        (KEY_ID, Secret::new(key_id.as_bytes())),
        (SECRET, secret.clone()),
    ];
    parts.extend(token.map(|t| (TOKEN, t.clone())));
    Credential::new("aws", key_id.to_string(), parts)
}

/// What a live AWS credential can do: who `identity` (the ARN STS named for it) is, and
/// what its identity policies allow, read with the credential's own read-only IAM calls and
/// evaluated locally ([`policy`]). Every call is in [`Reached::calls`]; nothing is written.
/// `None` if `c` is not a complete AWS credential.
pub fn reach(c: &Credential, identity: &str, opts: &Options) -> Option<Reached> {
    let set = AwsSet::of(c)?;
    reach::reach_all(&[(set, identity.to_string())], opts).pop()
}

/// One AWS credential: what STS is asked with.
#[derive(Clone)]
// Without the SDK nothing is asked, so the secret parts go unread.
#[cfg_attr(not(feature = "aws"), allow(dead_code))]
struct AwsSet {
    key_id: String,
    secret: String,
    token: Option<String>,
}

impl std::fmt::Debug for AwsSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AwsSet({}, <secret redacted>)", self.key_id)
    }
}

impl AwsSet {
    fn of(c: &Credential) -> Option<AwsSet> {
        Some(AwsSet {
            key_id: c.part(KEY_ID)?.reveal(),
            secret: c.part(SECRET)?.reveal(),
            token: c.part(TOKEN).map(Secret::reveal),
        })
    }
}

fn part_of(f: &Finding) -> Option<&str> {
    f.part
        .as_ref()
        .filter(|p| p.validator == "aws")
        .map(|p| p.part.as_str())
}

impl Validator for Aws {
    fn name(&self) -> &'static str {
        "aws"
    }

    fn actions(&self) -> &'static [&'static dyn super::Action] {
        actions::ACTIONS
    }

    fn operator_credential_vars(&self) -> &'static [&'static str] {
        actions::OPERATOR_CREDENTIAL_VARS
    }

    fn parts(&self) -> &'static [&'static str] {
        &[KEY_ID, SECRET, TOKEN]
    }

    fn annotate(&self, findings: &mut [Finding], members: &[usize]) {
        pair(findings, members);
        for &i in members {
            let f = &mut findings[i];
            if part_of(f) == Some(KEY_ID) {
                if let Some(a) = account(&f.secret.reveal()) {
                    f.annotations.push(Annotation {
                        key: "aws_account",
                        label: "account",
                        value: a,
                    });
                }
            }
        }
    }

    fn credential(&self, findings: &[Finding], members: &[usize]) -> Option<Credential> {
        let pick = |part: &str| {
            members
                .iter()
                .find(|&&i| part_of(&findings[i]) == Some(part))
                .map(|&i| findings[i].secret.clone())
        };
        let (id, secret) = (pick(KEY_ID)?, pick(SECRET)?);
        let mut parts = vec![(KEY_ID, id.clone()), (SECRET, secret)];
        parts.extend(pick(TOKEN).map(|t| (TOKEN, t)));
        Some(Credential::new(self.name(), id.reveal(), parts))
    }

    fn precheck(&self, c: &Credential, opts: &Options) -> Option<Validation> {
        let acct = account(&c.id);
        if c.id.starts_with("ASIA") && c.part(TOKEN).is_none() {
            Some(Validation::skipped(
                "no session token for a temporary (ASIA) key",
                acct,
            ))
        } else if acct.as_ref().is_some_and(|a| opts.canaries.contains(a)) {
            Some(Validation::skipped("canary", acct))
        } else {
            None
        }
    }

    fn check(&self, creds: &[&Credential], opts: &Options) -> Vec<Validation> {
        let sets: Vec<AwsSet> = creds.iter().filter_map(|c| AwsSet::of(c)).collect();
        if sets.len() != creds.len() {
            // Not reached: `credential` only builds complete sets.
            return creds
                .iter()
                .map(|_| Validation::skipped("incomplete set", None))
                .collect();
        }
        sts::check_all(&sets, opts)
    }

    fn reach(&self, creds: &[(&Credential, &str)], opts: &Options) -> Vec<Reached> {
        let sets: Vec<(AwsSet, String)> = creds
            .iter()
            .filter_map(|(c, identity)| Some((AwsSet::of(c)?, identity.to_string())))
            .collect();
        if sets.len() != creds.len() {
            // Not reached: `credential` only builds complete sets.
            return creds
                .iter()
                .map(|(_, identity)| Reached {
                    reach: crate::model::Reach::unknown(identity, "incomplete set"),
                    calls: Vec::new(),
                })
                .collect();
        }
        reach::reach_all(&sets, opts)
    }

    fn unpaired(&self, f: &Finding) -> Validation {
        let acct = (part_of(f) == Some(KEY_ID))
            .then(|| account(&f.secret.reveal()))
            .flatten();
        Validation::skipped("no pair", acct)
    }
}

/// Group key ids, secrets and session tokens into credential sets: in an environment by
/// variable name (`X_AWS_ACCESS_KEY_ID` with `X_AWS_SECRET_ACCESS_KEY`), elsewhere by
/// proximity in the same blob. Each member gets the set's id.
fn pair(findings: &mut [Finding], members: &[usize]) {
    // The key that pairs a part within its place: `X_AWS_ACCESS_KEY_ID` pairs with
    // `X_AWS_SECRET_ACCESS_KEY`, by the stem `X_AWS_`.
    let stem = |f: &Finding| -> Option<String> {
        let v = f.provenance.variable()?.to_ascii_uppercase();
        let stem = [
            "ACCESS_KEY_ID",
            "SECRET_ACCESS_KEY",
            "SESSION_TOKEN",
            "SECURITY_TOKEN",
        ]
        .iter()
        .find_map(|s| v.strip_suffix(s))
        .unwrap_or(&v)
        .to_string();
        Some(stem)
    };
    for members in &super::by_blob(findings, members) {
        // Each part once: its pairing stem, and the key ids and tokens by stem, sorted by
        // where they start, so each secret finds its closest partner by binary search (a
        // file of 100,000 pairs pairs in time proportional to them, not to their square).
        let stems: HashMap<usize, Option<String>> =
            members.iter().map(|&i| (i, stem(&findings[i]))).collect();
        let index = |part: &str| -> Candidates {
            let mut c = Candidates::default();
            for &i in members
                .iter()
                .filter(|&&i| part_of(&findings[i]) == Some(part))
            {
                let at = (findings[i].start, i);
                c.all.push(at);
                c.by_stem.entry(stems[&i].clone()).or_default().push(at);
            }
            c.all.sort_unstable();
            c.by_stem.values_mut().for_each(|v| v.sort_unstable());
            c
        };
        let ids = index(KEY_ID);
        let tokens = index(TOKEN);
        let secrets: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&i| part_of(&findings[i]) == Some(SECRET))
            .collect();
        for s in secrets {
            let (at, stem) = (findings[s].start, &stems[&s]);
            let closest = |c: &Candidates, within: usize| c.closest(at, stem.as_deref(), within);
            let Some(id) = closest(&ids, PAIR_WITHIN) else {
                continue;
            };
            let token = closest(&tokens, 4 * PAIR_WITHIN);
            let parts: Vec<usize> = [Some(id), Some(s), token].into_iter().flatten().collect();
            let mut h = Sha256::new();
            for &m in &parts {
                h.update(findings[m].fingerprint.as_bytes());
            }
            let set = crate::model::hex(&h.finalize()[..8]);
            for m in parts {
                findings[m].credential_set = Some(set.clone());
            }
        }
    }
}

/// The parts of one kind in one place, by start: all of them, and by their variable's stem.
#[derive(Default)]
struct Candidates {
    all: Vec<(usize, usize)>,
    by_stem: HashMap<Option<String>, Vec<(usize, usize)>>,
}

impl Candidates {
    /// The closest part to offset `at` that pairs with a part of stem `stem`: one of the same
    /// stem at any distance, or, where either has no stem, one within `within` bytes. Ties go
    /// to the earlier part.
    fn closest(&self, at: usize, stem: Option<&str>, within: usize) -> Option<usize> {
        let nearest = |list: &[(usize, usize)], limit: Option<usize>| {
            let p = list.partition_point(|&(s, _)| s < at);
            let left = p.checked_sub(1).map(|k| list[k]);
            let right = list.get(p).copied();
            [left, right]
                .into_iter()
                .flatten()
                .map(|(s, i)| (s.abs_diff(at), s, i))
                .filter(|&(d, _, _)| limit.is_none_or(|l| d <= l))
                .min()
        };
        let best = match stem {
            Some(st) => {
                let same = self
                    .by_stem
                    .get(&Some(st.to_string()))
                    .and_then(|l| nearest(l, None));
                let none = self
                    .by_stem
                    .get(&None)
                    .and_then(|l| nearest(l, Some(within)));
                [same, none].into_iter().flatten().min()
            }
            None => nearest(&self.all, Some(within)),
        };
        best.map(|(_, _, i)| i)
    }
}

/// An error and its causes, `outer: inner: innermost`: a connector error says only "io
/// error" at the top, and the cause (refused, no route, a DNS failure, the host) is below.
#[cfg(feature = "aws")]
pub(super) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut at = e.source();
    while let Some(c) = at {
        let s = c.to_string();
        // Layers often repeat their cause in their own message.
        if !parts.last().is_some_and(|p| p.contains(&s)) {
            parts.push(s);
        }
        at = c.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn account_ids_decode_offline() {
        use super::account;
        // A canarytokens.org key id format: the account keeps its leading zero.
        assert_eq!(
            account("AKIAAYLPMN5HAAAAAAAA").as_deref(),
            Some("052310077262")
        );
        assert_eq!(
            account("AKIAQYLPMN5HHHFPZAM2").as_deref(),
            Some("052310077262")
        );
        assert_eq!(account("AKIA1234"), None);
        // moto's generator (which follows AWS's format) for 123456789012.
        for id in ["AKIARZPUZDIKM2HFF5VT", "ASIARZPUZDIKG2RKNWNV"] {
            assert_eq!(super::owner_account(id).as_deref(), Some("123456789012"));
        }
        // An id of the format before 2019 carries no account.
        assert_eq!(super::owner_account("AKIAIOSFODNN7EXAMPLE"), None);
        assert_eq!(super::owner_account("AKIAAYLPMN5HAAAAAAAA"), None);
        assert_eq!(account("AKIAaaaaaaaaaaaaaaaa"), None);
    }
}
