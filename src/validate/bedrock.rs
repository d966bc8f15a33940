//! Amazon Bedrock API keys: what they carry offline, and an expired one called expired.
//!
//! - A long-term key is `ABSK` + base64 of `BedrockAPIKey-<id>-at-<account>:<password>`: an IAM
//!   service-specific credential. Its user name names the account.
//! - A short-term key is `bedrock-api-key-` + base64 of a SigV4 presigned URL without its
//!   scheme (`bedrock.amazonaws.com/?Action=CallWithBearerToken&X-Amz-Credential=…&Version=1`):
//!   the signing key id, the region, when it was signed and for how long it is good.
//!
//! Neither is checked live (nothing here can answer a Bedrock call); a short-term key past
//! its expiry is `expired` without asking anyone.

use super::{Credential, Options, Validator};
use crate::model::{now_rfc3339, rfc3339, unix_now, Annotation, Finding, Status, Validation};
use base64::Engine as _;

pub struct Bedrock;

const LONG_TERM: &str = "long-term";
const SHORT_TERM: &str = "short-term";
const SHORT_PREFIX: &str = "bedrock-api-key-";

/// What a short-term key's presigned URL says.
#[derive(Debug, PartialEq)]
struct Presigned {
    key_id: String,
    region: String,
    /// Unix seconds.
    signed: u64,
    expires: u64,
}

fn decode(b64: &str) -> Option<String> {
    let engine = base64::engine::general_purpose::STANDARD;
    let bytes = engine
        .decode(b64)
        .or_else(|_| engine.decode(b64.trim_end_matches('=')))
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// `20250707T101500Z` as Unix seconds.
fn amz_date(s: &str) -> Option<u64> {
    let d = s.as_bytes();
    if d.len() != 16 || d[8] != b'T' || d[15] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, m, day) = (num(0..4)?, num(4..6)?, num(6..8)?);
    let (hh, mm, ss) = (num(9..11)?, num(11..13)?, num(13..15)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm), the inverse of `rfc3339`.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + hh * 3600 + mm * 60 + ss).ok()
}

fn presigned(secret: &str) -> Option<Presigned> {
    let url = decode(secret.strip_prefix(SHORT_PREFIX)?)?;
    let query = url.split_once('?')?.1;
    let param = |name: &str| {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .map(|v| {
                String::from_utf8_lossy(&crate::decode::percent_decoded(v.as_bytes())).into_owned()
            })
    };
    // `AKIA…/20250707/us-west-2/bedrock/aws4_request`
    let credential = param("X-Amz-Credential")?;
    let mut scope = credential.split('/');
    let key_id = scope.next()?.to_string();
    let region = scope.nth(1)?.to_string();
    let signed = amz_date(&param("X-Amz-Date")?)?;
    let lifetime: u64 = param("X-Amz-Expires")?.parse().ok()?;
    Some(Presigned {
        key_id,
        region,
        signed,
        expires: signed.saturating_add(lifetime),
    })
}

/// The account of a long-term key's service user (`BedrockAPIKey-x1y2-at-123456789012`).
fn long_term_account(secret: &str) -> Option<String> {
    let text = decode(secret.strip_prefix("ABSK")?)?;
    let user = text.split_once(':')?.0;
    let account = user.rsplit_once("-at-")?.1;
    (account.len() == 12 && account.bytes().all(|b| b.is_ascii_digit()))
        .then(|| account.to_string())
}

fn part_of(f: &Finding) -> Option<&str> {
    f.part
        .as_ref()
        .filter(|p| p.validator == "bedrock")
        .map(|p| p.part.as_str())
}

fn verdict(status: Status, reason: String, account: Option<String>) -> Validation {
    Validation {
        status,
        account,
        arn: None,
        user_id: None,
        reason: Some(reason),
        identity: None,
        checked_at: now_rfc3339(),
    }
}

