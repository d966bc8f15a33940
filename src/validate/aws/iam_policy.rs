//! IAM identity policies evaluated locally, for `--reach`: Allow and Deny, `Action` and
//! `NotAction`, `Resource` and `NotResource`, wildcards (`*`, `?`; action names compared
//! without regard to case, resources with). Not evaluated, and said so: conditions (a
//! statement with a `Condition` counts as "may allow"), service control policies, permission
//! boundaries, session policies and resource policies.
//!
//! No network here: documents in, a level and flags out.

use crate::model::{ReachFlag, ReachLevel};
use serde_json::Value;

/// `Action` or `NotAction`, `Resource` or `NotResource`: the patterns, and whether the
/// statement names what it covers or what it leaves out.
#[derive(Debug, Clone, PartialEq)]
enum Patterns {
    Only(Vec<String>),
    Not(Vec<String>),
}

/// One statement of an identity policy.
#[derive(Debug, Clone)]
struct Statement {
    allow: bool,
    actions: Patterns,
    resources: Patterns,
    /// Has a `Condition`: whether it applies is not evaluated.
    conditional: bool,
}

/// What a set of policies says about one action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// An Allow without a condition applies and no Deny without one does.
    Allow,
    /// Only an Allow with a condition applies: it may allow.
    MayAllow,
    /// A Deny without a condition applies.
    Deny,
    /// Nothing allows it (an implicit deny).
    NotAllowed,
}

impl Decision {
    fn allows(self) -> bool {
        matches!(self, Decision::Allow | Decision::MayAllow)
    }
}

/// Which resources a question is about.
#[derive(Debug, Clone, Copy)]
pub enum On<'a> {
    /// This one (a probe ARN that only a wildcard pattern matches: "on `*`").
    Resource(&'a str),
    /// Any resource at all.
    Any,
}

/// The identity policies of one credential, as read.
#[derive(Debug, Default)]
pub struct Policies {
    statements: Vec<Statement>,
}

/// A policy document that is not an IAM policy.
#[derive(Debug, thiserror::Error)]
#[error("not a policy document: {0}")]
pub struct BadPolicy(String);

/// The document as JSON: IAM returns documents URL-encoded (RFC 3986), some servers plain.
pub fn parse_document(doc: &str) -> Result<Value, BadPolicy> {
    if let Ok(v) = serde_json::from_str::<Value>(doc) {
        return Ok(v);
    }
    let decoded = crate::decode::percent_decoded(doc.as_bytes());
    serde_json::from_slice(&decoded).map_err(|e| BadPolicy(e.to_string()))
}

/// A string or a list of strings.
fn strings(v: &Value) -> Option<Vec<String>> {
    match v {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(a) => a.iter().map(|x| x.as_str().map(String::from)).collect(),
        _ => None,
    }
}

/// The statements of a document: `Statement` is one object or a list of them.
fn statements_of(doc: &Value) -> Result<Vec<&Value>, BadPolicy> {
    match doc.get("Statement") {
        Some(Value::Array(a)) => Ok(a.iter().collect()),
        Some(o @ Value::Object(_)) => Ok(vec![o]),
        _ => Err(BadPolicy("no Statement".into())),
    }
}

impl Policies {
    /// Add the statements of one identity policy document.
    pub fn add(&mut self, doc: &Value) -> Result<(), BadPolicy> {
        let mut out = Vec::new();
        for st in statements_of(doc)? {
            let allow = match st.get("Effect").and_then(Value::as_str) {
                Some("Allow") => true,
                Some("Deny") => false,
                other => return Err(BadPolicy(format!("Effect {other:?}"))),
            };
            let pick = |only: &str, not: &str| -> Result<Patterns, BadPolicy> {
                match (st.get(only), st.get(not)) {
                    (Some(v), None) => strings(v)
                        .map(Patterns::Only)
                        .ok_or_else(|| BadPolicy(format!("{only} is not strings"))),
                    (None, Some(v)) => strings(v)
                        .map(Patterns::Not)
                        .ok_or_else(|| BadPolicy(format!("{not} is not strings"))),
                    (Some(_), Some(_)) => Err(BadPolicy(format!("both {only} and {not}"))),
                    (None, None) => Err(BadPolicy(format!("neither {only} nor {not}"))),
                }
            };
            out.push(Statement {
                allow,
                actions: pick("Action", "NotAction")?,
                resources: pick("Resource", "NotResource")?,
                conditional: st.get("Condition").is_some_and(|c| !c.is_null()),
            });
        }
        // All or nothing: a document half-understood would be evaluated as something else.
        self.statements.extend(out);
        Ok(())
    }

