//! `--reach`: what a live AWS credential can do, read with its own read-only IAM calls from
//! moto's server (tests/moto_server.py, set up by tests/reach_fixture.py), which enforces
//! IAM policies on every request, so a credential that may not list its own policies is
//! refused as AWS would refuse it.

use crate::util::Sandbox;
#[cfg(feature = "aws")]
use crate::util::{to_run, Run};
#[cfg(feature = "aws")]
use crate::validate::Moto;
#[cfg(feature = "aws")]
use serde_json::Value;

#[test]
fn reach_without_validate_is_a_usage_error() {
    let sb = Sandbox::new();
    sb.write("a.txt", "nothing\n");
    let r = sb.run(&["scan", ".", "--reach"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--validate"), "{}", r.stderr);
    for cmd in [
        &["git", ".", "--reach"][..],
        &["env", "--reach"],
        &["image", "oci:x", "--reach"],
    ] {
        let r = sb.run(cmd);
        assert_eq!(r.code, 2, "{cmd:?}: {}", r.stderr);
        assert!(r.stderr.contains("--validate"), "{cmd:?}: {}", r.stderr);
    }
}

/// The identities of tests/reach_fixture.py, each in `data/NAME/creds`.
#[cfg(feature = "aws")]
const IDENTITIES: &[&str] = &["boss", "reader", "blind", "minter", "session"];

#[cfg(feature = "aws")]
fn sandbox(moto: &Moto) -> Sandbox {
    let sb = Sandbox::new();
    for name in IDENTITIES {
        let c = |i: usize| moto.creds[name][i].as_str().map(String::from);
        let mut s = format!(
            "aws_access_key_id = {}\naws_secret_access_key = {}\n",
            c(0).unwrap(),
            c(1).unwrap()
        );
        if let Some(t) = c(2) {
            s.push_str(&format!("aws_session_token = {t}\n"));
        }
        sb.write(&format!("data/{name}/creds"), s);
    }
    sb
}

/// `leakhound scan data --validate ARGS` against moto for STS and IAM, through the operator's
/// endpoint variables, with no credentials of the operator's own.
#[cfg(feature = "aws")]
fn scan(sb: &Sandbox, moto: &Moto, args: &[&str]) -> Run {
    let mut c = sb.cmd();
    c.args(["scan", "data", "--validate"])
        .args(args)
        .env("AWS_ENDPOINT_URL_STS", &moto.endpoint)
        .env("AWS_ENDPOINT_URL_IAM", &moto.endpoint)
        .env("AWS_REGION", "us-east-1")
        .env("XDG_STATE_HOME", sb.path("state"))
        .env_remove("AWS_ENDPOINT_URL")
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .env_remove("AWS_SESSION_TOKEN");
    to_run(c.output().unwrap())
}

/// The finding of `rule` in `data/NAME/creds`.
#[cfg(feature = "aws")]
fn finding<'a>(doc: &'a Value, name: &str, rule: &str) -> &'a Value {
    let path = format!("data/{name}/creds");
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path.as_str() && f["rule"].as_str().unwrap().starts_with(rule))
        .unwrap_or_else(|| panic!("no {rule} in {path}: {doc:#}"))
}

#[cfg(feature = "aws")]
fn strs(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect()
}