impl Validator for Bedrock {
    fn name(&self) -> &'static str {
        "bedrock"
    }

    fn parts(&self) -> &'static [&'static str] {
        &[LONG_TERM, SHORT_TERM]
    }

    fn annotate(&self, findings: &mut [Finding], members: &[usize]) {
        for &i in members {
            let f = &mut findings[i];
            // Each key is a whole credential by itself.
            f.credential_set = Some(format!("bedrock-{}", f.fingerprint));
            let secret = f.secret.reveal();
            let part = part_of(f).map(str::to_owned);
            let mut add = |key, label, value| {
                f.annotations.push(Annotation { key, label, value });
            };
            match part.as_deref() {
                Some(SHORT_TERM) => {
                    if let Some(p) = presigned(&secret) {
                        add("aws_key_id", "signed by", p.key_id.clone());
                        if let Some(a) = super::aws::account(&p.key_id) {
                            add("aws_account", "account", a);
                        }
                        add("region", "region", p.region);
                        add("expires", "expires", rfc3339(p.expires));
                        if p.expires <= unix_now() {
                            add("expired", "expired", "true".into());
                        }
                    }
                }
                Some(LONG_TERM) => {
                    if let Some(a) = long_term_account(&secret) {
                        add("aws_account", "account", a);
                    }
                }
                _ => {}
            }
        }
    }

    fn credential(&self, findings: &[Finding], members: &[usize]) -> Option<Credential> {
        let &i = members.first()?;
        let f = &findings[i];
        let part = if part_of(f)? == SHORT_TERM {
            SHORT_TERM
        } else {
            LONG_TERM
        };
        // Named by its fingerprint: the key itself is the secret.
        Some(Credential::new(
            self.name(),
            format!("bedrock {part} key {}", f.fingerprint),
            vec![(part, f.secret.clone())],
        ))
    }

    fn precheck(&self, c: &Credential, _opts: &Options) -> Option<Validation> {
        let p = presigned(&c.part(SHORT_TERM)?.reveal())?;
        let account = super::aws::account(&p.key_id);
        (p.expires <= unix_now()).then(|| {
            verdict(
                Status::Expired,
                format!("expired at {}", rfc3339(p.expires)),
                account,
            )
        })
    }

    fn check(&self, creds: &[&Credential], _opts: &Options) -> Vec<Validation> {
        creds
            .iter()
            .map(|c| {
                let account = c
                    .part(SHORT_TERM)
                    .and_then(|s| presigned(&s.reveal()))
                    .and_then(|p| super::aws::account(&p.key_id))
                    .or_else(|| {
                        c.part(LONG_TERM)
                            .and_then(|s| long_term_account(&s.reveal()))
                    });
                verdict(
                    Status::Unknown,
                    "Bedrock API keys are not checked live".into(),
                    account,
                )
            })
            .collect()
    }

    fn unpaired(&self, _f: &Finding) -> Validation {
        Validation::skipped("not checked", None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn short_term(date: &str, expires: u64) -> String {
        let url = format!(
            "bedrock.amazonaws.com/?Action=CallWithBearerToken&X-Amz-Algorithm=AWS4-HMAC-SHA256\
             &X-Amz-Credential=ASIAGM2YICRPGYTMSZFK%2F{}%2Fus-west-2%2Fbedrock%2Faws4_request\
             &X-Amz-Date={date}&X-Amz-Expires={expires}&X-Amz-SignedHeaders=host\
             &X-Amz-Signature=f736&Version=1",
            &date[..8]
        );
        format!(
            "{SHORT_PREFIX}{}",
            base64::engine::general_purpose::STANDARD.encode(url)
        )
    }

    #[test]
    fn a_short_term_key_says_where_and_until_when() {
        let p = presigned(&short_term("20250707T101500Z", 43200)).unwrap();
        assert_eq!(p.key_id, "ASIAGM2YICRPGYTMSZFK");
        assert_eq!(p.region, "us-west-2");
        assert_eq!(rfc3339(p.signed), "2025-07-07T10:15:00Z");
        assert_eq!(rfc3339(p.expires), "2025-07-07T22:15:00Z");
        assert_eq!(presigned("bedrock-api-key-bm90IGEgdXJs"), None);
        // A `%` before a character of two bytes is not an escape, and no reason to panic.
        let url = "bedrock.amazonaws.com/?X-Amz-Credential=ASIAGM2YICRPGYTMSZFK%2F20250707%a\u{e9}\
                   %2Fus-west-2%2Fbedrock%2Faws4_request&X-Amz-Date=20250707T101500Z\
                   &X-Amz-Expires=60&Version=1";
        let key = format!(
            "{SHORT_PREFIX}{}",
            base64::engine::general_purpose::STANDARD.encode(url)
        );
        let p = presigned(&key).unwrap();
        assert_eq!(
            (p.key_id.as_str(), p.region.as_str()),
            ("ASIAGM2YICRPGYTMSZFK", "us-west-2")
        );
    }

    #[test]
    fn amz_dates_round_trip() {
        for secs in [0, 951_782_400, 1_751_883_300, 4_102_444_799] {
            let s = rfc3339(secs).replace(['-', ':'], "");
            assert_eq!(amz_date(&s), Some(secs), "{s}");
        }
        assert_eq!(amz_date("20251301T000000Z"), None);
    }

    #[test]
    fn a_long_term_key_names_its_account() {
        let key = format!(
            "ABSK{}",
            base64::engine::general_purpose::STANDARD
                .encode("BedrockAPIKey-n7e0-at-908293468954:lJlTd/UoOF2yHD2fsCvSAP2id9iGZeT8")
        );
        assert_eq!(long_term_account(&key).as_deref(), Some("908293468954"));
    }
}
