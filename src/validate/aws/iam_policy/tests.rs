//! The policy evaluator's tests (kept apart from `policy.rs` for its length).

use super::*;
use serde_json::json;

fn policies(docs: &[Value]) -> Policies {
    let mut p = Policies::default();
    for d in docs {
        p.add(d).unwrap();
    }
    p
}

fn doc(statements: Value) -> Value {
    json!({"Version": "2012-10-17", "Statement": statements})
}

fn probes() -> Probes {
    Probes::new("aws", "123456789012")
}

#[test]
fn wildcards_match_as_iam_does() {
    assert!(glob("iam:*", "iam:CreateAccessKey", true));
    assert!(glob("IAM:create*", "iam:CreateAccessKey", true));
    assert!(glob("s3:Get?bject", "s3:GetObject", true));
    assert!(!glob("s3:Get?bject", "s3:GetObjects", true));
    assert!(!glob("s3:Get*", "s3:PutObject", true));
    assert!(glob("*", "anything:At", true));
    // Resources keep their case.
    assert!(!glob(
        "arn:aws:s3:::Bucket/*",
        "arn:aws:s3:::bucket/k",
        false
    ));
    assert!(glob("arn:aws:s3:::b*/*", "arn:aws:s3:::bucket/k", false));
    assert!(covers_all_after("*", "iam:"));
    assert!(covers_all_after("*:*", "iam:"));
    assert!(covers_all_after("iAm:*", "iam:"));
    assert!(!covers_all_after("iam:Get*", "iam:"));
    assert!(!covers_all_after("s3:*", "iam:"));
    assert!(contains("s3:*", "s3:Put*", true));
    assert!(!contains("s3:Put?", "s3:Put*", true));
    assert!(!contains("s3:Get*", "s3:*", true));
}