    /// How many statements carry a condition.
    pub fn conditional(&self) -> usize {
        self.statements.iter().filter(|s| s.conditional).count()
    }

    fn action_applies(st: &Statement, action: &str) -> bool {
        match &st.actions {
            Patterns::Only(p) => p.iter().any(|p| glob(p, action, true)),
            Patterns::Not(p) => !p.iter().any(|p| glob(p, action, true)),
        }
    }

    /// Whether `st` applies to the resources asked about. An Allow applies to "any" if it
    /// names any resource; a Deny only if it covers every resource (otherwise some resource
    /// is still allowed).
    fn resource_applies(st: &Statement, on: On<'_>) -> bool {
        match (on, &st.resources) {
            (On::Resource(r), Patterns::Only(p)) => p.iter().any(|p| glob(p, r, false)),
            (On::Resource(r), Patterns::Not(p)) => !p.iter().any(|p| glob(p, r, false)),
            (On::Any, Patterns::Only(p)) if st.allow => !p.is_empty(),
            (On::Any, Patterns::Not(p)) if st.allow => !p.iter().any(|p| all_stars(p)),
            (On::Any, Patterns::Only(p)) => p.iter().any(|p| all_stars(p)),
            (On::Any, Patterns::Not(_)) => false,
        }
    }

    /// What these policies say about `action` on `on`: an explicit Deny wins, then an Allow.
    pub fn decide(&self, action: &str, on: On<'_>) -> Decision {
        let applies =
            |st: &&Statement| Self::action_applies(st, action) && Self::resource_applies(st, on);
        let mut allow = Decision::NotAllowed;
        for st in self.statements.iter().filter(applies) {
            match (st.allow, st.conditional) {
                (false, false) => return Decision::Deny,
                // A Deny under a condition may or may not apply: the Allow stands.
                (false, true) => {}
                (true, false) => allow = Decision::Allow,
                (true, true) if allow == Decision::NotAllowed => allow = Decision::MayAllow,
                (true, true) => {}
            }
        }
        allow
    }

    /// Whether every action of `service` is allowed on `on`: an Allow whose actions cover the
    /// whole service (`*`, `iam:*`, `*:*`, a `NotAction` that names none of it).
    pub fn decide_service(&self, service: &str, on: On<'_>) -> Decision {
        let prefix = format!("{service}:");
        let mut allow = Decision::NotAllowed;
        for st in &self.statements {
            if !st.allow || !Self::resource_applies(st, on) {
                continue;
            }
            let covers = match &st.actions {
                Patterns::Only(p) => p.iter().any(|p| covers_all_after(p, &prefix)),
                Patterns::Not(p) => !p.iter().any(|p| may_match_with_prefix(p, &prefix)),
            };
            if covers {
                allow = match (allow, st.conditional) {
                    (_, false) => Decision::Allow,
                    (Decision::NotAllowed, true) => Decision::MayAllow,
                    (a, true) => a,
                };
            }
        }
        allow
    }

