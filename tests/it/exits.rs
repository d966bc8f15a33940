//! Exit codes, messages and noise (issue 29): `--strict`, multi-line errors, a missing
//! command under `run`, leakhound's own reports in a scanned tree, and `--quiet`.

use crate::util::{fake_aws, fake_github, Sandbox};

fn mkfifo(p: &std::path::Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only reads it.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// A tree with one clean file and one input that cannot be read (a FIFO: unreadable as a
/// file even to root, which reads a mode-000 file anyway).
fn tree_with_an_unreadable_file() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("src/main.py", "print('hello')\n");
    mkfifo(&sb.path("src/pipe"));
    sb
}

#[test]
fn strict_fails_a_run_that_could_not_read_a_file_and_the_summary_always_counts_them() {
    let sb = tree_with_an_unreadable_file();
    let lax = sb.run(&["scan", "."]);
    assert_eq!(lax.code, 0, "{}", lax.stderr);
    assert!(
        lax.stdout.contains(", 1 could not be read"),
        "{}",
        lax.stdout
    );
    let strict = sb.run(&["scan", ".", "--strict"]);
    assert_eq!(strict.code, 2, "{}", strict.stderr);
    assert!(
        strict.stdout.contains(", 1 could not be read"),
        "{}",
        strict.stdout
    );
    let json = sb.run(&["scan", ".", "--strict", "--format", "json"]);
    assert_eq!(json.code, 2, "{}", json.stderr);
    assert_eq!(json.json()["summary"]["skipped_unreadable"], 1);
    // Findings do not hide it: 2 wins over 1.
    sb.write("src/token.txt", format!("t = {}\n", fake_github(2901)));
    assert_eq!(sb.run(&["scan", ".", "--strict"]).code, 2);
    assert_eq!(sb.run(&["scan", "."]).code, 1);
    // And a tree read whole passes.
    std::fs::remove_file(sb.path("src/pipe")).unwrap();
    std::fs::remove_file(sb.path("src/token.txt")).unwrap();
    let clean = sb.run(&["scan", ".", "--strict"]);
    assert_eq!(clean.code, 0, "{}", clean.stderr);
    assert!(
        !clean.stdout.contains("could not be read"),
        "{}",
        clean.stdout
    );
}

/// A file that cannot be read (a baseline, a config's rule file) is named once with its
/// reason once: the reason was both in the message and in the error's chain.
#[test]
fn a_file_that_cannot_be_read_is_named_with_its_reason_once() {
    let sb = Sandbox::new();
    sb.write("a.txt", "x\n");
    sb.write("cfg.toml", "[rules]\nfiles = [\"nope.toml\"]\n");
    for args in [
        &["scan", "a.txt", "--baseline", "missing.json"][..],
        &["scan", "a.txt", "--config", "cfg.toml"][..],
    ] {
        let r = sb.run(args);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert_eq!(r.stderr.matches("No such file").count(), 1, "{}", r.stderr);
        assert!(
            r.stderr.contains(": cannot read: No such file"),
            "{}",
            r.stderr
        );
    }
}

