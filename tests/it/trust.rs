//! No secret escapes leakhound itself (issue 10): contexts masked with every secret on the
//! line from every pass, re-redaction of an old report, error messages that quote no input,
//! keyed fingerprints, and the places a report names (notebook cells, env dump lines,
//! paths with control characters).

use crate::util::{fake_aws, fake_github, Sandbox};
use base64::Engine as _;

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s.as_bytes())
}

/// Fails when `out` holds any run of 8 or more characters of `secret`.
fn assert_no_piece(out: &str, secret: &str, what: &str) {
    let b = secret.as_bytes();
    for w in b.windows(8) {
        let piece = std::str::from_utf8(w).unwrap();
        assert!(
            !out.contains(piece),
            "{what}: a piece of a secret ({piece}) is in the output:\n{out}"
        );
    }
}

/// Every output a scan can write, with the secrets they must not show.
fn every_output(sb: &Sandbox, target: &str) -> Vec<(String, String)> {
    let mut outs = Vec::new();
    for format in ["human", "json", "jsonl", "sarif"] {
        let r = sb.run(&["scan", target, "--format", format]);
        assert_eq!(r.code, 1, "{format}: {}", r.stderr);
        outs.push((format!("{format} stdout"), r.stdout));
        outs.push((format!("{format} stderr"), r.stderr));
    }
    let r = sb.run(&["scan", target, "--write-baseline", "baseline.json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let baseline = std::fs::read_to_string(sb.path("baseline.json")).unwrap();
    outs.push(("baseline".into(), baseline));
    outs
}

#[test]
fn a_secret_plain_and_base64_on_one_line_shows_in_no_output() {
    let sb = Sandbox::new();
    let same = fake_github(1001);
    let other = fake_github(1002);
    let (_, aws_secret) = fake_aws(1003);
    let encoded_same = b64(&format!("token={same}"));
    let encoded_other = b64(&format!("token={other}"));
    sb.write(
        "one-line.sh",
        format!(
            "export GH={same} GH_B64={encoded_same} OTHER={encoded_other} aws_secret_access_key={aws_secret}\n"
        ),
    );
    // The scan must see them all, or the test proves nothing.
    let r = sb.run(&["scan", "one-line.sh", "--format", "jsonl"]);
    let f = r.jsonl();
    let encoded = f.iter().filter(|x| x["encoding"] == "base64").count();
    assert!(encoded >= 2, "both base64 forms are found: {}", r.stdout);
    assert!(f
        .iter()
        .any(|x| x["encoding"].is_null() && x["rule"] == "github.pat"));
    // "token=" is six bytes: the base64 after its eight characters encodes the secret alone.
    let (same_part, other_part) = (&encoded_same[8..], &encoded_other[8..]);
    for (what, out) in every_output(&sb, "one-line.sh") {
        for s in [&same, &other, &aws_secret, same_part, other_part] {
            assert_no_piece(&out, s, &what);
        }
    }
}

#[test]
fn a_baseline_holds_no_context_and_no_secret() {
    let sb = Sandbox::new();
    let gh = fake_github(1010);
    sb.write("a.py", format!("TOKEN = '{gh}'  # the deploy token\n"));
    let r = sb.run(&["scan", ".", "--write-baseline", "b.json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let b: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sb.path("b.json")).unwrap()).unwrap();
    let f = &b["findings"][0];
    assert_eq!(f["rule"], "github.pat");
    assert_eq!(f["argon2"].as_str().unwrap().len(), 32);
    assert!(
        f.get("context").is_none() && f.get("secret").is_none() && f.get("fingerprint").is_none(),
        "{f}"
    );
    assert_eq!(b["baseline"]["kdf"], "argon2id");
    assert_eq!(b["baseline"]["salt"].as_str().unwrap().len(), 32);
    assert!(b.get("fingerprint_key_id").is_none(), "{b}");
    assert_no_piece(&b.to_string(), &gh, "baseline");
    // It still suppresses what it lists.
    let r = sb.run(&["scan", ".", "--baseline", "b.json"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

#[test]
fn a_minified_notebook_shows_no_other_fields_secret() {
    let sb = Sandbox::new();
    let in_source = fake_github(1020);
    let in_meta = fake_github(1021);
    let (_, in_output) = fake_aws(1022);
    // One line, as `nbformat` writes with no indent: every field sits in every context.
    let nb = format!(
        r#"{{"cells":[{{"cell_type":"code","metadata":{{"token":"{in_meta}"}},"source":["t = '{in_source}'\n"],"outputs":[{{"output_type":"stream","name":"stdout","text":["aws_secret_access_key={in_output}\n"]}}],"execution_count":1}}],"metadata":{{}},"nbformat":4,"nbformat_minor":5}}"#
    );
    sb.write("nb.ipynb", nb);
    let r = sb.run(&["scan", "nb.ipynb", "--format", "jsonl"]);
    let f = r.jsonl();
    let rules: Vec<&str> = f.iter().map(|x| x["rule"].as_str().unwrap()).collect();
    assert!(
        rules.iter().filter(|r| **r == "github.pat").count() >= 2,
        "{rules:?}"
    );
    for (what, out) in every_output(&sb, "nb.ipynb") {
        for s in [&in_source, &in_meta, &in_output] {
            assert_no_piece(&out, s, &what);
        }
    }
    // The metadata token is a finding too, not only masked.
    let shown = sb.run(&["scan", "nb.ipynb", "--format", "jsonl", "--show-secrets"]);
    assert!(
        shown
            .jsonl()
            .iter()
            .any(|x| x["secret"] == in_meta.as_str()),
        "{}",
        shown.stdout
    );
}

#[test]
fn the_human_report_names_a_notebook_findings_cell() {
    let sb = Sandbox::new();
    let gh = fake_github(1030);
    let nb = format!(
        r#"{{"cells":[{{"cell_type":"markdown","metadata":{{}},"source":["hi"]}},{{"cell_type":"code","metadata":{{}},"source":["t = '{gh}'\n"],"outputs":[],"execution_count":1}}],"metadata":{{}},"nbformat":4,"nbformat_minor":5}}"#
    );
    sb.write("nb.ipynb", nb);
    let r = sb.run(&["scan", "nb.ipynb"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.contains("cells[1] source"), "{}", r.stdout);
}

#[test]
fn validate_rewrites_an_old_report_with_every_secret_masked() {
    let sb = Sandbox::new();
    let (id, secret) = fake_aws(1040);
    let gh = fake_github(1040);
    sb.write(
        "creds.sh",
        format!("aws_access_key_id={id} aws_secret_access_key={secret} GH={gh}\n"),
    );
    let r = sb.run(&[
        "scan",
        "creds.sh",
        "--format",
        "jsonl",
        "--show-secrets",
        "-o",
        "report.jsonl",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let before = std::fs::read_to_string(sb.path("report.jsonl")).unwrap();
    assert!(
        before.contains(&secret) && before.contains(&gh),
        "a revealing report"
    );
    // Nothing listens on the endpoint: the set is `unknown`, and the rewrite still happens.
    let r = sb
        .cmd()
        .args(["validate", "report.jsonl"])
        .env(
            "AWS_ENDPOINT_URL_STS",
            format!("http://127.0.0.1:{}", crate::util::refused_port()),
        )
        .env("XDG_STATE_HOME", sb.path("state"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&r.stdout);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(out.lines().count() >= 3, "{out}{err}");
    assert!(out.contains(&id), "key ids stay readable: {out}");
    for s in [&secret, &gh] {
        assert_no_piece(&out, s, "validate stdout");
        assert_no_piece(&err, s, "validate stderr");
    }
}

#[test]
fn a_dotenv_given_as_config_or_rules_is_not_quoted_in_errors() {
    let sb = Sandbox::new();
    let gh = fake_github(1050);
    let (_, secret) = fake_aws(1050);
    sb.write(
        ".env",
        format!("GITHUB_TOKEN={gh}\nAWS_SECRET_ACCESS_KEY=\"{secret}\"\n"),
    );
    sb.write(
        "quoted.env",
        format!("TOKEN = \"{gh}\"\nrules = \"{secret}\"\n"),
    );
    sb.write("clean.txt", "nothing\n");
    for file in [".env", "quoted.env"] {
        for args in [
            vec!["scan", "clean.txt", "--config", file],
            vec!["scan", "clean.txt", "--rules", file],
            vec!["rules", "check", file],
        ] {
            let r = sb.run(&args);
            assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
            assert!(
                r.stderr.contains("line "),
                "{args:?}: names the line: {}",
                r.stderr
            );
            for s in [&gh, &secret] {
                assert_no_piece(&r.stderr, s, &format!("{args:?} stderr"));
                assert_no_piece(&r.stdout, s, &format!("{args:?} stdout"));
            }
        }
    }
}

/// A literal value in an allow list is a normal way to allow a secret, and a secret with a
/// `+` (an AWS one) is no valid regex: the error names the file, field and column, never
/// the value. So for a rule's pattern and a gitleaks config's global allowlist, which is
/// named as its own file's, not as the first rule it is merged into.
#[test]
fn a_regex_error_does_not_quote_the_pattern() {
    let sb = Sandbox::new();
    let (_, secret) = fake_aws(1051);
    let value = format!("+{}", &secret[1..]);
    sb.write("clean.txt", "nothing\n");
    sb.write("lh.toml", format!("[allow]\nregexes = [\"{value}\"]\n"));
    sb.write(
        "rules.toml",
        format!(
            "[[rules]]\nid = \"x.y\"\nname = \"x\"\nkeywords = [\"abc\"]\n\
             pattern = \"abc(?P<secret>{value})\"\nexamples = [\"abc1\"]\nnegatives = []\n"
        ),
    );
    sb.write(
        "gitleaks.toml",
        format!(
            "title = \"t\"\n[[rules]]\nid = \"x\"\nregex = \"abc[0-9]{{10}}\"\n\
             [allowlist]\nregexes = [\"{value}\"]\n"
        ),
    );
    for (args, names) in [
        (
            vec!["scan", "clean.txt", "--config", "lh.toml"],
            "lh.toml: allow.regexes",
        ),
        (
            vec!["scan", "clean.txt", "--rules", "rules.toml"],
            "rules.toml",
        ),
        (vec!["rules", "check", "rules.toml"], "rules.toml"),
        (
            vec!["scan", "clean.txt", "--rules", "gitleaks.toml"],
            "gitleaks.toml",
        ),
    ] {
        let r = sb.run(&args);
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(names), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("column"), "{args:?}: {}", r.stderr);
        for out in [&r.stdout, &r.stderr] {
            assert_no_piece(out, &secret, &format!("{args:?}"));
        }
    }
    // A glob's error neither: an allow list's path pattern, a disabled rules' pattern.
    sb.write("glob.toml", format!("[allow]\npaths = [\"{secret}[\"]\n"));
    sb.write("off.toml", format!("[rules]\ndisable = [\"{secret}[\"]\n"));
    // A hook's and a validation setting's mistakes, which a masker does not use either.
    sb.write(
        "hook.toml",
        "[[hooks]]\nname = \"h\"\nwhen = \"bogus\"\ncommand = [\"true\"]\n",
    );
    sb.write(
        "endpoint.toml",
        "[validate.endpoints]\nnoprovider = \"http://127.0.0.1:9\"\n",
    );
    // A masker, which masks what an allow list accepts too, still says the list is broken.
    for (config, names) in [
        ("glob.toml", "allow.paths"),
        ("off.toml", "rules.disable"),
        ("hook.toml", "when"),
        ("endpoint.toml", "validate.endpoints.noprovider"),
    ] {
        for args in [
            vec!["scan", "clean.txt", "--config", config],
            vec!["filter", "--config", config],
        ] {
            let r = sb.run(&args);
            assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
            assert!(r.stderr.contains(names), "{args:?}: {}", r.stderr);
            for out in [&r.stdout, &r.stderr] {
                assert_no_piece(out, &secret, config);
            }
        }
    }
}

fn sha256_fingerprint(rule: &str, secret: &str) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(rule.as_bytes());
    h.update([0]);
    h.update(secret.as_bytes());
    h.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn fingerprints_are_keyed_and_print_no_entropy() {
    let sb = Sandbox::new();
    let weak = "Tr0ub4dor&3xQ";
    sb.write("db.ini", format!("[db]\npassword = {weak}\n"));
    let run = |key: &str| {
        let o = sb
            .cmd()
            .args(["scan", "db.ini", "--format", "jsonl"])
            .env("LEAKHOUND_FINGERPRINT_KEY", key)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        v
    };
    let a = run("team-key-0123456789abcdef");
    let a2 = run("team-key-0123456789abcdef");
    let b = run("another-key-0123456789abcd");
    let rule = a["rule"].as_str().unwrap();
    assert_eq!(a["fingerprint"], a2["fingerprint"], "stable under one key");
    assert_ne!(
        a["fingerprint"], b["fingerprint"],
        "another key, another fingerprint"
    );
    assert_ne!(
        a["fingerprint"].as_str().unwrap(),
        sha256_fingerprint(rule, weak),
        "not the unkeyed hash anyone can compute"
    );
    assert!(
        a.get("entropy").is_none(),
        "no entropy beside a redacted secret: {a}"
    );
    assert_no_piece(&a.to_string(), weak, "jsonl");
}

/// A written baseline holds no machine's key: one committed on one machine suppresses the
/// same findings on another (another fingerprint key) with no setup, and a changed secret in
/// the same place is not suppressed. An earlier *report* used as a baseline still names its
/// key, and is refused under another one rather than suppressing nothing.
#[test]
fn a_baseline_is_portable_and_a_report_under_another_key_is_refused() {
    let sb = Sandbox::new();
    sb.write("a.py", format!("TOKEN = '{}'\n", fake_github(1060)));
    let with_key = |key: &str, args: &[&str]| {
        let o = sb
            .cmd()
            .args(args)
            .env("LEAKHOUND_FINGERPRINT_KEY", key)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, _) = with_key(
        "key-one-0123456789abcdef",
        &["scan", ".", "--write-baseline", "b.json"],
    );
    assert_eq!(code, Some(1));
    for key in ["key-one-0123456789abcdef", "key-two-0123456789abcdef"] {
        let (code, err) = with_key(key, &["scan", ".", "--baseline", "b.json"]);
        assert_eq!(code, Some(0), "{key}: {err}");
    }
    // Another secret where the accepted one was: reported.
    sb.write("a.py", format!("TOKEN = '{}'\n", fake_github(1061)));
    let (code, _) = with_key(
        "key-two-0123456789abcdef",
        &["scan", ".", "--baseline", "b.json"],
    );
    assert_eq!(code, Some(1));
    sb.write("a.py", format!("TOKEN = '{}'\n", fake_github(1060)));
    let (code, _) = with_key(
        "key-one-0123456789abcdef",
        &["scan", ".", "--format", "json", "-o", "report.json"],
    );
    assert_eq!(code, Some(1));
    let (code, err) = with_key(
        "key-two-0123456789abcdef",
        &["scan", ".", "--baseline", "report.json"],
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("another fingerprint key"), "{err}");
}

#[test]
fn the_state_key_is_made_once_and_kept_private() {
    use std::os::unix::fs::PermissionsExt;
    let sb = Sandbox::new();
    sb.write("a.py", format!("TOKEN = '{}'\n", fake_github(1070)));
    let fp = || {
        let o = sb
            .cmd()
            .args(["scan", ".", "--format", "jsonl"])
            .env_remove("LEAKHOUND_FINGERPRINT_KEY")
            .env("XDG_STATE_HOME", sb.path("state"))
            .output()
            .unwrap();
        let v: serde_json::Value =
            serde_json::from_str(String::from_utf8_lossy(&o.stdout).lines().next().unwrap())
                .unwrap();
        v["fingerprint"].as_str().unwrap().to_string()
    };
    let first = fp();
    assert_eq!(first, fp());
    let key = sb.path("state/leakhound/fingerprint.key");
    let mode = std::fs::metadata(&key).unwrap().permissions().mode();
    assert_eq!(mode & 0o077, 0, "only the owner reads the key: {mode:o}");
}

#[test]
fn env_dump_findings_are_on_the_files_own_lines() {
    let sb = Sandbox::new();
    let gh = fake_github(1080);
    sb.write(
        "dump.env",
        format!("# exported from the runtime\n\nHOME=/root\n\nPATH=/usr/bin\nGITHUB_TOKEN={gh}\n"),
    );
    let (_, secret) = fake_aws(1081);
    let inspect = format!(
        "[\n  {{\n    \"Id\": \"abc\",\n    \"Config\": {{\n      \"Hostname\": \"x\",\n      \"User\": \"\",\n      \"Tty\": false,\n      \"Env\": [\n        \"PATH=/usr/bin\",\n        \"LANG=C.UTF-8\",\n        \"AWS_SECRET_ACCESS_KEY={secret}\",\n        \"GH={gh}\"\n      ]\n    }}\n  }}\n]\n"
    );
    sb.write("inspect.json", &inspect);
    let r = sb.run(&["env", "dump.env", "--format", "jsonl"]);
    let f = r.jsonl();
    assert_eq!(f[0]["line"], 6, "{}", r.stdout);
    let r = sb.run(&["env", "inspect.json", "--format", "json"]);
    let doc = r.json();
    let lines: Vec<u64> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [11, 12], "{}", r.stdout);
    assert_eq!(doc["summary"]["bytes"], inspect.len() as u64);
}

#[test]
fn control_characters_in_paths_reach_no_terminal() {
    let sb = Sandbox::new();
    let gh = fake_github(1090);
    sb.write("evil\x1b[2Jname\nx.txt", format!("t = {gh}\n"));
    let r = sb.run(&["scan", "."]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(!r.stdout.contains('\x1b'), "{:?}", r.stdout);
    assert!(
        r.stdout.contains("evil\\u{1b}[2Jname\\nx.txt"),
        "{:?}",
        r.stdout
    );
}

#[test]
fn a_warning_names_its_path_once() {
    let sb = Sandbox::new();
    let r = sb.run(&["scan", "missing-dir"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let line = r
        .stderr
        .lines()
        .find(|l| l.contains("missing-dir"))
        .unwrap_or_else(|| panic!("{}", r.stderr));
    assert_eq!(line.matches("missing-dir").count(), 1, "{line}");
}