#[test]
fn deny_overrides_allow_and_conditions_only_may_allow() {
    let p = policies(&[
        doc(json!([{"Effect": "Allow", "Action": "*", "Resource": "*"}])),
        doc(json!({"Effect": "Deny", "Action": "iam:Create*", "Resource": "*"})),
        doc(
            json!([{"Effect": "Allow", "Action": "ec2:RunInstances", "Resource": "*",
                     "Condition": {"StringEquals": {"aws:RequestedRegion": "eu-west-1"}}}]),
        ),
    ]);
    assert_eq!(p.decide("iam:CreateAccessKey", On::Any), Decision::Deny);
    assert_eq!(p.decide("iam:ListUsers", On::Any), Decision::Allow);
    // Denied the actions that change permissions: not admin, but still write.
    assert_eq!(p.level(&probes()), ReachLevel::Write);
    let c = policies(&[doc(json!([{"Effect": "Allow", "Action": "kms:Decrypt",
        "Resource": "*", "Condition": {"Bool": {"aws:MultiFactorAuthPresent": "true"}}}]))]);
    assert_eq!(c.decide("kms:Decrypt", On::Any), Decision::MayAllow);
    let e = evaluate(&c, None, &probes());
    assert_eq!(e.flags, vec![ReachFlag::ReadSecrets]);
    assert!(e.notes.iter().any(|n| n.contains("Condition")), "{e:?}");
    assert!(e.notes.iter().any(|n| n.contains("read-secrets")), "{e:?}");
    // A Deny under a condition does not take an Allow back.
    let d = policies(&[doc(json!([
        {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"},
        {"Effect": "Deny", "Action": "s3:*", "Resource": "*",
         "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]))]);
    assert_eq!(d.decide("s3:GetObject", On::Any), Decision::Allow);
}

#[test]
fn not_action_and_not_resource() {
    // Everything but IAM: write, not admin, no minting.
    let p = policies(&[doc(
        json!([{"Effect": "Allow", "NotAction": ["iam:*", "sts:*"],
        "Resource": "*"}]),
    )]);
    assert_eq!(
        p.decide("iam:CreateAccessKey", On::Any),
        Decision::NotAllowed
    );
    assert_eq!(p.decide("S3:GetObject", On::Any), Decision::Allow);
    let e = evaluate(&p, None, &probes());
    assert_eq!(e.level, ReachLevel::Write);
    assert!(!e.flags.contains(&ReachFlag::MintCredentials), "{e:?}");
    assert!(e.flags.contains(&ReachFlag::DataRead), "{e:?}");
    // NotAction that leaves IAM in: covers all of IAM, so admin.
    let q = policies(&[doc(
        json!({"Effect": "Allow", "NotAction": "s3:*", "Resource": "*"}),
    )]);
    assert_eq!(q.level(&probes()), ReachLevel::Admin);
    // NotResource: every bucket but one is "on *"; a Deny with NotResource is not a Deny
    // everywhere.
    let r = policies(&[doc(json!([
        {"Effect": "Allow", "Action": "s3:GetObject", "NotResource": "arn:aws:s3:::vault/*"},
        {"Effect": "Deny", "Action": "s3:GetObject", "NotResource": "arn:aws:s3:::open/*"}]))]);
    assert_eq!(
        r.decide("s3:GetObject", On::Resource("arn:aws:s3:::vault/k")),
        Decision::Deny
    );
    assert_eq!(
        r.decide("s3:GetObject", On::Resource("arn:aws:s3:::open/k")),
        Decision::Allow
    );
    assert_eq!(r.decide("s3:GetObject", On::Any), Decision::Allow);
}

#[test]
fn resource_patterns_decide_what_on_star_means() {
    let p = policies(&[doc(json!([
        {"Effect": "Allow", "Action": ["s3:Get*", "s3:List*"], "Resource": "arn:aws:s3:::reports/*"},
        {"Effect": "Allow", "Action": "sts:AssumeRole",
         "Resource": "arn:aws:iam::210987654321:role/deploy"}]))]);
    let e = evaluate(&p, None, &probes());
    // One bucket is not every bucket.
    assert!(!e.flags.contains(&ReachFlag::DataRead), "{e:?}");
    // One role, in another account: not "assume any role", but cross-account.
    assert!(!e.flags.contains(&ReachFlag::MintCredentials), "{e:?}");
    assert!(e.flags.contains(&ReachFlag::AssumeRole), "{e:?}");
    assert!(e.flags.contains(&ReachFlag::CrossAccount), "{e:?}");
    // sts:AssumeRole is not a reading verb.
    assert_eq!(e.level, ReachLevel::Write);
    let ro = policies(&[doc(json!({"Effect": "Allow",
        "Action": ["s3:Get*", "s3:List*"], "Resource": "*"}))]);
    let e = evaluate(&ro, None, &probes());
    assert_eq!(e.level, ReachLevel::ReadOnly);
    assert_eq!(e.flags, vec![ReachFlag::DataRead]);
}

#[test]
fn levels_and_flags() {
    let admin = policies(&[doc(
        json!({"Effect": "Allow", "Action": "*", "Resource": "*"}),
    )]);
    let e = evaluate(&admin, None, &probes());
    assert_eq!(e.level, ReachLevel::Admin);
    for f in [
        ReachFlag::Admin,
        ReachFlag::MintCredentials,
        ReachFlag::ReadSecrets,
        ReachFlag::DataRead,
        ReachFlag::AssumeRole,
    ] {
        assert!(e.flags.contains(&f), "{f:?} {e:?}");
    }
    let mint = policies(&[doc(
        json!({"Effect": "Allow", "Action": "iam:CreateAccessKey",
        "Resource": "arn:aws:iam::123456789012:user/${aws:username}"}),
    )]);
    let e = evaluate(&mint, None, &probes());
    assert_eq!(e.level, ReachLevel::Write);
    assert_eq!(e.flags, vec![ReachFlag::MintCredentials]);
    // Nothing allowed, or everything allowed taken back: none.
    let none = policies(&[doc(json!([
        {"Effect": "Allow", "Action": "s3:Get*", "Resource": "*"},
        {"Effect": "Deny", "Action": "s3:*", "Resource": "*"}]))]);
    assert_eq!(none.level(&probes()), ReachLevel::None);
    assert_eq!(Policies::default().level(&probes()), ReachLevel::None);
}

#[test]
fn trust_policies_name_the_accounts_that_may_assume() {
    let trust = json!({"Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
        "Principal": {"AWS": ["arn:aws:iam::210987654321:root", "123456789012"]}}]});
    assert_eq!(
        trusted_accounts(&trust),
        vec!["210987654321".to_string(), "123456789012".to_string()]
    );
    let e = evaluate(&Policies::default(), Some(&trust), &probes());
    assert_eq!(e.flags, vec![ReachFlag::CrossAccount]);
    assert!(e.notes[0].contains("210987654321"));
    let own =
        json!({"Statement": {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}}});
    assert!(trusted_accounts(&own).is_empty());
}

#[test]
fn documents_url_encoded_or_plain_and_bad_ones_refused() {
    let plain = r#"{"Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*"}}"#;
    let encoded = "%7B%22Statement%22%3A%7B%22Effect%22%3A%22Allow%22%2C%22Action%22%3A%22s3%3A%2A%22%2C%22Resource%22%3A%22%2A%22%7D%7D";
    assert_eq!(
        parse_document(plain).unwrap(),
        parse_document(encoded).unwrap()
    );
    let mut p = Policies::default();
    assert!(p
        .add(&json!({"Statement": [{"Effect": "Maybe", "Action": "*", "Resource": "*"}]}))
        .is_err());
    assert!(p
        .add(&json!({"Statement": [{"Effect": "Allow", "Action": "*"}]}))
        .is_err());
    assert!(p.add(&json!({"Version": "2012-10-17"})).is_err());
    assert_eq!(p.level(&probes()), ReachLevel::None, "nothing half-added");
}
