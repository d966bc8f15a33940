//! STS GetCallerIdentity through `aws-sdk-sts`, with the found credentials and nothing else:
//! no credential chain, the SDK's own retries off (ours retry only what may succeed later).

use super::AwsSet;
use crate::model::{now_rfc3339, Status, Validation};
use crate::validate::Options;
use aws_sdk_sts::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_sts::error::{ProvideErrorMetadata, SdkError};
use std::sync::Arc;
use std::time::Duration;

fn unknown(reason: impl Into<String>) -> Validation {
    Validation::new(Status::Unknown, Some(reason.into()))
}

/// Check each set (in order), at most `opts.concurrency` at a time, all within the deadline.
pub(super) fn check_all(sets: &[AwsSet], opts: &Options) -> Vec<Validation> {
    if sets.is_empty() {
        return Vec::new();
    }
    let rt = match super::net::runtime() {
        Ok(rt) => rt,
        Err(why) => return sets.iter().map(|_| unknown(why.clone())).collect(),
    };
    rt.block_on(async {
        let http = super::net::https();
        let permits = Arc::new(tokio::sync::Semaphore::new(opts.concurrency.max(1)));
        let deadline = tokio::time::Instant::now() + opts.deadline;
        let tasks: Vec<_> = sets
            .iter()
            .map(|set| {
                let (permits, http, set, opts) =
                    (permits.clone(), http.clone(), set.clone(), opts.clone());
                tokio::spawn(async move {
                    let work = async {
                        let _permit = permits.acquire_owned().await;
                        check(http, &set, &opts).await
                    };
                    tokio::time::timeout_at(deadline, work)
                        .await
                        .unwrap_or_else(|_| unknown("deadline reached before an answer"))
                })
            })
            .collect();
        let mut out = Vec::with_capacity(tasks.len());
        for t in tasks {
            out.push(
                t.await
                    .unwrap_or_else(|e| unknown(format!("check failed: {e}"))),
            );
        }
        out
    })
}

/// What one attempt concluded.
enum Attempt {
    Done(Validation),
    /// Throttled, a 5xx, a timeout or a transport error: worth another try.
    Retry(String),
}

async fn check(
    http: aws_sdk_sts::config::SharedHttpClient,
    set: &AwsSet,
    opts: &Options,
) -> Validation {
    let creds = Credentials::new(
        &set.key_id,
        &set.secret,
        set.token.clone(),
        None,
        "leakhound-found",
    );
    let mut conf = aws_sdk_sts::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(opts.region.clone()))
        .credentials_provider(creds)
        .http_client(http)
        .retry_config(aws_sdk_sts::config::retry::RetryConfig::disabled())
        .timeout_config(
            aws_sdk_sts::config::timeout::TimeoutConfig::builder()
                .operation_timeout(opts.timeout)
                .build(),
        );
    if let Some(e) = &opts.endpoint {
        conf = conf.endpoint_url(e);
    }
    let client = aws_sdk_sts::Client::from_conf(conf.build());
    let owner = super::owner_account(&set.key_id);
    let mut attempt = 0;
    loop {
        let answer = client.get_caller_identity().send().await;
        let reason = match classify(answer, owner.as_deref()) {
            Attempt::Done(v) => return v,
            Attempt::Retry(reason) => reason,
        };
        if attempt >= opts.retries {
            return unknown(reason);
        }
        attempt += 1;
        tokio::time::sleep(backoff(attempt)).await;
    }
}

/// Exponential, with jitter so many sets do not retry in lockstep.
pub(super) fn backoff(attempt: u32) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let base = 200u64 << attempt.min(5);
    Duration::from_millis(base + u64::from(nanos % 200))
}

/// What one GetCallerIdentity result means; `owner` is the account the key id says it
/// belongs to, where it says one.
fn classify(
    r: Result<
        aws_sdk_sts::operation::get_caller_identity::GetCallerIdentityOutput,
        SdkError<
            aws_sdk_sts::operation::get_caller_identity::GetCallerIdentityError,
            aws_sdk_sts::config::http::HttpResponse,
        >,
    >,
    owner: Option<&str>,
) -> Attempt {
    let e = match r {
        Ok(out) => {
            // A 200 alone proves nothing (a proxy, a stub, an empty result): `live` needs the
            // account and the ARN that name the credential's owner. Anything less is
            // `unknown`, which is never cached and fires no `live` hook.
            return Attempt::Done(match proof(out.account(), out.arn(), owner) {
                Ok((account, arn)) => Validation {
                    status: Status::Live,
                    account: Some(account),
                    arn: Some(arn),
                    user_id: out.user_id().map(String::from),
                    reason: None,
                    identity: None,
                    checked_at: now_rfc3339(),
                },
                Err(why) => unknown(format!("STS answered 200 but {why}; not taken as live")),
            });
        }
        Err(e) => e,
    };
    match &e {
        SdkError::ServiceError(se) => {
            let http = se.raw().status().as_u16();
            // Some servers wrap errors so the SDK finds no code: read <Code> from the body.
            let code = se
                .err()
                .code()
                .map(String::from)
                .or_else(|| se.raw().body().bytes().and_then(raw_code));
            let message = se.err().message().unwrap_or("").to_string();
            match code.as_deref() {
                Some("InvalidClientTokenId") => Attempt::Done(Validation::new(
                    Status::Invalid,
                    Some("InvalidClientTokenId".into()),
                )),
                Some("SignatureDoesNotMatch") => Attempt::Done(Validation::new(
                    Status::SecretMismatch,
                    Some(
                        "SignatureDoesNotMatch: the key id exists, the secret is not its own"
                            .into(),
                    ),
                )),
                Some("ExpiredToken" | "ExpiredTokenException") => Attempt::Done(Validation::new(
                    Status::Expired,
                    Some("ExpiredToken".into()),
                )),
                Some(c @ ("Throttling" | "ThrottlingException" | "RequestLimitExceeded")) => {
                    Attempt::Retry(format!("{c} (HTTP {http})"))
                }
                _ if http == 429 || http >= 500 => {
                    Attempt::Retry(format!("HTTP {http} {}", code.unwrap_or_default()))
                }
                other => Attempt::Done(unknown(format!(
                    "HTTP {http} {} {message}",
                    other.unwrap_or("(no error code)")
                ))),
            }
        }
        SdkError::TimeoutError(_) => Attempt::Retry("timed out".into()),
        SdkError::DispatchFailure(d) => {
            let why = d
                .as_connector_error()
                .map_or_else(|| "request not sent".to_string(), |c| super::error_chain(c));
            Attempt::Retry(format!("network: STS GetCallerIdentity: {why}"))
        }
        SdkError::ResponseError(_) => Attempt::Retry("unreadable response".into()),
        other => Attempt::Done(unknown(format!("request not built: {other}"))),
    }
}