    /// The level: `admin` (every IAM action on every resource, no Deny on the actions that
    /// change permissions), `write` (an Allow that may cover a non-reading action and that no
    /// Deny takes back whole), `read-only`, or `none`.
    pub fn level(&self, probes: &Probes) -> ReachLevel {
        let iam_all = On::Resource(&probes.iam);
        let admin = self.decide_service("iam", iam_all).allows()
            && MINT_ACTIONS
                .iter()
                .all(|a| self.decide(a, iam_all) != Decision::Deny);
        if admin {
            return ReachLevel::Admin;
        }
        let mut level = ReachLevel::None;
        for st in self.statements.iter().filter(|s| s.allow) {
            if !Self::resource_applies(st, On::Any) {
                continue;
            }
            let live: Vec<&str> = match &st.actions {
                // A NotAction Allow allows nearly everything.
                Patterns::Not(_) => return ReachLevel::Write,
                Patterns::Only(p) => p
                    .iter()
                    .map(String::as_str)
                    .filter(|p| !self.denied_whole(p, &st.resources))
                    .collect(),
            };
            if live.iter().any(|p| may_write(p)) {
                return ReachLevel::Write;
            }
            if !live.is_empty() {
                level = ReachLevel::ReadOnly;
            }
        }
        level
    }

    /// Whether an unconditional Deny takes back everything that the action pattern `p` on
    /// `resources` allows.
    fn denied_whole(&self, p: &str, resources: &Patterns) -> bool {
        self.statements
            .iter()
            .filter(|d| !d.allow && !d.conditional)
            .any(|d| {
                let actions = match &d.actions {
                    Patterns::Only(dp) => dp.iter().any(|dp| contains(dp, p, true)),
                    Patterns::Not(_) => false,
                };
                let res = match (&d.resources, resources) {
                    (Patterns::Only(dr), _) if dr.iter().any(|r| all_stars(r)) => true,
                    (Patterns::Only(dr), Patterns::Only(ar)) => {
                        ar.iter().all(|a| dr.iter().any(|r| contains(r, a, false)))
                    }
                    _ => false,
                };
                actions && res
            })
    }

    /// The accounts named by the resources of Allow statements that cover `sts:AssumeRole`.
    fn assume_role_accounts(&self) -> Vec<String> {
        let mut out = Vec::new();
        for st in &self.statements {
            if !st.allow || !Self::action_applies(st, "sts:AssumeRole") {
                continue;
            }
            if let Patterns::Only(rs) = &st.resources {
                out.extend(rs.iter().filter_map(|r| arn_account(r)));
            }
        }
        out
    }
}

/// Actions that make new or longer-lived credentials or widen permissions.
pub const MINT_ACTIONS: &[&str] = &[
    "iam:CreateAccessKey",
    "iam:CreateUser",
    "iam:CreateLoginProfile",
    "iam:UpdateLoginProfile",
    "iam:AttachUserPolicy",
    "iam:AttachGroupPolicy",
    "iam:AttachRolePolicy",
    "iam:PutUserPolicy",
    "iam:PutGroupPolicy",
    "iam:PutRolePolicy",
    "iam:CreatePolicyVersion",
    "iam:AddUserToGroup",
    "iam:PassRole",
    "iam:UpdateAssumeRolePolicy",
];

/// Actions that read secrets.
pub const SECRET_ACTIONS: &[&str] = &[
    "secretsmanager:GetSecretValue",
    "ssm:GetParameter",
    "ssm:GetParameters",
    "ssm:GetParametersByPath",
    "kms:Decrypt",
];

/// Resources that only a wildcard matches, in the credential's own account and partition:
/// asking about one asks "on `*`".
#[derive(Debug, Clone)]
pub struct Probes {
    pub account: String,
    pub iam: String,
    pub role_elsewhere: String,
    pub s3_object: String,
}

impl Probes {
    pub fn new(partition: &str, account: &str) -> Probes {
        Probes {
            account: account.to_string(),
            iam: format!("arn:{partition}:iam::{account}:user/leakhound-reach-probe"),
            // Any role anywhere: another account than any real one.
            role_elsewhere: format!("arn:{partition}:iam::000000000000:role/leakhound-reach-probe"),
            s3_object: format!("arn:{partition}:s3:::leakhound-reach-probe/leakhound-reach-probe"),
        }
    }
}

