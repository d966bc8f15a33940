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
