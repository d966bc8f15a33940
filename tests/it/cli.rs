//! `leakhound scan` end to end: exit codes, formats, redaction, stdin, allowing, baselines,
//! output files, and bad input.

use crate::util::{fake_aws, fake_github, to_run, Sandbox};
use std::process::Stdio;

fn leaky(sb: &Sandbox, seed: u64) -> (String, String, String) {
    let (id, secret) = fake_aws(seed);
    let gh = fake_github(seed);
    sb.write(
        "app/settings.py",
        format!(
            "import os\nDEBUG = True\nAWS_ACCESS_KEY_ID = \"{id}\"\naws_secret_access_key = \"{secret}\"\nGITHUB = \"{gh}\"\n"
        ),
    );
    (id, secret, gh)
}

#[test]
fn clean_tree_exits_0() {
    let sb = Sandbox::new();
    sb.write(
        "src/main.py",
        "print('hello')\npassword = os.environ['PW']\n",
    );
    let r = sb.run(&["scan", "."]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("0 findings in 1 file"), "{}", r.stdout);
}

#[test]
fn findings_exit_1_with_locations() {
    let sb = Sandbox::new();
    let (id, _, _) = leaky(&sb, 1);
    let r = sb.run(&["scan", ".", "--format", "jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let f = r.jsonl();
    let rules: Vec<&str> = f.iter().map(|x| x["rule"].as_str().unwrap()).collect();
    assert_eq!(
        rules,
        ["aws.access-key-id", "aws.secret-access-key", "github.pat"]
    );
    assert_eq!(f[0]["path"], "app/settings.py");
    assert_eq!(f[0]["line"], 3);
    assert_eq!(f[0]["column"], 22);
    assert_eq!(f[0]["secret"], id.as_str(), "key ids are shown whole");
    assert_eq!(f[1]["line"], 4);
    assert_eq!(f[1]["column"], 26);
    for x in &f {
        assert_eq!(x["fingerprint"].as_str().unwrap().len(), 32);
    }
}

#[test]
fn fingerprints_stable_across_runs_and_paths() {
    let a = Sandbox::new();
    let b = Sandbox::new();
    leaky(&a, 2);
    leaky(&b, 2);
    std::fs::rename(b.path("app"), b.path("moved")).unwrap();
    let fa: Vec<_> = a.run(&["scan", "--format", "jsonl"]).jsonl();
    let fb: Vec<_> = b.run(&["scan", "--format", "jsonl"]).jsonl();
    let fp = |v: &Vec<serde_json::Value>| -> Vec<String> {
        v.iter()
            .map(|x| x["fingerprint"].as_str().unwrap().to_string())
            .collect()
    };
    // Two empty lists would be equal too: the three planted secrets must be there, each
    // with a fingerprint of its own.
    assert_eq!(fa.len(), 3, "{fa:#?}");
    let distinct: std::collections::HashSet<_> = fp(&fa).into_iter().collect();
    assert_eq!(distinct.len(), 3, "{fa:#?}");
    assert!(distinct.iter().all(|f| !f.is_empty()));
    assert_eq!(fp(&fa), fp(&fb));
    // The same run again gives the same fingerprints.
    assert_eq!(fp(&a.run(&["scan", "--format", "jsonl"]).jsonl()), fp(&fa));
}

#[test]
fn every_format_is_redacted_unless_asked() {
    let sb = Sandbox::new();
    let (id, secret, gh) = leaky(&sb, 3);
    for format in ["human", "json", "jsonl", "sarif"] {
        let r = sb.run(&["scan", ".", "--format", format]);
        assert_eq!(r.code, 1);
        // No piece of either, not only not the whole (a half-masked secret is a leak).
        for (out, what) in [(&r.stdout, "stdout"), (&r.stderr, "stderr")] {
            crate::util::assert_no_piece(out, &secret, &format!("{format} {what}, AWS secret"));
            crate::util::assert_no_piece(out, &gh, &format!("{format} {what}, GitHub token"));
        }
        assert!(r.stdout.contains(&id), "{format} should show the key id");
        let shown = sb.run(&["scan", ".", "--format", format, "--show-secrets"]);
        assert!(shown.stdout.contains(&secret), "{format} --show-secrets");
        assert!(shown.stdout.contains(&gh), "{format} --show-secrets");
    }
}

#[test]
fn json_and_sarif_shapes() {
    let sb = Sandbox::new();
    leaky(&sb, 4);
    let j = sb.run(&["scan", "--format", "json"]).json();
    assert_eq!(j["findings"].as_array().unwrap().len(), 3);
    assert_eq!(j["summary"]["files"], 1);
    assert_eq!(j["summary"]["findings"], 3);
    for key in ["rule", "path", "line", "column", "secret", "fingerprint"] {
        assert!(j["findings"][0].get(key).is_some(), "missing {key}");
    }
    let s = sb.run(&["scan", "--format", "sarif"]).json();
    assert_eq!(s["version"], "2.1.0");
    let run = &s["runs"][0];
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    for r in results {
        let idx = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[idx]["id"], r["ruleId"]);
        let loc = &r["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "app/settings.py");
        assert!(loc["region"]["startLine"].as_u64().unwrap() >= 3);
        assert!(loc["region"]["startColumn"].as_u64().unwrap() >= 1);
        assert_eq!(
            r["partialFingerprints"]["leakhound/v1"]
                .as_str()
                .unwrap()
                .len(),
            32
        );
    }
}

#[test]
fn stdin_is_scanned_with_dash() {
    let sb = Sandbox::new();
    let gh = fake_github(5);
    let r = sb.run_stdin(
        &["scan", "-", "--format", "jsonl"],
        Some(format!("x = {gh}\n").as_bytes()),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let f = r.jsonl();
    assert_eq!(f[0]["path"], "<stdin>");
    assert_eq!(f[0]["rule"], "github.pat");
    let clean = sb.run_stdin(&["scan", "-"], Some(b"nothing here\n"));
    assert_eq!(clean.code, 0);
}

#[test]
fn usage_errors_exit_2() {
    let sb = Sandbox::new();
    assert_eq!(sb.run(&["scan", "--format", "xml"]).code, 2);
    assert_eq!(sb.run(&["scan", "--no-such-flag"]).code, 2);
    assert_eq!(sb.run(&["frobnicate"]).code, 2);
    let missing = sb.run(&["scan", "does/not/exist"]);
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("does/not/exist"),
        "{}",
        missing.stderr
    );
    assert_eq!(sb.run(&["scan", "--max-file-size", "12Q"]).code, 2);
    assert_eq!(sb.run(&["--help"]).code, 0);
}

#[test]
fn malformed_config_exits_2_naming_the_line() {
    let sb = Sandbox::new();
    sb.write("cfg/lh.toml", "[allow]\npaths = [\"a\"\nregexes = 3\n");
    let r = sb.run(&["scan", ".", "--config", "cfg/lh.toml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("cfg/lh.toml"), "{}", r.stderr);
    assert!(r.stderr.contains("line"), "{}", r.stderr);
    sb.write("cfg/bad-regex.toml", "[allow]\nregexes = [\"(unclosed\"]\n");
    let r = sb.run(&["scan", ".", "--config", "cfg/bad-regex.toml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("allow.regexes"), "{}", r.stderr);
    sb.write("cfg/unknown.toml", "[allow]\npathz = []\n");
    assert_eq!(
        sb.run(&["scan", ".", "--config", "cfg/unknown.toml"]).code,
        2
    );
    assert_eq!(sb.run(&["scan", ".", "--config", "cfg/none.toml"]).code, 2);
}

#[test]
fn inline_allow_marker() {
    let sb = Sandbox::new();
    let gh = fake_github(6);
    let gh2 = fake_github(7);
    sb.write(
        "a.py",
        format!("t = \"{gh}\"  # leakhound:allow\nu = \"{gh2}\"\n"),
    );
    let f = sb.run(&["scan", "--format", "jsonl"]).jsonl();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["line"], 2);
}

#[test]
fn config_allowlists_and_disabled_rules() {
    let sb = Sandbox::new();
    let (id, secret) = fake_aws(8);
    let gh = fake_github(8);
    sb.write(
        "src/a.py",
        format!("k = \"{id}\"\naws_secret_access_key = \"{secret}\"\n"),
    );
    sb.write("tests/fixtures/b.py", format!("t = \"{gh}\"\n"));
    sb.write("src/c.py", format!("t = \"{gh}\"\n"));
    let base = sb
        .run(&["scan", "src", "tests", "--format", "jsonl"])
        .jsonl();
    assert_eq!(base.len(), 4);
    std::fs::create_dir(sb.path("ops")).unwrap();
    let cfg = |text: &str| {
        sb.write("ops/lh.toml", text);
        sb.run(&[
            "scan",
            "src",
            "tests",
            "--format",
            "jsonl",
            "--config",
            "ops/lh.toml",
        ])
        .jsonl()
    };
    let f = cfg("[allow]\npaths = [\"tests/**\"]\n");
    assert!(f
        .iter()
        .all(|x| !x["path"].as_str().unwrap().starts_with("tests/")));
    assert_eq!(f.len(), 3);
    let f = cfg(&format!("[allow]\nregexes = [\"^{}\"]\n", &gh[..12]));
    assert_eq!(f.len(), 2);
    let f = cfg(&format!(
        "[allow]\nstopwords = [\"{}\"]\n",
        secret[10..20].to_lowercase()
    ));
    assert_eq!(f.len(), 3);
    let f = cfg("[rules]\ndisable = [\"aws.*\"]\n");
    assert!(f
        .iter()
        .all(|x| !x["rule"].as_str().unwrap().starts_with("aws.")));
    assert_eq!(f.iter().filter(|x| x["rule"] == "github.pat").count(), 2);
}

#[test]
fn config_in_scanned_tree_is_not_loaded_implicitly() {
    let sb = Sandbox::new();
    let gh = fake_github(9);
    sb.write("a.py", format!("t = \"{gh}\"\n"));
    sb.write("leakhound.toml", "[allow]\npaths = [\"**\"]\n");
    let r = sb.run(&["scan", "."]);
    assert_eq!(r.code, 1, "a scanned tree must not allow its own secrets");
    assert!(r.stderr.contains("not loaded"), "{}", r.stderr);
    let r = sb.run(&["scan", ".", "--config", "leakhound.toml"]);
    assert_eq!(r.code, 0, "named explicitly, it applies");
    // Scanning a tree elsewhere, the operator's ./leakhound.toml applies.
    let other = Sandbox::new();
    other.write("x.py", format!("t = \"{gh}\"\n"));
    let r = sb.run(&["scan", other.dir.path().to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stdout);
}

#[test]
fn baseline_suppresses_known_findings_only() {
    let sb = Sandbox::new();
    leaky(&sb, 10);
    let w = sb.run(&["scan", "app", "--write-baseline", "baseline.json"]);
    assert_eq!(w.code, 1);
    let r = sb.run(&["scan", "app", "--baseline", "baseline.json"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("3 suppressed"), "{}", r.stdout);
    let gh = fake_github(11);
    sb.write("app/new.py", format!("t = \"{gh}\"\n"));
    let r = sb.run(&[
        "scan",
        "app",
        "--baseline",
        "baseline.json",
        "--format",
        "jsonl",
    ]);
    assert_eq!(r.code, 1);
    let f = r.jsonl();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["path"], "app/new.py");
    // A JSONL report works as a baseline too.
    let jl = sb.run(&["scan", "app", "--format", "jsonl", "-o", "all.jsonl"]);
    assert_eq!(jl.code, 1);
    assert_eq!(sb.run(&["scan", "app", "--baseline", "all.jsonl"]).code, 0);
    sb.write("broken.json", "{not json");
    assert_eq!(
        sb.run(&["scan", "app", "--baseline", "broken.json"]).code,
        2
    );
    // The baseline file itself is redacted.
    let text = std::fs::read_to_string(sb.path("baseline.json")).unwrap();
    assert!(!text.contains(&fake_github(10)));
}

#[test]
fn output_file_is_never_written_through_links_or_devices() {
    let sb = Sandbox::new();
    leaky(&sb, 12);
    let r = sb.run(&["scan", "app", "--format", "json", "-o", "out.json"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.is_empty());
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sb.path("out.json")).unwrap()).unwrap();
    assert_eq!(doc["findings"].as_array().unwrap().len(), 3);

    sb.write("target.txt", "keep me");
    std::os::unix::fs::symlink(sb.path("target.txt"), sb.path("link.json")).unwrap();
    let r = sb.run(&["scan", "app", "-o", "link.json"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        std::fs::read_to_string(sb.path("target.txt")).unwrap(),
        "keep me"
    );

    let fifo = sb.path("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let r = sb.run(&["scan", "app", "-o", "fifo"]);
    assert_eq!(r.code, 2, "{}", r.stderr);

    use std::os::unix::fs::PermissionsExt;
    let r = sb.run(&["scan", "app", "--show-secrets", "-o", "revealed.txt"]);
    assert_eq!(r.code, 1);
    let mode = std::fs::metadata(sb.path("revealed.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn identical_content_reported_for_every_path() {
    let sb = Sandbox::new();
    let gh = fake_github(13);
    let text = format!("line\ntoken = \"{gh}\"\n");
    sb.write("a/one.txt", &text);
    sb.write("b/two.txt", &text);
    let f = sb.run(&["scan", "--format", "jsonl"]).jsonl();
    let paths: Vec<&str> = f.iter().map(|x| x["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["a/one.txt", "b/two.txt"]);
    assert!(f.iter().all(|x| x["line"] == 2));
}

#[test]
fn ignore_files_hidden_files_and_binaries() {
    let sb = Sandbox::new();
    let gh = fake_github(14);
    sb.write(".gitignore", "ignored/\n");
    sb.write("ignored/a.txt", format!("{gh}\n"));
    sb.write(".hidden/creds", format!("{gh}\n"));
    let mut bin = b"\x7fELF\x00\x01\x02".to_vec();
    bin.extend_from_slice(format!(" {gh} ").as_bytes());
    sb.write("blob.bin", &bin);
    let paths = |args: &[&str]| -> Vec<String> {
        let mut a = vec!["scan", "--format", "jsonl"];
        a.extend_from_slice(args);
        let mut v: Vec<String> = sb
            .run(&a)
            .jsonl()
            .iter()
            .map(|x| x["path"].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(paths(&[]), [".hidden/creds"]);
    assert_eq!(paths(&["--no-ignore"]), [".hidden/creds", "ignored/a.txt"]);
    assert_eq!(paths(&["--binary"]), [".hidden/creds", "blob.bin"]);
    let human = sb.run(&["scan"]);
    assert!(
        human.stdout.contains("1 binary skipped"),
        "{}",
        human.stdout
    );
}

#[test]
fn size_limit_skips_and_counts() {
    let sb = Sandbox::new();
    let gh = fake_github(15);
    let mut big = "filler line of text\n".repeat(60_000);
    big.push_str(&format!("token {gh}\n"));
    sb.write("big.log", &big);
    let r = sb.run(&["scan", "--max-file-size", "1M"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("1 too large skipped"), "{}", r.stdout);
    let r = sb.run(&["scan", "--max-file-size", "0", "--format", "jsonl"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.jsonl()[0]["line"], 60_001);
}

#[test]
fn bad_input_is_reported_and_the_scan_goes_on() {
    let sb = Sandbox::new();
    let gh = fake_github(16);
    // Invalid UTF-8 around a secret, and a very long single line.
    let mut bytes = vec![0xff, 0xfe, b'a', 0xc3, b'\n', 0x80];
    bytes.extend_from_slice(format!(" {gh} ").as_bytes());
    bytes.extend(std::iter::repeat_n(b'z', 3 << 20));
    sb.write("weird.txt", &bytes);
    // A FIFO in the tree must not hang the walk; a symlink loop must not loop.
    assert!(std::process::Command::new("mkfifo")
        .arg(sb.path("pipe"))
        .status()
        .unwrap()
        .success());
    std::fs::create_dir(sb.path("d")).unwrap();
    std::os::unix::fs::symlink("..", sb.path("d/up")).unwrap();
    std::os::unix::fs::symlink("nowhere", sb.path("dangling")).unwrap();
    let r = sb.run(&["scan", "--format", "jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let f = r.jsonl();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0]["line"], 2);
    assert_eq!(
        f[0]["column"], 3,
        "columns count characters, invalid bytes as one each"
    );
    assert!(
        r.stderr.contains("pipe"),
        "the FIFO is reported: {}",
        r.stderr
    );
    let human = sb.run(&["scan"]);
    assert!(human.stdout.contains("1 warnings"), "{}", human.stdout);
}

#[test]
fn broken_pipe_exits_quietly() {
    let sb = Sandbox::new();
    for i in 0..200 {
        sb.write(
            &format!("f{i:03}.txt"),
            format!("t = \"{}\"\n", fake_github(100 + i)),
        );
    }
    let mut child = sb
        .cmd()
        .args(["scan", "--format", "jsonl"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    // Exactly the code of the findings (1), as if the reader had stayed: `scan | head` under
    // pipefail still fails on a secret. Not a signal (SIGPIPE), a panic (101) or an error (2).
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), None, "{:?}", out.status);
    let r = to_run(out);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    assert_eq!(r.code, 1);
}

#[test]
fn color_only_when_asked_or_on_a_terminal() {
    let sb = Sandbox::new();
    leaky(&sb, 17);
    assert!(
        !sb.run(&["scan"]).stdout.contains('\x1b'),
        "piped: no colour"
    );
    assert!(sb
        .run(&["scan", "--color", "always"])
        .stdout
        .contains("\x1b[33m"));
}

#[test]
fn large_file_scanned_in_chunks_matches_one_shot() {
    // Over 64 MiB, a file is read and scanned chunk by chunk; the findings must equal the
    // one-shot scan of the same bytes read from stdin, secrets on chunk edges included.
    let sb = Sandbox::new();
    let line = "a line of ordinary log text, nothing to see here at all\n";
    let mut text = String::with_capacity(70 << 20);
    let mut seed = 500;
    while text.len() < (70 << 20) {
        text.push_str(line);
        // Plant near the chunk edge region (64 MiB minus the overlaps) and elsewhere.
        let near_edge = text.len() > (64 << 20) - 70_000 && text.len() < (64 << 20) + 70_000;
        if near_edge && text.len().is_multiple_of(3) || text.len() % 1_000_003 < line.len() {
            text.push_str(&format!("k{} {}\n", seed, fake_github(seed)));
            seed += 1;
        }
    }
    text.push_str("no newline at the end, then a token ");
    text.push_str(&fake_github(9999));
    sb.write("big.log", &text);
    let key = |v: &serde_json::Value| {
        (
            v["line"].as_u64(),
            v["column"].as_u64(),
            v["start"].as_u64(),
            v["fingerprint"].clone(),
        )
    };
    let file: Vec<_> = sb
        .run(&[
            "scan",
            "big.log",
            "--max-file-size",
            "0",
            "--format",
            "jsonl",
        ])
        .jsonl()
        .iter()
        .map(key)
        .collect();
    let stdin: Vec<_> = sb
        .run_stdin(&["scan", "-", "--format", "jsonl"], Some(text.as_bytes()))
        .jsonl()
        .iter()
        .map(key)
        .collect();
    assert!(file.len() > 100, "{}", file.len());
    assert_eq!(file, stdin);
}

#[test]
fn completions_and_the_manual_come_from_the_one_definition() {
    let sb = Sandbox::new();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let r = sb.run(&["completions", shell]);
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        // Every subcommand and a flag of each kind of command are completed.
        for word in ["scan", "redact-notebook", "max-file-size", "idle-ms"] {
            assert!(r.stdout.contains(word), "{shell} completion lacks {word}");
        }
    }
    let r = sb.run(&["completions", "tcsh"]);
    assert_eq!(r.code, 2, "an unknown shell is a usage error");
    let r = sb.run(&["man"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with(".ie") || r.stdout.contains(".TH leakhound"));
    for section in [
        ".SH \"LEAKHOUND SCAN\"",
        ".SH \"LEAKHOUND GIT\"",
        "\\-\\-fail\\-on",
    ] {
        assert!(r.stdout.contains(section), "man page lacks {section}");
    }
}

#[test]
fn a_rule_naming_an_unknown_validator_is_refused() {
    let sb = Sandbox::new();
    let rule = |validator: &str| {
        format!(
            "[[rules]]\nid = \"acme.key\"\nname = \"Acme key\"\nkeywords = [\"acme_\"]\n\
             pattern = 'acme_(?P<secret>[a-z0-9]{{24}})'\nvalidator = {validator}\n\
             examples = [\"acme_q8w7e6r5t4y3u2i1o9p8a7s6\"]\n"
        )
    };
    sb.write("bad.toml", rule("{ name = \"acme\", part = \"key\" }"));
    let r = sb.run(&["rules", "check", "bad.toml"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("no validator \"acme\""), "{}", r.stderr);
    sb.write("part.toml", rule("{ name = \"aws\", part = \"password\" }"));
    let r = sb.run(&["scan", ".", "--rules", "part.toml"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("aws has no part \"password\""),
        "{}",
        r.stderr
    );
    sb.write("good.toml", rule("{ name = \"aws\", part = \"secret\" }"));
    let r = sb.run(&["rules", "check", "good.toml"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}