/// What the identity policies (and a role's trust policy) allow, as a level and flags.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluated {
    pub level: ReachLevel,
    pub flags: Vec<ReachFlag>,
    pub notes: Vec<String>,
}

/// Evaluate `p` (and a role's `trust` policy) for a credential of `probes.account`.
pub fn evaluate(p: &Policies, trust: Option<&Value>, probes: &Probes) -> Evaluated {
    let level = p.level(probes);
    let mut flags = Vec::new();
    let mut notes = Vec::new();
    let mut conditional_flags = Vec::new();
    let mut flag = |f: ReachFlag, d: Decision, flags: &mut Vec<ReachFlag>| {
        if d.allows() && !flags.contains(&f) {
            flags.push(f);
            if d == Decision::MayAllow {
                conditional_flags.push(f.as_str());
            }
        }
    };
    if level == ReachLevel::Admin {
        flag(ReachFlag::Admin, Decision::Allow, &mut flags);
    }
    let best = |ds: &mut dyn Iterator<Item = Decision>| {
        let ds: Vec<Decision> = ds.collect();
        if ds.contains(&Decision::Allow) {
            Decision::Allow
        } else if ds.contains(&Decision::MayAllow) {
            Decision::MayAllow
        } else {
            Decision::NotAllowed
        }
    };
    let mint = best(
        &mut MINT_ACTIONS
            .iter()
            .map(|a| p.decide(a, On::Any))
            .chain([p.decide("sts:AssumeRole", On::Resource(&probes.role_elsewhere))]),
    );
    flag(ReachFlag::MintCredentials, mint, &mut flags);
    let secrets = best(&mut SECRET_ACTIONS.iter().map(|a| p.decide(a, On::Any)));
    flag(ReachFlag::ReadSecrets, secrets, &mut flags);
    flag(
        ReachFlag::DataRead,
        p.decide("s3:GetObject", On::Resource(&probes.s3_object)),
        &mut flags,
    );
    let assume = p.decide("sts:AssumeRole", On::Any);
    flag(ReachFlag::AssumeRole, assume, &mut flags);
    let elsewhere: Vec<String> = p
        .assume_role_accounts()
        .into_iter()
        .chain(trust.map(trusted_accounts).unwrap_or_default())
        .filter(|a| *a != probes.account)
        .collect();
    if !elsewhere.is_empty() {
        flag(ReachFlag::CrossAccount, Decision::Allow, &mut flags);
        let mut accounts = elsewhere.clone();
        accounts.sort();
        accounts.dedup();
        notes.push(format!("other accounts named: {}", accounts.join(", ")));
    }
    flags.sort();
    let n = p.conditional();
    if n > 0 {
        notes.push(format!(
            "{n} statement(s) have a Condition, not evaluated: an Allow under one is counted \
             as may allow, a Deny under one as not denying"
        ));
    }
    if !conditional_flags.is_empty() {
        notes.push(format!(
            "only under a condition: {}",
            conditional_flags.join(", ")
        ));
    }
    Evaluated {
        level,
        flags,
        notes,
    }
}

/// The accounts a trust policy lets assume the role: `*` (anyone) or account ids and ARNs
/// in `Principal.AWS` of its Allow statements.
pub fn trusted_accounts(trust: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for st in statements_of(trust).unwrap_or_default() {
        if st.get("Effect").and_then(Value::as_str) != Some("Allow") {
            continue;
        }
        let principals = match st.get("Principal") {
            Some(Value::String(s)) if s == "*" => vec!["*".to_string()],
            Some(Value::Object(o)) => o.get("AWS").and_then(strings).unwrap_or_default(),
            _ => Vec::new(),
        };
        for p in principals {
            if p == "*" {
                out.push("*".to_string());
            } else if is_account(&p) {
                out.push(p);
            } else if let Some(a) = arn_account(&p) {
                out.push(a);
            }
        }
    }
    out
}

