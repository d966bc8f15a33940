//! `--shard K/N`, `--targets` and `report merge --shards` (issue 16): for a directory tree, a
//! git history and OCI images, N shard runs started side by side and merged give the report
//! one run gives, byte for byte but for the time taken; every blob is scanned by one shard
//! (their `--list-scanned` lists are disjoint and together the whole run's).

use crate::git::{git_in, Repo};
use crate::image::{image, index};
use crate::util::{fake_aws, fake_github, Sandbox};
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// One key for every run: shards must fingerprint alike to merge.
pub(crate) const KEY: &str = "shard-test-fingerprint-key-0123456789";

pub(crate) fn lh(sb: &Sandbox) -> Command {
    lh_in(sb.dir.path())
}

/// leakhound in `dir`, with the shared fingerprint key, git's user config and the
/// schedulers' variables out of the way.
pub(crate) fn lh_in(dir: &Path) -> Command {
    let mut c = Command::new(crate::util::bin());
    c.current_dir(dir)
        .env("LEAKHOUND_FINGERPRINT_KEY", KEY)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("CI_NODE_INDEX")
        .env_remove("CI_NODE_TOTAL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

fn finish(c: Child, what: &str) -> i32 {
    let o = c.wait_with_output().unwrap();
    let code = o.status.code().unwrap_or(-1);
    assert!(
        code == 0 || code == 1,
        "{what}: exit {code}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    code
}

/// The time taken is the one thing two runs of the same scan do not share.
fn normalised(report: &str) -> String {
    let mut v: Value = serde_json::from_str(report).unwrap();
    v["summary"]["elapsed"] = Value::from(0);
    serde_json::to_string_pretty(&v).unwrap()
}

/// `leakhound ARGS` whole, then as N shards started at once and merged, for each N: each
/// merge must equal the whole run's report (JSON, and JSONL and SARIF from the same shard
/// reports),
/// and the shards' scanned counts must add up to the whole run's. Returns the whole run's
/// report and each N's shard reports.
fn shards_equal_whole(sb: &Sandbox, args: &[&str], ns: &[u64]) -> (Value, Vec<Vec<Value>>) {
    shards_equal_whole_with(sb, args, ns, &|_| {})
}

/// [`shards_equal_whole`], each shard's command (not the whole run's) also given what
/// `shard` adds: a flag, an environment.
pub(crate) fn shards_equal_whole_with(
    sb: &Sandbox,
    args: &[&str],
    ns: &[u64],
    shard: &dyn Fn(&mut Command),
) -> (Value, Vec<Vec<Value>>) {
    let out = |name: &str| sb.path(name).display().to_string();
    let whole = lh(sb)
        .args(args)
        .args(["--format", "json", "-o", &out("whole.json")])
        .args(["--list-scanned", &out("whole.list")])
        .spawn()
        .unwrap();
    let code = finish(whole, "the whole run");
    for format in ["jsonl", "sarif"] {
        let other = lh(sb)
            .args(args)
            .args(["--format", format, "-o", &out(&format!("whole.{format}"))])
            .spawn()
            .unwrap();
        finish(other, &format!("the whole run, {format}"));
    }
    let whole = std::fs::read_to_string(sb.path("whole.json")).unwrap();
    let whole_v: Value = serde_json::from_str(&whole).unwrap();
    assert!(
        whole_v.get("shard").is_none(),
        "a whole run has no shard notes"
    );
    let mut all = Vec::new();
    for &n in ns {
        // Side by side, as a scheduler starts them.
        let children: Vec<Child> = (0..n)
            .map(|k| {
                let mut c = lh(sb);
                c.args(args)
                    .args(["--shard", &format!("{k}/{n}"), "--format", "json"])
                    .args(["-o", &out(&format!("s{k}of{n}.json"))])
                    .args(["--list-scanned", &out(&format!("s{k}of{n}.list"))]);
                shard(&mut c);
                c.spawn().unwrap()
            })
            .collect();
        for (k, c) in children.into_iter().enumerate() {
            finish(c, &format!("shard {k}/{n}"));
        }
        // Given in reverse: the merge must not depend on the order of its inputs.
        let reports: Vec<String> = (0..n)
            .rev()
            .map(|k| out(&format!("s{k}of{n}.json")))
            .collect();
        let shards: Vec<Value> = reports
            .iter()
            .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
            .collect();
        for s in &shards {
            // One shard of one is the whole run, and is reported as one.
            let named = if n == 1 { Value::Null } else { Value::from(n) };
            assert_eq!(s["shard"]["total"], named, "each shard names itself");
        }
        // Every blob once: no shard scans what another does, none is left out. As sets: each
        // finding's place (its blob's provenance, position and rule) in exactly one shard,
        // and together the whole run's; a shard that scanned one blob twice and missed
        // another would add up to the same count.
        let place = |f: &Value| {
            // Whether a later layer deletes the file is learnt at the merge, from every
            // shard's whiteouts: not part of where the finding is.
            let mut at = f["provenance"].clone();
            if let Some(p) = at.as_object_mut() {
                p.remove("deleted");
            }
            format!("{at} {} {} {}", f["start"], f["end"], f["rule"])
        };
        let mut owner: std::collections::BTreeMap<String, usize> = Default::default();
        for (k, s) in shards.iter().enumerate() {
            for f in findings(s) {
                if let Some(other) = owner.insert(place(f), k).filter(|&o| o != k) {
                    panic!("{n} shards: {} is in shards {other} and {k}", place(f));
                }
            }
        }
        let want: std::collections::BTreeSet<String> =
            findings(&whole_v).iter().map(place).collect();
        let got: std::collections::BTreeSet<String> = owner.into_keys().collect();
        assert_eq!(
            got, want,
            "{n} shards: the shards' findings are not the whole run's"
        );
        // Every unit once, findings or not: the shards' lists of what they covered are
        // pairwise disjoint and together the whole run's, line for line (a unit scanned
        // twice, by one shard or two, is a line too many; one missed, a line short).
        let lists: Vec<Vec<String>> = (0..n)
            .map(|k| {
                listed(
                    sb,
                    &format!("s{k}of{n}.list"),
                    &shards[(n - 1 - k) as usize],
                )
            })
            .collect();
        let mut owner: std::collections::BTreeMap<&str, usize> = Default::default();
        for (k, list) in lists.iter().enumerate() {
            for unit in list {
                if let Some(other) = owner.insert(unit, k) {
                    panic!("{n} shards: {unit:?} is listed by shards {other} and {k}");
                }
            }
        }
        let mut union: Vec<&String> = lists.iter().flatten().collect();
        union.sort();
        let whole_list = listed(sb, "whole.list", &whole_v);
        assert_eq!(
            union,
            whole_list.iter().collect::<Vec<_>>(),
            "{n} shards: the units the shards covered are not the whole run's"
        );
        for format in ["json", "jsonl", "sarif"] {
            let whole_file = format!("whole.{format}");
            let merged = out(&format!("merged{n}.{format}"));
            let m = lh(sb)
                .args([
                    "report", "merge", "--shards", "--format", format, "-o", &merged,
                ])
                .args(&reports)
                .spawn()
                .unwrap();
            assert_eq!(
                finish(m, "the merge"),
                code,
                "the merge exits as the whole run"
            );
            let merged = std::fs::read_to_string(&merged).unwrap();
            let want = std::fs::read_to_string(sb.path(&whole_file)).unwrap();
            let (merged, want) = match format {
                "json" => (normalised(&merged), normalised(&want)),
                _ => (merged, want),
            };
            if let Some(at) = merged.lines().zip(want.lines()).position(|(a, b)| a != b) {
                let around = |t: &str| {
                    t.lines()
                        .skip(at.saturating_sub(8))
                        .take(12)
                        .collect::<Vec<_>>()
                        .join("\n")
                };
                panic!(
                    "{n} shards, {format}: line {at} differs\nmerged:\n{}\nwhole:\n{}",
                    around(&merged),
                    around(&want)
                );
            }
            assert_eq!(merged.len(), want.len(), "{n} shards, {format}");
        }
        all.push(shards);
    }
    (whole_v, all)
}

/// The lines of a `--list-scanned` file, checked against the report of the same run: sorted,
/// each unit once, and as many scanned (no marker) as the summary counts files.
fn listed(sb: &Sandbox, name: &str, report: &Value) -> Vec<String> {
    let text = std::fs::read_to_string(sb.path(name)).unwrap();
    let lines: Vec<String> = text.lines().map(String::from).collect();
    let mut sorted = lines.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(lines, sorted, "{name}: not sorted, or a unit listed twice");
    let scanned = lines.iter().filter(|l| !l.contains('\t')).count() as u64;
    assert_eq!(
        Some(scanned),
        report["summary"]["files"].as_u64(),
        "{name}: the list's scanned units are not the summary's count"
    );
    lines
}

fn findings(report: &Value) -> &Vec<Value> {
    report["findings"].as_array().unwrap()
}

#[test]
fn a_directory_tree_in_shards_merges_to_the_whole_run() {
    let sb = Sandbox::new();
    for i in 0..60u64 {
        let (id, secret) = fake_aws(1000 + i);
        sb.write(
            &format!("tree/svc{}/mod{i}.py", i % 7),
            format!("# module {i}\nAWS_ACCESS_KEY_ID = \"{id}\"\nAWS_SECRET_ACCESS_KEY = \"{secret}\"\n"),
        );
        sb.write(
            &format!("tree/docs/note{i}.md"),
            format!("nothing secret in note {i}\n"),
        );
    }
    let cell = |t: &str| {
        format!(r#"{{"cell_type":"code","metadata":{{}},"outputs":[],"source":["{t}\n"]}}"#)
    };
    sb.write(
        "tree/nb/explore.ipynb",
        format!(
            r#"{{"cells":[{},{}],"metadata":{{}},"nbformat":4,"nbformat_minor":5}}"#,
            cell(&fake_github(7)),
            cell(&fake_github(8))
        ),
    );
    sb.write(
        "tree/dist/bundle.zip",
        crate::archive::zip_of(&[(
            "conf/.env",
            format!("GH_TOKEN={}\n", fake_github(9)).as_bytes(),
        )]),
    );
    sb.write("tree/.env", format!("GITHUB_TOKEN={}\n", fake_github(10)));
    // What is skipped is counted once, by one shard: binary, ignored, too large.
    sb.write("tree/bin/blob.dat", b"\x00\x01\x02binary\x00".repeat(10));
    sb.write("tree/.gitignore", "build/\n");
    sb.write("tree/build/out.txt", "generated\n");
    sb.write("tree/big/huge.log", "x".repeat(300 << 10));
    let (whole, _) = shards_equal_whole(
        &sb,
        &["scan", "tree", "--max-file-size", "256K"],
        &[1, 3, 8],
    );
    let s = &whole["summary"];
    assert!(findings(&whole).len() >= 120, "{s}");
    assert_eq!(
        (s["skipped_binary"].as_u64(), s["skipped_large"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(s["skipped_ignored"], 1);
    let nb = findings(&whole)
        .iter()
        .filter(|f| f["path"] == "tree/nb/explore.ipynb");
    assert_eq!(nb.count(), 2);
}

#[test]
fn a_git_history_in_shards_merges_to_the_whole_run() {
    let sb = Sandbox::new();
    let dir = sb.path("repo");
    let truths = crate::history::generate(&dir, 120, 11).unwrap();
    assert!(truths.len() > 10);
    // One path whose token two commits replace in place: a tie on path, position and rule
    // that only the rest of the place (the blob, the commit) orders.
    for seed in [500, 501] {
        std::fs::write(
            dir.join("deploy.cfg"),
            format!("TOKEN = {}\n", fake_github(seed)),
        )
        .unwrap();
        git_in(&dir, &["add", "deploy.cfg"]);
        git_in(&dir, &["commit", "-q", "-m", "rotate"]);
    }
    let repo = dir.display().to_string();
    let (whole, _) = shards_equal_whole(&sb, &["git", &repo], &[1, 3, 8]);
    assert_eq!(findings(&whole).len(), truths.len() + 2);
    let tied: Vec<&Value> = findings(&whole)
        .iter()
        .filter(|f| f["path"] == "deploy.cfg")
        .collect();
    assert_eq!(tied.len(), 2);
    assert_eq!(
        (&tied[0]["start"], &tied[0]["rule"]),
        (&tied[1]["start"], &tied[1]["rule"])
    );
}

#[test]
fn images_in_shards_merge_to_the_whole_run_with_deletions_across_shards() {
    let sb = Sandbox::new();
    let dir = sb.path("layout");
    let gh = |seed| format!("GITHUB_TOKEN={}\n", fake_github(seed)).into_bytes();
    let base = vec![("app/.env", gh(60)), ("etc/app/token.txt", gh(61))];
    let mid = vec![("srv/run.sh", gh(62))];
    let top = vec![("app/.wh..env", Vec::new()), ("srv/other.sh", gh(63))];
    let other = vec![("opt/b.env", gh(64))];
    let (id, secret) = fake_aws(65);
    let env = [
        format!("AWS_ACCESS_KEY_ID={id}"),
        format!("AWS_SECRET_ACCESS_KEY={secret}"),
    ];
    let (a, a_layers) = image(&dir, &[base.clone(), mid, top], &env, &[], "amd64");
    // Image b shares the bottom layer, where nothing deletes the file.
    let (b, b_layers) = image(&dir, &[base, other], &[], &[], "amd64");
    assert_eq!(a_layers[0], b_layers[0]);
    index(&dir, &[("a", a), ("b", b)]);
    let refs = [
        format!("oci:{}:a", dir.display()),
        format!("oci:{}:b", dir.display()),
    ];
    let (whole, runs) = shards_equal_whole(&sb, &["image", &refs[0], &refs[1]], &[1, 3, 8]);
    let env_file: Vec<&Value> = findings(&whole)
        .iter()
        .filter(|f| f["provenance"]["path"] == "/app/.env")
        .collect();
    assert_eq!(env_file.len(), 2, "the shared layer's file, once per image");
    let deleted: Vec<bool> = env_file
        .iter()
        .map(|f| f["provenance"]["deleted"].as_bool().unwrap())
        .collect();
    assert_eq!(
        deleted.iter().filter(|d| **d).count(),
        1,
        "deleted in a only: {deleted:?}"
    );
    // The deletion crossed shards at least once: the layer with the file and the one that
    // deletes it were read by different shards, and only the merge knew.
    let owner = |shards: &[Value], layer: &str| {
        shards
            .iter()
            .position(|s| s["shard"]["whiteouts"].get(layer).is_some())
            .unwrap()
    };
    assert!(
        runs.iter()
            .filter(|shards| shards.len() > 1)
            .any(|shards| owner(shards, &a_layers[0]) != owner(shards, &a_layers[2])),
        "no shard count split the deleting layer from the deleted file"
    );
}

/// `n` env files under `t/`, a token in each.
fn env_files(sb: &Sandbox, n: u64, seed: u64) {
    for i in 0..n {
        let token = fake_github(seed + i);
        sb.write(&format!("t/f{i}.env"), format!("GITHUB_TOKEN={token}\n"));
    }
}

#[test]
fn auto_takes_the_index_from_the_scheduler() {
    let sb = Sandbox::new();
    env_files(&sb, 20, 200);
    let run = |envs: &[(&str, &str)], shard: &str, out: &str| {
        let mut c = lh(&sb);
        c.args(["scan", "t", "--shard", shard, "--format", "json", "-o", out]);
        for (k, v) in envs {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    // A Kubernetes Indexed Job's pods.
    for k in 0..3 {
        let o = run(
            &[("JOB_COMPLETION_INDEX", &k.to_string())],
            "auto/3",
            &format!("k{k}.json"),
        );
        assert!(o.status.code() == Some(1) || o.status.code() == Some(0));
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(sb.path(&format!("k{k}.json"))).unwrap())
                .unwrap();
        assert_eq!(
            (v["shard"]["index"].as_u64(), v["shard"]["total"].as_u64()),
            (Some(k), Some(3))
        );
    }
    let merged = lh(&sb)
        .args([
            "report", "merge", "--shards", "k0.json", "k1.json", "k2.json", "--format", "json",
        ])
        .output()
        .unwrap();
    assert_eq!(merged.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&merged.stdout).unwrap();
    assert_eq!(findings(&v).len(), 20);
    // GitLab counts from 1 and gives the total.
    run(
        &[("CI_NODE_INDEX", "2"), ("CI_NODE_TOTAL", "2")],
        "auto",
        "g.json",
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(sb.path("g.json")).unwrap()).unwrap();
    assert_eq!(
        (v["shard"]["index"].as_u64(), v["shard"]["total"].as_u64()),
        (Some(1), Some(2))
    );
    // No index anywhere: a clear error, nothing scanned.
    let o = run(&[], "auto/3", "none.json");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("JOB_COMPLETION_INDEX"));
    let o = run(&[], "3/3", "none.json");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_merge_refuses_missing_doubled_or_foreign_shards() {
    let sb = Sandbox::new();
    env_files(&sb, 12, 300);
    let shard = |spec: &str, out: &str, key: &str| {
        let o = lh(&sb)
            .env("LEAKHOUND_FINGERPRINT_KEY", key)
            .args(["scan", "t", "--shard", spec, "--format", "json", "-o", out])
            .output()
            .unwrap();
        assert!(o.status.code() == Some(1) || o.status.code() == Some(0));
    };
    shard("0/3", "a0.json", KEY);
    shard("1/3", "a1.json", KEY);
    shard("2/3", "a2.json", KEY);
    shard("1/2", "b1.json", KEY);
    shard("2/3", "c2.json", "another-key-for-fingerprints-000");
    let merge = |files: &[&str]| {
        let o = lh(&sb)
            .args(["report", "merge", "--shards", "--format", "json"])
            .args(files)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, err) = merge(&["a0.json", "a2.json"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("shard(s) 1 of 3 missing"), "{err}");
    let (code, err) = merge(&["a0.json", "a1.json", "a1.json", "a2.json"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("given twice"), "{err}");
    let (code, err) = merge(&["a0.json", "b1.json", "a2.json"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("shard count"), "{err}");
    let (code, err) = merge(&["a0.json", "a1.json", "c2.json"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("fingerprint key"), "{err}");
    assert_eq!(merge(&["a0.json", "a1.json", "a2.json"]).0, Some(1));
}

#[test]
fn target_lists_name_paths_repositories_and_images() {
    let sb = Sandbox::new();
    sb.write("one/a.env", format!("GITHUB_TOKEN={}\n", fake_github(400)));
    sb.write("two/b.env", format!("GITHUB_TOKEN={}\n", fake_github(401)));
    sb.write("targets.txt", "# the org's trees\none\n\ntwo\n");
    let report = |args: &[&str]| -> Value {
        let o = lh(&sb)
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let mut v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["summary"]["elapsed"] = Value::from(0);
        v
    };
    assert_eq!(
        report(&["scan", "--targets", "targets.txt"]),
        report(&["scan", "one", "two"])
    );
    // Repositories: each one's paths under its line; a listed one that is no repository is
    // an error for the run (exit 2) that does not stop the others.
    let (r1, r2) = (Repo::new(), Repo::new());
    r1.commit(
        &[("a.env", &format!("GITHUB_TOKEN={}\n", fake_github(402)))],
        "a",
    );
    r2.commit(
        &[("a.env", &format!("GITHUB_TOKEN={}\n", fake_github(403)))],
        "b",
    );
    let list = format!("{}\n{}\n", r1.root.display(), r2.root.display());
    sb.write("repos.txt", &list);
    let v = report(&["git", "--targets", "repos.txt"]);
    let mut paths: Vec<String> = findings(&v)
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    paths.sort();
    let mut want = [&r1.root, &r2.root].map(|r| format!("{}/a.env", r.display()));
    want.sort();
    assert_eq!(paths, want);
    sb.write(
        "repos2.txt",
        format!("{list}{}\n", sb.path("one").display()),
    );
    let o = lh(&sb)
        .args(["git", "--targets", "repos2.txt", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(findings(&v).len(), 2, "the other repositories are scanned");
    assert_eq!(v["summary"]["failed_inputs"], 1);
    // Images.
    let dir = sb.path("layout");
    let (a, _) = image(
        &dir,
        &[vec![(
            "x.env",
            format!("GITHUB_TOKEN={}\n", fake_github(404)).into_bytes(),
        )]],
        &[],
        &[],
        "amd64",
    );
    index(&dir, &[("a", a)]);
    sb.write("images.txt", format!("oci:{}:a\n", dir.display()));
    let v = report(&["image", "--targets", "images.txt"]);
    assert_eq!(findings(&v).len(), 1);
}
