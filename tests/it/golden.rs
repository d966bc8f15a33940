//! Golden output files for every format, with volatile fields masked. Regenerate after an
//! intended change with `UPDATE_GOLDEN=1 cargo test golden` (exactly `1`, and never where `CI`
//! is set: CI compares, and fails on a difference), and read the diff.

use crate::util::{fake_aws, fake_github, Sandbox};
use std::path::PathBuf;

fn fixture() -> Sandbox {
    let sb = Sandbox::new();
    let (id, secret) = fake_aws(900);
    let gh = fake_github(901);
    sb.write(
        "repo/deploy/env.sh",
        format!(
            "#!/bin/sh\nexport AWS_ACCESS_KEY_ID={id}\nexport AWS_SECRET_ACCESS_KEY={secret}\n"
        ),
    );
    sb.write(
        "repo/src/client.py",
        format!("import requests\n\nHEADERS = {{\"Authorization\": \"token {gh}\"}}  # ünïcode before\npassword = os.environ[\"PW\"]\n"),
    );
    sb.write(
        "repo/README.md",
        "# nothing to see\nAKIAIOSFODNN7EXAMPLE is the documented example key\n",
    );
    sb
}

fn mask(s: &str) -> String {
    let re = regex::Regex::new(r#"(in )\d+\.\d+s|("elapsed": )[0-9.]+"#).unwrap();
    re.replace_all(s, |c: &regex::Captures| match (c.get(1), c.get(2)) {
        (Some(p), _) => format!("{}X.XXs", p.as_str()),
        (_, Some(p)) => format!("{}0.0", p.as_str()),
        _ => unreachable!(),
    })
    .replace(env!("CARGO_PKG_VERSION"), "VERSION")
    // The rule set's id changes with every edit to a rule file; the golden files would too.
    .replace(
        &format!("\"rules_version\": \"{}\"", leakhound::rules::RULESET),
        "\"rules_version\": \"RULESET\"",
    )
}

/// Whether golden files may be rewritten: `UPDATE_GOLDEN=1` outside CI. Any other value is
/// an error rather than a quiet rewrite (or a quiet compare) that passes.
pub fn update_requested() -> bool {
    update_wanted(
        std::env::var_os("UPDATE_GOLDEN").as_deref(),
        std::env::var_os("CI").as_deref(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn update_wanted(
    update: Option<&std::ffi::OsStr>,
    ci: Option<&std::ffi::OsStr>,
) -> Result<bool, String> {
    match update.map(|v| v.to_str()) {
        None => Ok(false),
        Some(Some("1")) if ci.is_some_and(|v| !v.is_empty()) => Err(
            "UPDATE_GOLDEN=1 is refused where CI is set: CI compares golden files, it never \
             rewrites them"
                .into(),
        ),
        Some(Some("1")) => Ok(true),
        Some(other) => Err(format!(
            "UPDATE_GOLDEN={:?}: only UPDATE_GOLDEN=1 rewrites golden files (unset it to compare)",
            other.unwrap_or("(not UTF-8)")
        )),
    }
}

#[test]
fn golden_files_are_rewritten_only_on_an_explicit_request_outside_ci() {
    use std::ffi::OsStr;
    let v = |s: &'static str| Some(OsStr::new(s));
    assert_eq!(update_wanted(None, None), Ok(false));
    assert_eq!(update_wanted(None, v("true")), Ok(false));
    assert_eq!(update_wanted(v("1"), None), Ok(true));
    assert_eq!(update_wanted(v("1"), v("")), Ok(true));
    assert!(update_wanted(v("1"), v("true")).is_err());
    for not_one in ["0", "", "yes", "true", "false"] {
        assert!(update_wanted(v(not_one), None).is_err(), "{not_one:?}");
    }
}

#[test]
fn the_golden_test_fails_when_update_golden_is_anything_but_1() {
    // This test binary, running only the golden test, as a user would with a stray value.
    for (update, ci) in [("0", None), ("1", Some("true"))] {
        let mut c = std::process::Command::new(std::env::current_exe().unwrap());
        c.args(["golden::golden_outputs", "--exact", "--test-threads=1"])
            .env("UPDATE_GOLDEN", update)
            .env_remove("CI");
        if let Some(ci) = ci {
            c.env("CI", ci);
        }
        let out = c.output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            !out.status.success(),
            "UPDATE_GOLDEN={update} CI={ci:?} passed:\n{said}"
        );
        assert!(said.contains("UPDATE_GOLDEN"), "{said}");
    }
}

fn check(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if update_requested() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to create)",
            path.display()
        )
    });
    if expected != actual {
        let diff: Vec<String> = expected
            .lines()
            .zip(actual.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .take(10)
            .map(|(i, (a, b))| format!("line {}:\n  expected: {a}\n  actual:   {b}", i + 1))
            .collect();
        panic!(
            "{name} differs from the golden file ({} vs {} lines):\n{}",
            expected.lines().count(),
            actual.lines().count(),
            diff.join("\n")
        );
    }
}

#[test]
fn golden_outputs() {
    let sb = fixture();
    for (format, file) in [
        ("human", "scan.human.txt"),
        ("json", "scan.json"),
        ("jsonl", "scan.jsonl"),
        ("sarif", "scan.sarif"),
    ] {
        // A fixed fingerprint key: fingerprints are keyed, and the machine's own key differs.
        let out = sb
            .cmd()
            .args(["scan", "repo", "--format", format, "--color", "never"])
            .env("LEAKHOUND_FINGERPRINT_KEY", "golden-files-fingerprint-key")
            .output()
            .unwrap();
        let r = crate::util::to_run(out);
        assert_eq!(r.code, 1, "{format}: {}", r.stderr);
        check(file, &mask(&r.stdout));
    }
}