fn is_account(s: &str) -> bool {
    s.len() == 12 && s.bytes().all(|b| b.is_ascii_digit())
}

/// The 12-digit account of an ARN (`arn:PARTITION:SERVICE:REGION:ACCOUNT:...`), if named.
fn arn_account(arn: &str) -> Option<String> {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    (parts.len() == 6 && parts[0] == "arn" && is_account(parts[4])).then(|| parts[4].to_string())
}

/// `*`, `**`, ...: matches every string.
fn all_stars(p: &str) -> bool {
    !p.is_empty() && p.bytes().all(|b| b == b'*')
}

/// Verbs that name reading actions, lower case: an action whose name starts with one reads.
const READ_VERBS: &[&str] = &[
    "get", "list", "describe", "head", "view", "lookup", "search", "query", "scan", "select",
    "batchget", "estimate", "preview", "retrieve", "filter",
];

/// Whether the action pattern `p` may match an action that is not a reading one: its name's
/// literal start (before any wildcard) must begin with a reading verb for it not to.
fn may_write(p: &str) -> bool {
    let Some((_, name)) = p.split_once(':') else {
        return true;
    };
    let literal: String = name
        .chars()
        .take_while(|c| *c != '*' && *c != '?')
        .collect::<String>()
        .to_ascii_lowercase();
    !READ_VERBS.iter().any(|v| literal.starts_with(v))
}

/// Whether glob `p` matches every string that starts with `prefix` (`*`, `iam:*`, `*:*`,
/// `ia*`): it ends in `*` and what comes before matches a prefix of `prefix`.
fn covers_all_after(p: &str, prefix: &str) -> bool {
    let Some(head) = p.strip_suffix('*') else {
        return false;
    };
    (0..=prefix.len())
        .filter(|&i| prefix.is_char_boundary(i))
        .any(|i| glob(head, &prefix[..i], true))
}

/// Whether glob `p` may match some string that starts with `prefix`.
fn may_match_with_prefix(p: &str, prefix: &str) -> bool {
    // The pattern followed by anything, against the prefix followed by anything: a match of
    // `p` on some `prefix...` exists iff `p*` and `prefix*` share a string, which for these
    // simple globs is: `p`'s literal start agrees with `prefix` as far as both go.
    let lit: String = p
        .chars()
        .take_while(|c| *c != '*' && *c != '?')
        .collect::<String>()
        .to_ascii_lowercase();
    let prefix = prefix.to_ascii_lowercase();
    lit.starts_with(&prefix) || prefix.starts_with(&lit)
}

/// IAM's wildcard match: `*` any run of characters, `?` any one; actions compare without
/// regard to case (`fold`), resources exactly.
pub fn glob(p: &str, s: &str, fold: bool) -> bool {
    matcher(p, s, fold, false)
}

/// Whether glob `outer` matches everything glob `inner` does (enough: `outer` matches
/// `inner`'s text with `inner`'s `*` and `?` taken as runs only an `outer` `*` can cover).
fn contains(outer: &str, inner: &str, fold: bool) -> bool {
    matcher(outer, inner, fold, true)
}

fn matcher(p: &str, s: &str, fold: bool, wild_text: bool) -> bool {
    let p: Vec<char> = p.chars().collect();
    let s: Vec<char> = s.chars().collect();
    let same = |a: char, b: char| {
        if wild_text && (b == '*' || b == '?') {
            return false;
        }
        if fold {
            a.eq_ignore_ascii_case(&b)
        } else {
            a == b
        }
    };
    // Iterative matching with one backtrack point (the last `*`): linear in practice.
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, si));
            pi += 1;
        } else if pi < p.len()
            && ((p[pi] == '?' && !(wild_text && (s[si] == '*' || s[si] == '?')))
                || (p[pi] != '?' && same(p[pi], s[si])))
        {
            pi += 1;
            si += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests;