/// The account and ARN of a GetCallerIdentity answer, if they are well formed and agree: a
/// 12-digit account, and an ARN `arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE` in that
/// account with a resource; and the account is `owner`, the one the key id carries, when it
/// carries one. An answer about another account is not about this key (a proxy or a stub
/// that answers for its own credentials), so it proves nothing (#10).
fn proof(
    account: Option<&str>,
    arn: Option<&str>,
    owner: Option<&str>,
) -> Result<(String, String), String> {
    let account = account
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .ok_or("named no account")?;
    if account.len() != 12 || !account.bytes().all(|b| b.is_ascii_digit()) {
        return Err("named an account that is not 12 digits".into());
    }
    let arn = arn
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .ok_or("named no ARN")?;
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let well_formed = parts.len() == 6
        && parts[0] == "arn"
        && !parts[1].is_empty()
        && !parts[2].is_empty()
        && !parts[5].is_empty();
    if !well_formed {
        return Err("named a malformed ARN".into());
    }
    if parts[4] != account {
        return Err("named an ARN of another account".into());
    }
    if let Some(owner) = owner.filter(|o| *o != account) {
        // Account numbers are not secret (the report shows the decoded one anyway).
        return Err(format!(
            "named account {account}, not the key id's own account {owner}"
        ));
    }
    Ok((account.to_string(), arn.to_string()))
}

/// `<Code>X</Code>` from an error body.
pub(super) fn raw_code(body: &[u8]) -> Option<String> {
    let s = std::str::from_utf8(body).ok()?;
    let start = s.find("<Code>")? + "<Code>".len();
    let end = s[start..].find("</Code>")? + start;
    Some(s[start..end].trim().to_string()).filter(|c| !c.is_empty())
}

#[cfg(test)]
mod tests {
    #[test]
    fn live_needs_a_well_formed_account_and_arn() {
        use super::proof;
        let ok = proof(
            Some("123456789012"),
            Some("arn:aws:iam::123456789012:user/leaky"),
            None,
        );
        assert_eq!(
            ok,
            Ok((
                "123456789012".into(),
                "arn:aws:iam::123456789012:user/leaky".into()
            ))
        );
        let role = "arn:aws:sts::123456789012:assumed-role/worker/s";
        assert!(proof(Some("123456789012"), Some(role), None).is_ok());
        for (account, arn) in [
            (None, None),
            (Some(""), Some("")),
            (Some("123456789012"), None),
            (None, Some("arn:aws:iam::123456789012:user/x")),
            (Some("12345"), Some("arn:aws:iam::12345:user/x")),
            (Some("123456789012"), Some("user/x")),
            (Some("123456789012"), Some("arn:aws:iam::123456789012:")),
            (
                Some("123456789012"),
                Some("arn:aws:iam::210987654321:user/x"),
            ),
        ] {
            assert!(proof(account, arn, None).is_err(), "{account:?} {arn:?}");
        }
    }

    #[test]
    fn live_needs_the_key_ids_own_account() {
        // Regression #10: a well-formed answer about another account was taken as live.
        use super::proof;
        // moto's key id for 123456789012 (AWS's format since 2019).
        let owner = crate::validate::aws::owner_account("AKIARZPUZDIKM2HFF5VT");
        assert_eq!(owner.as_deref(), Some("123456789012"));
        let mine = (
            Some("123456789012"),
            Some("arn:aws:iam::123456789012:user/leaky"),
        );
        assert!(proof(mine.0, mine.1, owner.as_deref()).is_ok());
        let other = (
            Some("210987654321"),
            Some("arn:aws:iam::210987654321:user/x"),
        );
        let why = proof(other.0, other.1, owner.as_deref()).unwrap_err();
        assert_eq!(
            why,
            "named account 210987654321, not the key id's own account 123456789012"
        );
        // A key id that carries no account (the format before 2019) is not held to one.
        let old = crate::validate::aws::owner_account("AKIAIOSFODNN7EXAMPLE");
        assert!(proof(other.0, other.1, old.as_deref()).is_ok());
    }

    #[test]
    fn codes_from_wrapped_errors() {
        let body = b"<ErrorResponse><Errors><Error><Code>InvalidClientTokenId</Code></Error></Errors></ErrorResponse>";
        assert_eq!(
            super::raw_code(body).as_deref(),
            Some("InvalidClientTokenId")
        );
        assert_eq!(super::raw_code(b"<html>500</html>"), None);
    }
}
