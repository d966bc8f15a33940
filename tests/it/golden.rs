//! Golden output files for every format, with volatile fields masked. Regenerate after an
//! intended change with `UPDATE_GOLDEN=1 cargo test golden`, and read the diff.

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
}

fn check(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
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
        let r = sb.run(&["scan", "repo", "--format", format, "--color", "never"]);
        assert_eq!(r.code, 1, "{format}: {}", r.stderr);
        check(file, &mask(&r.stdout));
    }
}