#[test]
#[cfg(feature = "aws")]
fn each_identity_gets_the_reach_its_own_policies_give_and_only_reads_are_made() {
    let moto = Moto::with_fixture("reach_fixture.py");
    let sb = sandbox(&moto);
    // A hook that keeps what it is handed: the finding, with its reach.
    let cfg = sb.write(
        "ops/leakhound.toml",
        "[[hooks]]\nname = \"keep\"\nwhen = \"live\"\nrules = [\"aws.access-key-id\"]\n\
         command = [\"sh\", \"-c\", \"cat >> hook.jsonl\"]\n",
    );
    let audit = sb.path("audit.jsonl");
    let r = scan(
        &sb,
        &moto,
        &[
            "--reach",
            "--format",
            "json",
            "--config",
            cfg.to_str().unwrap(),
            "--audit-log",
            audit.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc = r.json();
    let reach = |name: &str| finding(&doc, name, "aws.access-key-id")["reach"].clone();
    let arn = |kind: &str, name: &str| format!("arn:aws:{kind}::123456789012:{name}");

    let boss = reach("boss");
    assert_eq!(boss["level"], "admin", "{boss:#}");
    assert_eq!(boss["severity"], "critical");
    assert_eq!(boss["identity"], arn("iam", "user/boss"));
    let flags = strs(&boss["flags"]);
    for f in ["admin", "mint-credentials", "read-secrets", "data-read"] {
        assert!(flags.contains(&f), "{f}: {boss:#}");
    }
    assert!(strs(&boss["policies"]).contains(&"managed arn:aws:iam::123456789012:policy/AdminLike"));
    let not_evaluated = strs(&boss["not_evaluated"]);
    for n in [
        "conditions",
        "service-control-policies",
        "permission-boundaries",
        "resource-policies",
    ] {
        assert!(not_evaluated.contains(&n), "{n}: {boss:#}");
    }

    let reader = reach("reader");
    assert_eq!(reader["level"], "read-only", "{reader:#}");
    assert_eq!(strs(&reader["flags"]), ["data-read"]);

    // It may not read its own policies: unknown, never none.
    let blind = reach("blind");
    assert_eq!(blind["level"], "unknown", "{blind:#}");
    assert!(
        blind["reason"]
            .as_str()
            .unwrap()
            .contains("no permission to list policies"),
        "{blind:#}"
    );
    assert!(strs(&blind["flags"]).is_empty());

    let minter = reach("minter");
    assert_eq!(minter["level"], "write", "{minter:#}");
    assert_eq!(strs(&minter["flags"]), ["mint-credentials"]);
    assert!(strs(&minter["policies"]).contains(&"group keymakers inline keys"));

    // An assumed-role session: its role's policies and trust.
    let session = reach("session");
    assert_eq!(
        session["identity"],
        arn("sts", "assumed-role/crossrole/leaked")
    );
    assert_eq!(session["level"], "read-only", "{session:#}");
    let flags = strs(&session["flags"]);
    for f in ["cross-account", "read-secrets", "data-read"] {
        assert!(flags.contains(&f), "{f}: {session:#}");
    }
    assert!(!flags.contains(&"admin"));
    let policies = strs(&session["policies"]);
    assert!(
        policies.contains(&"role crossrole inline look"),
        "{session:#}"
    );
    assert!(policies.contains(&"managed arn:aws:iam::123456789012:policy/SecretsRead"));
    assert!(strs(&session["not_evaluated"]).contains(&"session-policies"));
    assert!(session["notes"].to_string().contains("210987654321"));

    // Every finding of a set carries it: the secret and the session token too.
    for rule in ["aws.secret-access-key", "aws.session-token"] {
        assert_eq!(finding(&doc, "session", rule)["reach"], session, "{rule}");
    }

    // The audit log: every request made, each a read (Get/List), with its outcome; one
    // summary per set; never a secret.
    let log = std::fs::read_to_string(&audit).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let calls: Vec<&Value> = lines
        .iter()
        .filter(|l| l["event"] == "reach-call")
        .collect();
    assert!(calls.len() >= 20, "{log}");
    for c in &calls {
        let action = c["action"].as_str().unwrap();
        assert!(
            action.starts_with("iam:Get") || action.starts_with("iam:List"),
            "a call that is not a read: {c}"
        );
    }
    assert!(calls
        .iter()
        .any(|c| c["action"] == "iam:ListAttachedUserPolicies"
            && c["target"] == "blind"
            && c["outcome"] == "AccessDenied"));
    assert!(calls
        .iter()
        .any(|c| c["action"] == "iam:GetRole" && c["target"] == "crossrole"));
    let summaries: Vec<&Value> = lines.iter().filter(|l| l["event"] == "reach").collect();
    assert_eq!(summaries.len(), IDENTITIES.len(), "{log}");
    for name in IDENTITIES {
        let secret = moto.cred(name, 1);
        for out in [&log, &r.stdout, &r.stderr] {
            assert!(!out.contains(&secret), "{name}'s secret in the output");
        }
    }

    // The hook got the reach in the finding it was handed.
    let hooked = std::fs::read_to_string(sb.path("ops/hook.jsonl")).unwrap();
    let hooked: Vec<Value> = hooked
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(hooked.len(), IDENTITIES.len());
    let boss_key = moto.cred("boss", 0);
    let boss_hooked = hooked
        .iter()
        .find(|f| f["secret"] == boss_key.as_str())
        .expect("the hook got boss's key id");
    assert_eq!(boss_hooked["reach"]["level"], "admin", "{boss_hooked:#}");
    assert_eq!(boss_hooked["reach"], boss);
}

#[test]
#[cfg(feature = "aws")]
fn reach_is_one_line_per_set_for_a_person_in_sarif_properties_and_only_when_asked() {
    let moto = Moto::with_fixture("reach_fixture.py");
    let sb = sandbox(&moto);
    let r = scan(&sb, &moto, &["--reach", "--color", "never"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let lines: Vec<&str> = r
        .stdout
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("reach: "))
        .collect();
    assert_eq!(lines.len(), IDENTITIES.len(), "{}", r.stdout);
    assert!(lines
        .iter()
        .any(|l| l.starts_with("reach: admin (critical): admin")
            && l.ends_with("as arn:aws:iam::123456789012:user/boss")));
    assert!(lines
        .iter()
        .any(|l| l.starts_with("reach: unknown (high)")
            && l.contains("no permission to list policies")));

    let r = scan(&sb, &moto, &["--reach", "--format", "sarif"]);
    let sarif: Value = serde_json::from_str(&r.stdout).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let levels: Vec<&str> = results
        .iter()
        .filter(|x| x["ruleId"] == "aws.access-key-id")
        .map(|x| x["properties"]["reach"]["level"].as_str().unwrap())
        .collect();
    let mut sorted = levels.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        ["admin", "read-only", "read-only", "unknown", "write"],
        "{levels:?}"
    );

    // Without --reach: validated, but no reach and no IAM request.
    let audit = sb.path("plain.jsonl");
    let r = scan(
        &sb,
        &moto,
        &["--format", "jsonl", "--audit-log", audit.to_str().unwrap()],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    for f in r.jsonl() {
        assert_eq!(f["validation"]["status"], "live", "{f}");
        assert!(f.get("reach").is_none(), "{f}");
    }
    let log = std::fs::read_to_string(&audit).unwrap();
    assert!(!log.contains("reach"), "{log}");
}

#[test]
#[cfg(feature = "aws")]
fn the_library_reads_the_reach_of_a_credential_found_elsewhere() {
    use leakhound::model::Secret;
    use leakhound::validate::{self, aws};
    // As a runtime audit would: parts from the environment, validated, then reached.
    let moto = Moto::with_fixture("reach_fixture.py");
    let s = |i| Secret::new(moto.cred("minter", i).as_bytes());
    let c = aws::credential(&moto.cred("minter", 0), &s(1), None);
    let mut opts = validate::Options::from_env();
    opts.endpoint = Some(moto.endpoint.clone());
    opts.iam_endpoint = Some(moto.endpoint.clone());
    opts.region = "us-east-1".into();
    opts.cache_dir = None;
    let v = validate::check_now(&c, &opts);
    assert_eq!(v.status, validate::Status::Live, "{v:?}");
    let reached = aws::reach(&c, v.arn.as_deref().unwrap(), &opts).unwrap();
    assert_eq!(reached.reach.level, leakhound::model::ReachLevel::Write);
    assert_eq!(
        reached.reach.flags,
        [leakhound::model::ReachFlag::MintCredentials]
    );
    assert!(
        reached.calls.iter().all(|c| c.outcome == "ok"),
        "{:?}",
        reached.calls
    );
    assert!(reached
        .calls
        .iter()
        .any(|c| c.action == "iam:GetGroupPolicy" && c.target == "keymakers/keys"));
}
