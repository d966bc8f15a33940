//! `--reach` through `aws-sdk-iam`, with the found credential and nothing else: who it is
//! (the ARN STS named for it) and what its identity's policies allow, read with its own
//! `Get*`/`List*` calls and evaluated locally ([`super::iam_policy`]). Nothing is ever written:
//! every request this module can make is a read, and each one is recorded for the audit log.

use super::iam_policy::{self, Policies, Probes};
use super::sts::{backoff, raw_code};
use super::AwsSet;
use crate::model::{severity, Reach, ReachFlag, ReachLevel};
use crate::validate::{Call, Options, Reached};
use aws_sdk_iam::config::http::HttpResponse;
use aws_sdk_iam::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_iam::error::{ProvideErrorMetadata, SdkError};
use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;
use tokio::time::Instant;

mod gather;
use gather::Gather;

/// Most pages read of one listing: a listing longer than this is not a credential's own.
const MAX_PAGES: usize = 20;

/// What the ARN says the credential is.
#[derive(Debug, Clone, PartialEq)]
enum Identity {
    User(String),
    /// An assumed-role session, by its role's name.
    Role(String),
    Root,
    Other(String),
}

/// Partition, account and kind of identity from `arn:PARTITION:SERVICE::ACCOUNT:RESOURCE`.
fn identity(arn: &str) -> Option<(String, String, Identity)> {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    if parts.len() != 6 || parts[0] != "arn" {
        return None;
    }
    let (partition, account, resource) = (parts[1], parts[4], parts[5]);
    let segs: Vec<&str> = resource.split('/').collect();
    let id = match (parts[2], segs.as_slice()) {
        ("iam", ["root"]) => Identity::Root,
        // `user/PATH/NAME`: the name is the last segment.
        ("iam", ["user", .., name]) if !name.is_empty() => Identity::User(name.to_string()),
        ("sts", ["assumed-role", role, _session]) => Identity::Role(role.to_string()),
        (_, [kind, ..]) => Identity::Other(kind.to_string()),
        _ => Identity::Other(resource.to_string()),
    };
    Some((partition.to_string(), account.to_string(), id))
}

/// Read the reach of each set (in order), at most `opts.concurrency` at a time.
pub(super) fn reach_all(sets: &[(AwsSet, String)], opts: &Options) -> Vec<Reached> {
    if sets.is_empty() {
        return Vec::new();
    }
    let rt = match super::net::runtime() {
        Ok(rt) => rt,
        Err(why) => {
            return sets
                .iter()
                .map(|(_, arn)| Reached {
                    reach: Reach::unknown(arn, why.clone()),
                    calls: Vec::new(),
                })
                .collect();
        }
    };
    rt.block_on(async {
        let http = super::net::https();
        let permits = Arc::new(tokio::sync::Semaphore::new(opts.concurrency.max(1)));
        let deadline = Instant::now() + opts.deadline;
        let tasks: Vec<_> = sets
            .iter()
            .map(|(set, arn)| {
                let (permits, http, set, arn, opts) = (
                    permits.clone(),
                    http.clone(),
                    set.clone(),
                    arn.clone(),
                    opts.clone(),
                );
                tokio::spawn(async move {
                    let _permit = permits.acquire_owned().await;
                    one(http, &set, &arn, &opts, deadline).await
                })
            })
            .collect();
        let mut out = Vec::with_capacity(tasks.len());
        for (t, (_, arn)) in tasks.into_iter().zip(sets) {
            out.push(t.await.unwrap_or_else(|e| Reached {
                reach: Reach::unknown(arn, format!("reach failed: {e}")),
                calls: Vec::new(),
            }));
        }
        out
    })
}

