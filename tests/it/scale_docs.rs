//! docs/scale.md's recipes (issue 16), as far as this machine allows: each file is in the page
//! word for word, valid for its scheduler (Kubernetes' published schemas through
//! `kubernetes-validate`; GitHub Actions' and GitLab CI's through `check-jsonschema`), and
//! the commands each runs, run here as the scheduler would run them (its index variables
//! set, the volumes' paths moved into a sandbox), merge to what one whole run reports.

use crate::git::{git_in, Repo};
use crate::shard::{lh_in, KEY};
use crate::util::{bin, fake_github, require_tool, Sandbox};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

fn recipe(name: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join("docs/scale").join(name)).unwrap()
}

/// The YAML documents of a recipe, as JSON (PyYAML comes with kubernetes-validate).
fn yaml(name: &str) -> Vec<Value> {
    require_tool("kubernetes-validate");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let o = Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))",
        ])
        .arg(root.join("docs/scale").join(name))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn the_page_shows_each_recipe_as_it_is() {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scale.md"))
        .unwrap();
    for f in [
        "k8s-indexed-job.yaml",
        "github-actions.yml",
        "gitlab-ci.yml",
    ] {
        assert!(
            page.contains(&recipe(f)),
            "docs/scale.md does not show docs/scale/{f} as it is"
        );
    }
}

#[test]
fn the_recipes_are_valid_for_their_schedulers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scale");
    require_tool("kubernetes-validate");
    require_tool("check-jsonschema");
    let check = |c: &mut Command| {
        let o = c.output().unwrap();
        assert!(
            o.status.success(),
            "{:?}: {}{}",
            c,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    // Through kubernetes-validate's library rather than its command, whose text would have
    // to be read: `validate` raises on an invalid object and on a kind it has no schema for
    // (which the command only warns about), and returns the schema version it used.
    let script = "import json, sys, yaml, kubernetes_validate as kv\n\
                  docs = list(yaml.safe_load_all(open(sys.argv[1])))\n\
                  print(json.dumps([[d['kind'], kv.validate(d, kv.latest_version(), strict=True)] for d in docs]))";
    let out = check(
        Command::new("python3")
            .args(["-c", script])
            .arg(root.join("k8s-indexed-job.yaml")),
    );
    let checked: Vec<(String, String)> = serde_json::from_str(&out).unwrap();
    // Every object was checked, none skipped for want of a schema.
    let kinds: Vec<&str> = checked.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        ["ConfigMap", "PersistentVolumeClaim", "Job", "CronJob"],
        "{out}"
    );
    assert!(checked.iter().all(|(_, v)| !v.is_empty()), "{out}");
    for (schema, file) in [
        ("vendor.github-workflows", "github-actions.yml"),
        ("vendor.gitlab-ci", "gitlab-ci.yml"),
    ] {
        check(
            Command::new("check-jsonschema")
                .args(["--builtin-schema", schema])
                .arg(root.join(file)),
        );
    }
}

/// Run `scripts` (each with its environment) side by side with `sh -c` in `dir`, leakhound on
/// PATH, then `merge`; return the merge's exit code.
fn run_as_scheduled(dir: &Path, scripts: &[(String, Vec<(String, String)>)], merge: &str) -> i32 {
    let path = format!(
        "{}:{}",
        bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let sh = |script: &str, env: &[(String, String)]| {
        let mut c = Command::new("sh");
        c.args(["-c", script])
            .current_dir(dir)
            .env("PATH", &path)
            .env("LEAKHOUND_FINGERPRINT_KEY", KEY)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("JOB_COMPLETION_INDEX")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            c.env(k, v);
        }
        c.spawn().unwrap()
    };
    let children: Vec<_> = scripts.iter().map(|(s, e)| sh(s, e)).collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let o = sh(merge, &[]).wait_with_output().unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.status.code().unwrap()
}

