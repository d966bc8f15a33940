//! `--reach` through `aws-sdk-iam`, with the found credential and nothing else: who it is
//! (the ARN STS named for it) and what its identity's policies allow, read with its own
//! `Get*`/`List*` calls and evaluated locally ([`super::policy`]). Nothing is ever written:
//! every request this module can make is a read, and each one is recorded for the audit log.

use super::policy::{self, Policies, Probes};
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
    let ev = policy::evaluate(&g.policies, g.trust.as_ref(), &probes);
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

/// The policies of one identity, as they are read.
struct Gather {
    client: aws_sdk_iam::Client,
    retries: u32,
    deadline: Instant,
    calls: Vec<Call>,
    policies: Policies,
    /// The policies read, by kind and name.
    read: Vec<String>,
    /// The first thing that kept a policy from being read: the reach is then `unknown`.
    problem: Option<String>,
    notes: Vec<String>,
    /// Managed policies already read (one attached to a user and its group is read once).
    seen: HashSet<String>,
    trust: Option<serde_json::Value>,
}

/// Every page of a marker-paginated IAM listing: `$items` maps one output to its items.
macro_rules! pages {
    ($g:expr, $action:literal, $target:expr, |$marker:ident| $send:expr, |$out:ident| $items:expr) => {{
        let mut all = Vec::new();
        let mut next: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let $marker = next.clone();
            let Ok($out) = $g.call($action, $target, || $send).await else {
                break;
            };
            all.extend($items);
            next = $out
                .marker()
                .filter(|_| $out.is_truncated())
                .map(String::from);
            if next.is_none() {
                break;
            }
        }
        all
    }};
}

impl Gather {
    /// One read that the reach needs, retried only for throttling, 5xx and transport errors,
    /// within the deadline; recorded. A failure makes the reach unknown, with why.
    async fn call<T, E, F, Fut>(
        &mut self,
        action: &'static str,
        target: &str,
        send: F,
    ) -> Result<T, ()>
    where
        E: ProvideErrorMetadata,
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, SdkError<E, HttpResponse>>>,
    {
        self.read_one(action, target, send).await.map_err(|e| {
            if self.problem.is_none() {
                self.problem = Some(if denied(&e) {
                    format!("no permission to list policies ({action} denied)")
                } else {
                    format!("{action} on {target} failed: {e}")
                });
            }
        })
    }

    /// One read, recorded; its failure is the caller's to weigh.
    async fn read_one<T, E, F, Fut>(
        &mut self,
        action: &'static str,
        target: &str,
        send: F,
    ) -> Result<T, String>
    where
        E: ProvideErrorMetadata,
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, SdkError<E, HttpResponse>>>,
    {
        let mut attempt = 0;
        let result = loop {
            if Instant::now() >= self.deadline {
                break Err("deadline reached".to_string());
            }
            let reason = match tokio::time::timeout_at(self.deadline, send()).await {
                Err(_) => break Err("deadline reached".to_string()),
                Ok(r) => match classify(r) {
                    Attempt::Done(r) => break r,
                    Attempt::Retry(reason) => reason,
                },
            };
            if attempt >= self.retries {
                break Err(reason);
            }
            attempt += 1;
            tokio::time::sleep(backoff(attempt)).await;
        };
        self.calls.push(Call {
            action,
            target: target.to_string(),
            outcome: match &result {
                Ok(_) => "ok".to_string(),
                Err(e) => e.clone(),
            },
        });
        result
    }

    /// Add one policy document (as IAM returns it, URL-encoded) under `name`.
    fn document(&mut self, name: String, doc: Option<&str>) {
        let parsed = doc
            .ok_or_else(|| "no document in the answer".to_string())
            .and_then(|d| policy::parse_document(d).map_err(|e| e.to_string()))
            .and_then(|v| self.policies.add(&v).map_err(|e| e.to_string()));
        match parsed {
            Ok(()) => self.read.push(name),
            Err(e) => {
                if self.problem.is_none() {
                    self.problem = Some(format!("policy {name} could not be evaluated: {e}"));
                }
            }
        }
    }

    /// A managed policy's default version.
    async fn managed(&mut self, arn: &str) {
        if !self.seen.insert(arn.to_string()) {
            return;
        }
        let c = self.client.clone();
        let Ok(p) = self
            .call("iam:GetPolicy", arn, || {
                c.get_policy().policy_arn(arn).send()
            })
            .await
        else {
            return;
        };
        let Some(version) = p
            .policy()
            .and_then(|p| p.default_version_id())
            .map(String::from)
        else {
            self.problem
                .get_or_insert_with(|| format!("GetPolicy named no default version of {arn}"));
            return;
        };
        let Ok(v) = self
            .call("iam:GetPolicyVersion", arn, || {
                c.get_policy_version()
                    .policy_arn(arn)
                    .version_id(&version)
                    .send()
            })
            .await
        else {
            return;
        };
        self.document(
            format!("managed {arn}"),
            v.policy_version().and_then(|v| v.document()),
        );
    }

