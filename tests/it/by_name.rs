//! Values taken for their name alone (`by_name` rules, issue 27 item 3): any literal under a
//! password's, a secret's or a key's name is found at `low` whatever its shape (a short
//! password, a hex key, a uuid), never at the default level, and a masker hides it.

use crate::synth::{Rng, HEX};
use crate::util::{assert_no_piece, Sandbox};
use std::time::{SystemTime, UNIX_EPOCH};

/// A short chosen password, a hex key and a uuid, fresh per run (fake).
fn values() -> [String; 3] {
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut r = Rng::new(seed);
    // No vowels: no word (`test`, `pass`) a value that names itself would hold.
    let password = format!("{}{}", r.chars("bcdfghjkmnpqrvwxz", 5), r.chars("2579", 2));
    let key = r.chars(HEX, 32);
    let uuid = format!(
        "{}-{}-4{}-a{}-{}",
        r.chars(HEX, 8),
        r.chars(HEX, 4),
        r.chars(HEX, 3),
        r.chars(HEX, 3),
        r.chars(HEX, 12)
    );
    [password, key, uuid]
}

#[test]
fn any_literal_under_a_credential_name_is_low_and_masked() {
    let [password, key, uuid] = values();
    let text = format!(
        "domainPassword = '{password}'\nKey = {key}\nclient_secret = \"{uuid}\"\n\
         password = \"${{DB_PASSWORD}}\"\n"
    );
    let sb = Sandbox::new();
    sb.write("tree/app/conf.py", &text);

    let low = sb.run(&[
        "scan",
        "tree",
        "--format",
        "json",
        "--min-confidence",
        "low",
    ]);
    assert_eq!(low.code, 1, "{}", low.stderr);
    let found: Vec<(String, u64, String)> = low.json()["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["confidence"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = [
        ("generic.password.any", 1),
        ("generic.key.any", 2),
        ("generic.secret.any", 3),
    ]
    .map(|(r, l)| (r.to_string(), l, "low".to_string()));
    assert_eq!(found, want, "{}", low.stdout);

    // The default level is as it was: none of these, however generated the key looks.
    let default = sb.run(&["scan", "tree", "--format", "json"]);
    assert_eq!(default.code, 0, "{}", default.stdout);

    // A masker hides all three and leaves the reference alone.
    let out = sb.run_stdin(&["filter"], Some(text.as_bytes()));
    for s in [&password, &key, &uuid] {
        assert_no_piece(&out.stdout, s, "filter");
    }
    assert!(out.stdout.contains("${DB_PASSWORD}"), "{}", out.stdout);
}

/// What a `by_name` value's finding is in a default scan: let go as soon as it is made, with
/// only its count and its value kept (issue 31 part F makes no context or fingerprint for
/// it). The count is the one a scan at `low` reports, in a tree and in a history (where a
/// value counts once, in the commit that added its line), and a reported finding's context
/// still hides such a value wherever it appears.
#[test]
fn a_default_scan_counts_by_name_values_and_masks_with_them() {
    let [password, key, _] = values();
    let [other, ..] = values();
    let (id, _) = crate::util::fake_aws(u64::from_str_radix(&key[..12], 16).unwrap());
    let first = format!("domainPassword = '{password}'\nKey = {key}\n");
    let second = format!("{first}aws_id = {id}  # for {password}\ndomainPassword = '{other}'\n");
    let repo = crate::git::Repo::new();
    repo.commit(&[("app/conf.py", &first)], "first");
    repo.commit(&[("app/conf.py", &second)], "second");
    repo.sb.write("tree/app/conf.py", &second);

    let by_name = |report: &serde_json::Value| -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"].as_str().unwrap().ends_with(".any"))
            .map(|f| {
                (
                    f["rule"].as_str().unwrap().to_string(),
                    f["line"].as_u64().unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let low = ["--format", "json", "--min-confidence", "low"];
    for (what, args, want) in [
        (
            "tree",
            vec!["scan", "../tree"],
            vec![
                ("generic.key.any", 2),
                ("generic.password.any", 1),
                ("generic.password.any", 4),
            ],
        ),
        // The second commit added lines 3 and 4 only.
        (
            "history",
            vec!["git", "."],
            vec![
                ("generic.key.any", 2),
                ("generic.password.any", 1),
                ("generic.password.any", 4),
            ],
        ),
    ] {
        let at_low = repo.leakhound(&[&args[..], &low[..]].concat());
        assert_eq!(at_low.code, 1, "{what}: {}", at_low.stderr);
        let at_low = at_low.json();
        let want: Vec<(String, u64)> = want.iter().map(|(r, l)| (r.to_string(), *l)).collect();
        assert_eq!(by_name(&at_low), want, "{what}");
        let left_out = at_low["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["confidence"] == "low")
            .count() as u64;

        let default = repo.leakhound(&[&args[..], &["--format", "json"][..]].concat());
        assert_eq!(default.code, 1, "{what}: {}", default.stderr);
        let report = default.json();
        assert!(by_name(&report).is_empty(), "{what}: {}", default.stdout);
        assert_eq!(report["summary"]["below_confidence"], left_out, "{what}");
        // The key id is reported; its line shows the password only masked.
        let f = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["secret"].as_str() == Some(id.as_str()))
            .unwrap_or_else(|| panic!("{what}: the key id is reported: {}", default.stdout));
        let context = f["context"].as_str().unwrap();
        assert!(context.contains("# for "), "{what}: {context}");
        assert_no_piece(context, &password, what);
    }
}

/// A value a default report leaves out for its confidence masks, at the run's end, a
/// reported finding's context in another file, where nothing names it: the run learns the
/// values of every file it scans, not only of the finding's own.
#[test]
fn a_left_out_value_masks_another_files_context() {
    let [password, key, _] = values();
    let (id, _) = crate::util::fake_aws(u64::from_str_radix(&key[..12], 16).unwrap());
    let sb = Sandbox::new();
    sb.write("tree/a/conf.py", format!("domainPassword = '{password}'\n"));
    sb.write(
        "tree/b/notes.py",
        format!("aws_id = {id}  # for {password}\n"),
    );
    let default = sb.run(&["scan", "tree", "--format", "json"]);
    assert_eq!(default.code, 1, "{}", default.stderr);
    let report = default.json();
    assert_eq!(
        report["summary"]["below_confidence"], 1,
        "{}",
        default.stdout
    );
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{}", default.stdout);
    let context = findings[0]["context"].as_str().unwrap();
    assert!(context.contains("# for "), "{context}");
    assert_no_piece(context, &password, "another file's context");
}