/// A whole run's report, to compare with the merged shards'.
fn whole(dir: &Path, args: &[&str]) -> String {
    let o = lh_in(dir).args(args).output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// A repository with a few secrets in its history.
fn history(seed: u64) -> Repo {
    let r = Repo::new();
    for i in 0..4 {
        r.commit(
            &[(
                &format!("svc/{i}.env"),
                &format!("GITHUB_TOKEN={}\n", fake_github(seed + i)),
            )],
            "add",
        );
    }
    r
}

#[test]
fn the_kubernetes_indexed_job_runs_as_its_pods_would() {
    let docs = yaml("k8s-indexed-job.yaml");
    let find = |kind: &str| docs.iter().find(|d| d["kind"] == kind).unwrap().clone();
    let (config, job, merge) = (find("ConfigMap"), find("Job"), find("CronJob"));
    let sb = Sandbox::new();
    // The volumes' mount points, moved into the sandbox.
    let moved = |s: &str| {
        ["/config/", "/repos/", "/reports/"]
            .iter()
            .fold(s.to_string(), |s, m| {
                s.replace(m, &format!("{}{m}", sb.dir.path().display()))
            })
    };
    std::fs::create_dir_all(sb.path("reports")).unwrap();
    let list = config["data"]["repos.txt"].as_str().unwrap();
    for (i, line) in list.lines().enumerate() {
        let src = history(700 + 10 * i as u64);
        git_in(
            sb.dir.path(),
            &[
                "clone",
                "-q",
                "--mirror",
                &src.root.display().to_string(),
                &moved(line),
            ],
        );
    }
    sb.write("config/repos.txt", moved(list));
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    let n = spec["completions"].as_u64().unwrap();
    let script = moved(
        spec["template"]["spec"]["containers"][0]["args"][0]
            .as_str()
            .unwrap(),
    );
    let pods: Vec<(String, Vec<(String, String)>)> = (0..n)
        .map(|k| {
            (
                script.clone(),
                vec![("JOB_COMPLETION_INDEX".to_string(), k.to_string())],
            )
        })
        .collect();
    let merge_script = moved(
        merge["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"][0]
            .as_str()
            .unwrap(),
    );
    assert_eq!(run_as_scheduled(sb.dir.path(), &pods, &merge_script), 1);
    let merged = std::fs::read_to_string(sb.path("reports/leakhound.sarif")).unwrap();
    let want = whole(
        sb.dir.path(),
        &["git", "--targets", "config/repos.txt", "--format", "sarif"],
    );
    assert_eq!(merged, want);
    assert_eq!(
        serde_json::from_str::<Value>(&merged).unwrap()["runs"][0]["results"]
            .as_array()
            .unwrap()
            .len(),
        12
    );
}

#[test]
fn the_ci_matrices_run_as_their_jobs_would() {
    let r = history(800);
    // GitLab: `parallel: N` gives CI_NODE_INDEX (from 1) and CI_NODE_TOTAL.
    let gl = &yaml("gitlab-ci.yml")[0];
    let shard = &gl["leakhound-shard"];
    let n = shard["parallel"].as_u64().unwrap();
    let script = shard["script"][0].as_str().unwrap().to_string();
    let jobs: Vec<_> = (1..=n)
        .map(|i| {
            let env = vec![
                ("CI_NODE_INDEX".to_string(), i.to_string()),
                ("CI_NODE_TOTAL".to_string(), n.to_string()),
            ];
            (script.clone(), env)
        })
        .collect();
    let merge = gl["leakhound-merge"]["script"][0].as_str().unwrap();
    assert_eq!(run_as_scheduled(&r.root, &jobs, merge), 1);
    let want = whole(&r.root, &["git", ".", "--format", "sarif"]);
    assert_eq!(
        std::fs::read_to_string(r.root.join("gl-leakhound.sarif")).unwrap(),
        want
    );
    // GitHub Actions: the matrix's values in the step, its index in LEAKHOUND_SHARD_INDEX.
    // A checkout of its own, as each workflow has.
    let r = history(800);
    let gh = &yaml("github-actions.yml")[0];
    let scan = &gh["jobs"]["scan"];
    let values = scan["strategy"]["matrix"]["shard"].as_array().unwrap();
    let step = |job: &Value| -> String {
        job["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["run"].as_str())
            .find(|r| r.starts_with("leakhound"))
            .unwrap()
            .to_string()
    };
    let jobs: Vec<_> = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let script = step(scan).replace("${{ matrix.shard }}", &v.to_string());
            (
                script,
                vec![("LEAKHOUND_SHARD_INDEX".to_string(), i.to_string())],
            )
        })
        .collect();
    assert_eq!(
        run_as_scheduled(&r.root, &jobs, &step(&gh["jobs"]["merge"])),
        1
    );
    assert_eq!(
        std::fs::read_to_string(r.root.join("leakhound.sarif")).unwrap(),
        want
    );
}