    /// An IAM user's policies: attached, inline, and those of each of its groups.
    async fn user(&mut self, user: &str) {
        let c = self.client.clone();
        // The permission boundary is not evaluated, but a person should know one is set; not
        // being allowed to look costs only that note.
        if let Ok(u) = self
            .read_one("iam:GetUser", user, || c.get_user().user_name(user).send())
            .await
        {
            if let Some(b) = u
                .user()
                .and_then(|u| u.permissions_boundary())
                .and_then(|b| b.permissions_boundary_arn())
            {
                self.notes.push(format!(
                    "a permission boundary is set ({b}): not evaluated, it can only narrow this"
                ));
            }
        }
        let attached: Vec<String> = pages!(
            self,
            "iam:ListAttachedUserPolicies",
            user,
            |m| c
                .list_attached_user_policies()
                .user_name(user)
                .set_marker(m.clone())
                .send(),
            |out| out
                .attached_policies()
                .iter()
                .filter_map(|p| p.policy_arn().map(String::from))
                .collect::<Vec<_>>()
        );
        for arn in attached {
            self.managed(&arn).await;
        }
        let inline: Vec<String> = pages!(
            self,
            "iam:ListUserPolicies",
            user,
            |m| c
                .list_user_policies()
                .user_name(user)
                .set_marker(m.clone())
                .send(),
            |out| out.policy_names().to_vec()
        );
        for name in inline {
            if let Ok(p) = self
                .call("iam:GetUserPolicy", &format!("{user}/{name}"), || {
                    c.get_user_policy()
                        .user_name(user)
                        .policy_name(&name)
                        .send()
                })
                .await
            {
                self.document(
                    format!("user {user} inline {name}"),
                    Some(p.policy_document()),
                );
            }
        }
        let groups: Vec<String> = pages!(
            self,
            "iam:ListGroupsForUser",
            user,
            |m| c
                .list_groups_for_user()
                .user_name(user)
                .set_marker(m.clone())
                .send(),
            |out| out
                .groups()
                .iter()
                .map(|g| g.group_name().to_string())
                .collect::<Vec<_>>()
        );
        for group in groups {
            self.group(&group).await;
        }
    }

    async fn group(&mut self, group: &str) {
        let c = self.client.clone();
        let attached: Vec<String> = pages!(
            self,
            "iam:ListAttachedGroupPolicies",
            group,
            |m| c
                .list_attached_group_policies()
                .group_name(group)
                .set_marker(m.clone())
                .send(),
            |out| out
                .attached_policies()
                .iter()
                .filter_map(|p| p.policy_arn().map(String::from))
                .collect::<Vec<_>>()
        );
        for arn in attached {
            self.managed(&arn).await;
        }
        let inline: Vec<String> = pages!(
            self,
            "iam:ListGroupPolicies",
            group,
            |m| c
                .list_group_policies()
                .group_name(group)
                .set_marker(m.clone())
                .send(),
            |out| out.policy_names().to_vec()
        );
        for name in inline {
            if let Ok(p) = self
                .call("iam:GetGroupPolicy", &format!("{group}/{name}"), || {
                    c.get_group_policy()
                        .group_name(group)
                        .policy_name(&name)
                        .send()
                })
                .await
            {
                self.document(
                    format!("group {group} inline {name}"),
                    Some(p.policy_document()),
                );
            }
        }
    }

    /// An assumed role's policies and its trust policy.
    async fn role(&mut self, role: &str) {
        let c = self.client.clone();
        if let Ok(r) = self
            .call("iam:GetRole", role, || c.get_role().role_name(role).send())
            .await
        {
            let r = r.role();
            match r
                .and_then(|r| r.assume_role_policy_document())
                .map(policy::parse_document)
            {
                Some(Ok(trust)) => self.trust = Some(trust),
                Some(Err(e)) => {
                    self.problem
                        .get_or_insert_with(|| format!("the trust policy of {role}: {e}"));
                }
                None => {}
            }
            if let Some(b) = r
                .and_then(|r| r.permissions_boundary())
                .and_then(|b| b.permissions_boundary_arn())
            {
                self.notes.push(format!(
                    "a permission boundary is set ({b}): not evaluated, it can only narrow this"
                ));
            }
        }
        let attached: Vec<String> = pages!(
            self,
            "iam:ListAttachedRolePolicies",
            role,
            |m| c
                .list_attached_role_policies()
                .role_name(role)
                .set_marker(m.clone())
                .send(),
            |out| out
                .attached_policies()
                .iter()
                .filter_map(|p| p.policy_arn().map(String::from))
                .collect::<Vec<_>>()
        );
        for arn in attached {
            self.managed(&arn).await;
        }
        let inline: Vec<String> = pages!(
            self,
            "iam:ListRolePolicies",
            role,
            |m| c
                .list_role_policies()
                .role_name(role)
                .set_marker(m.clone())
                .send(),
            |out| out.policy_names().to_vec()
        );
        for name in inline {
            if let Ok(p) = self
                .call("iam:GetRolePolicy", &format!("{role}/{name}"), || {
                    c.get_role_policy()
                        .role_name(role)
                        .policy_name(&name)
                        .send()
                })
                .await
            {
                self.document(
                    format!("role {role} inline {name}"),
                    Some(p.policy_document()),
                );
            }
        }
    }
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