#[test]
fn a_regex_error_is_printed_on_real_lines() {
    let sb = Sandbox::new();
    sb.write("cfg/bad-regex.toml", "[allow]\nregexes = [\"(unclosed\"]\n");
    let r = sb.run(&["scan", ".", "--config", "cfg/bad-regex.toml"]);
    assert_eq!(r.code, 2);
    assert!(!r.stderr.contains("\\n"), "a literal \\n: {}", r.stderr);
    // One line: where (file, field, column) and the regex crate's reason, not its quote of
    // the pattern, which may be a secret (an allow list's literal value).
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(
        lines[0].contains("cfg/bad-regex.toml: allow.regexes: regex parse error at column 1")
            && lines[0].contains("unclosed group"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("(unclosed"), "{}", r.stderr);
    // A control character other than a newline is still escaped, not sent to the terminal.
    sb.write("cfg/esc\u{1b}[31m.toml", "[allow]\nregexes = [\"(\"]\n");
    let r = sb.run(&["scan", ".", "--config", "cfg/esc\u{1b}[31m.toml"]);
    assert_eq!(r.code, 2);
    assert!(!r.stderr.contains('\u{1b}'), "{:?}", r.stderr);
}

#[test]
fn run_exits_127_for_a_missing_command_and_126_for_one_that_cannot_run() {
    let sb = Sandbox::new();
    let r = sb.run(&["run", "--", "leakhound-test-no-such-command"]);
    assert_eq!(r.code, 127, "{}", r.stderr);
    assert_eq!(
        r.stderr.trim(),
        "leakhound: error: leakhound-test-no-such-command: command not found"
    );
    // A shell's `NAME=value cmd` given as the command is its name: masked when it is said.
    let token = fake_github(1210);
    let r = sb.run(&["run", "--", &format!("GITHUB_TOKEN={token}"), "python3"]);
    assert_eq!(r.code, 127, "{}", r.stderr);
    assert_eq!(
        r.stderr.trim(),
        "leakhound: error: GITHUB_TOKEN=[REDACTED:github.pat]: command not found"
    );
    sb.write("not-executable.sh", "#!/bin/sh\necho hi\n");
    let r = sb.run(&["run", "--", "./not-executable.sh"]);
    assert_eq!(r.code, 126, "{}", r.stderr);
    assert!(r.stderr.contains("permission denied"), "{}", r.stderr);
    // A command that runs keeps its own code.
    let r = sb.run(&["run", "--", "sh", "-c", "exit 127"]);
    assert_eq!(r.code, 127);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}

/// Every format leakhound writes, written into the scanned tree, is not flagged on the next
/// scan for what it shows in full (a key id); one written with --show-secrets still is.
#[test]
fn leakhounds_own_reports_in_the_tree_are_not_flagged_again_unless_they_hold_secrets() {
    let sb = Sandbox::new();
    let (id, secret) = fake_aws(2902);
    sb.write(
        "app/settings.py",
        format!("AWS_ACCESS_KEY_ID = \"{id}\"\naws_secret_access_key = \"{secret}\"\n"),
    );
    for (format, name) in [
        ("human", "reports/scan.txt"),
        ("json", "reports/scan.json"),
        ("jsonl", "reports/scan.jsonl"),
        ("sarif", "reports/scan.sarif"),
    ] {
        std::fs::create_dir_all(sb.path("reports")).unwrap();
        let r = sb.run(&["scan", "app", "--format", format, "-o", name]);
        assert_eq!(r.code, 1, "{}", r.stderr);
        let written = std::fs::read_to_string(sb.path(name)).unwrap();
        assert!(
            written.contains(&id),
            "{format}: the report shows the key id"
        );
    }
    let again = sb.run(&["scan", ".", "--format", "jsonl"]);
    assert_eq!(again.code, 1, "{}", again.stderr);
    let paths: Vec<String> = again
        .jsonl()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        paths,
        ["app/settings.py", "app/settings.py"],
        "{}",
        again.stdout
    );
    // Renamed, still recognised: by content, not by name.
    std::fs::rename(sb.path("reports/scan.json"), sb.path("reports/notes.txt")).unwrap();
    let renamed = sb.run(&["scan", "reports", "--format", "jsonl"]);
    assert_eq!(renamed.code, 0, "{}", renamed.stdout);
    // A revealed report holds the secret itself: that is a leak, and is flagged.
    let r = sb.run(&[
        "scan",
        "app",
        "--format",
        "json",
        "--show-secrets",
        "-o",
        "reports/full.json",
    ]);
    assert_eq!(r.code, 1);
    let full = sb.run(&["scan", "reports", "--format", "jsonl"]);
    assert_eq!(full.code, 1, "{}", full.stdout);
    let rules: Vec<String> = full
        .jsonl()
        .iter()
        .map(|f| {
            format!(
                "{} {}",
                f["path"].as_str().unwrap(),
                f["rule"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        rules.contains(&"reports/full.json aws.secret-access-key".to_string()),
        "{rules:?}"
    );
}

#[test]
fn quiet_silences_warnings_and_notes_but_not_the_report_the_code_or_errors() {
    let sb = tree_with_an_unreadable_file();
    let loud = sb.run(&["scan", "."]);
    assert!(
        loud.stderr.contains("leakhound: warning: "),
        "{}",
        loud.stderr
    );
    for args in [
        &["scan", ".", "--quiet"][..],
        &["--quiet", "scan", "."],
        &["-q", "scan", "."],
    ] {
        let quiet = sb.run(args);
        assert_eq!(quiet.code, loud.code, "{args:?}");
        assert_eq!(quiet.stderr, "", "{args:?}");
        // The summary line's duration differs from run to run; the rest does not.
        let head = |s: &str| s.split(" in ").take(2).collect::<Vec<_>>().join(" in ");
        assert_eq!(head(&quiet.stdout), head(&loud.stdout), "{args:?}");
        assert!(
            quiet.stdout.contains("1 could not be read"),
            "{}",
            quiet.stdout
        );
    }
    // An error is still said.
    let err = sb.run(&["scan", ".", "--quiet", "--config", "missing.toml"]);
    assert_eq!(err.code, 2);
    assert!(err.stderr.contains("leakhound: error: "), "{}", err.stderr);
}