async fn one(
    http: aws_sdk_iam::config::SharedHttpClient,
    set: &AwsSet,
    arn: &str,
    opts: &Options,
    deadline: Instant,
) -> Reached {
    let unknown = |why: String| Reached {
        reach: Reach::unknown(arn, why),
        calls: Vec::new(),
    };
    let Some((partition, account, id)) = identity(arn) else {
        return unknown("STS named an ARN that is not one".into());
    };
    let probes = Probes::new(&partition, &account);
    let mut not_evaluated = vec![
        "conditions",
        "service-control-policies",
        "permission-boundaries",
        "resource-policies",
    ];
    match &id {
        Identity::Root => {
            // Root is not limited by IAM policies: nothing to read.
            return Reached {
                reach: Reach {
                    level: ReachLevel::Admin,
                    flags: vec![
                        ReachFlag::Admin,
                        ReachFlag::MintCredentials,
                        ReachFlag::ReadSecrets,
                        ReachFlag::DataRead,
                        ReachFlag::AssumeRole,
                    ],
                    severity: severity(ReachLevel::Admin, &[]),
                    identity: arn.to_string(),
                    not_evaluated: vec!["service-control-policies".into()],
                    policies: Vec::new(),
                    notes: vec!["the account's root user: no IAM policy limits it".into()],
                    reason: None,
                },
                calls: Vec::new(),
            };
        }
        Identity::Other(kind) => {
            return unknown(format!(
                "reach of a {kind} identity is not read (only IAM users and assumed roles)"
            ));
        }
        Identity::User(_) => {}
        Identity::Role(_) => not_evaluated.push("session-policies"),
    }
    let creds = Credentials::new(
        &set.key_id,
        &set.secret,
        set.token.clone(),
        None,
        "leakhound-found",
    );
    let mut conf = aws_sdk_iam::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(opts.region.clone()))
        .credentials_provider(creds)
        .http_client(http)
        .retry_config(aws_sdk_iam::config::retry::RetryConfig::disabled())
        .timeout_config(
            aws_sdk_iam::config::timeout::TimeoutConfig::builder()
                .operation_timeout(opts.timeout)
                .build(),
        );
    if let Some(e) = &opts.iam_endpoint {
        conf = conf.endpoint_url(e);
    }
    let mut g = Gather {
        client: aws_sdk_iam::Client::from_conf(conf.build()),
        retries: opts.retries,
        deadline,
        calls: Vec::new(),
        policies: Policies::default(),
        read: Vec::new(),
        problem: None,
        notes: Vec::new(),
        seen: HashSet::new(),
        trust: None,
    };
    match &id {
        Identity::User(name) => g.user(name).await,
        Identity::Role(name) => g.role(name).await,
        Identity::Root | Identity::Other(_) => {}
    }
    let ev = iam_policy::evaluate(&g.policies, g.trust.as_ref(), &probes);
    let mut notes = g.notes;
    notes.extend(ev.notes);
    let level = if g.problem.is_some() {
        if !g.read.is_empty() {
            notes.push(format!(
                "flags are from the {} policies that could be read; the others may add to \
                 them or take them back",
                g.read.len()
            ));
        }
        ReachLevel::Unknown
    } else {
        ev.level
    };
    Reached {
        reach: Reach {
            level,
            severity: severity(level, &ev.flags),
            flags: ev.flags,
            identity: arn.to_string(),
            not_evaluated: not_evaluated.into_iter().map(String::from).collect(),
            policies: g.read,
            notes,
            reason: g.problem,
        },
        calls: g.calls,
    }
}

/// What one attempt concluded.
enum Attempt<T> {
    Done(Result<T, String>),
    /// Throttled, a 5xx, a timeout or a transport error: worth another try.
    Retry(String),
}

fn classify<T, E: ProvideErrorMetadata>(r: Result<T, SdkError<E, HttpResponse>>) -> Attempt<T> {
    let e = match r {
        Ok(out) => return Attempt::Done(Ok(out)),
        Err(e) => e,
    };
    match &e {
        SdkError::ServiceError(se) => {
            let http = se.raw().status().as_u16();
            let code = se
                .err()
                .code()
                .map(String::from)
                .or_else(|| se.raw().body().bytes().and_then(raw_code));
            match code.as_deref() {
                Some(c @ ("Throttling" | "ThrottlingException" | "RequestLimitExceeded")) => {
                    Attempt::Retry(format!("{c} (HTTP {http})"))
                }
                _ if http == 429 || http >= 500 => {
                    Attempt::Retry(format!("HTTP {http} {}", code.unwrap_or_default()))
                }
                Some(c) => Attempt::Done(Err(c.to_string())),
                None => Attempt::Done(Err(format!("HTTP {http} (no error code)"))),
            }
        }
        SdkError::TimeoutError(_) => Attempt::Retry("timed out".into()),
        SdkError::DispatchFailure(d) => {
            let why = d
                .as_connector_error()
                .map_or_else(|| "request not sent".to_string(), |c| super::error_chain(c));
            Attempt::Retry(format!("network: IAM: {why}"))
        }
        SdkError::ResponseError(_) => Attempt::Retry("unreadable response".into()),
        other => Attempt::Done(Err(format!("request not built: {other}"))),
    }
}

/// Error codes that mean "this credential may not do that".
fn denied(code: &str) -> bool {
    matches!(
        code,
        "AccessDenied" | "AccessDeniedException" | "UnauthorizedOperation" | "UnauthorizedAccess"
    )
}

#[cfg(test)]
mod tests {
    use super::{identity, Identity};

    #[test]
    fn identities_from_arns() {
        let id = identity;
        assert_eq!(
            id("arn:aws:iam::123456789012:user/team/leaky"),
            Some((
                "aws".into(),
                "123456789012".into(),
                Identity::User("leaky".into())
            ))
        );
        assert_eq!(
            id("arn:aws-cn:sts::123456789012:assumed-role/worker/s").map(|x| x.2),
            Some(Identity::Role("worker".into()))
        );
        assert_eq!(
            id("arn:aws:iam::123456789012:root").map(|x| x.2),
            Some(Identity::Root)
        );
        assert_eq!(
            id("arn:aws:sts::123456789012:federated-user/bob").map(|x| x.2),
            Some(Identity::Other("federated-user".into()))
        );
        assert_eq!(id("user/x"), None);
    }
}
