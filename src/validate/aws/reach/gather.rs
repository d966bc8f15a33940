//! Reading one identity's policies for `--reach`: every `Get*`/`List*` call, paged, retried
//! only for throttling, 5xx and transport errors within the deadline, and recorded.

// The parent's imports and helpers (`classify`, `denied`, `MAX_PAGES`), as before the split.
use super::*;

/// The policies of one identity, as they are read.
pub(super) struct Gather {
    pub(super) client: aws_sdk_iam::Client,
    pub(super) retries: u32,
    pub(super) deadline: Instant,
    pub(super) calls: Vec<Call>,
    pub(super) policies: Policies,
    /// The policies read, by kind and name.
    pub(super) read: Vec<String>,
    /// The first thing that kept a policy from being read: the reach is then `unknown`.
    pub(super) problem: Option<String>,
    pub(super) notes: Vec<String>,
    /// Managed policies already read (one attached to a user and its group is read once).
    pub(super) seen: HashSet<String>,
    pub(super) trust: Option<serde_json::Value>,
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
            .and_then(|d| iam_policy::parse_document(d).map_err(|e| e.to_string()))
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
    pub(super) async fn user(&mut self, user: &str) {
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
    pub(super) async fn role(&mut self, role: &str) {
        let c = self.client.clone();
        if let Ok(r) = self
            .call("iam:GetRole", role, || c.get_role().role_name(role).send())
            .await
        {
            let r = r.role();
            match r
                .and_then(|r| r.assume_role_policy_document())
                .map(iam_policy::parse_document)
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
