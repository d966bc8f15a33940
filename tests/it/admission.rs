//! Issue 11: one admission for every source. A `.env` and a notebook read the same way on
//! disk, committed to git (the real `git`), and in an image layer (built here, copied with
//! the real `skopeo`): findings name their variable and pair AWS parts, or name their cell.

use crate::git::Repo;
use crate::image::{image, index, skopeo};
use crate::util::{fake_aws, fake_github, to_run, Sandbox};
use serde_json::{json, Value};

/// A `.env` with an AWS key id and its secret, after a comment line.
fn env_file(seed: u64) -> (String, String) {
    let (id, secret) = fake_aws(seed);
    (
        id.clone(),
        format!("# production\nAWS_ACCESS_KEY_ID={id}\nAWS_SECRET_ACCESS_KEY={secret}\n"),
    )
}

/// A notebook whose cell 2 (from 0, as in the JSON report) holds `token`.
fn notebook(token: &str) -> String {
    serde_json::to_string_pretty(&json!({
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Load\n"]},
            {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [],
             "source": ["import requests\n"]},
            {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [],
             "source": ["headers = {\n", format!("    \"Authorization\": \"token {token}\",\n"), "}\n"]},
        ],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5
    }))
    .unwrap()
}

/// The key id and the secret of `found` at `path`: each names its variable, and the two
/// form one credential set.
fn check_env(found: &[Value], path: &str, id: &str) {
    let at = |var: &str| {
        found
            .iter()
            .find(|f| f["provenance"]["path"] == path && f["provenance"]["variable"] == var)
            .unwrap_or_else(|| panic!("no finding in {path} names {var}: {found:#?}"))
    };
    let key = at("AWS_ACCESS_KEY_ID");
    let secret = at("AWS_SECRET_ACCESS_KEY");
    assert_eq!(key["rule"], "aws.access-key-id");
    assert_eq!(key["secret"], id);
    assert!(
        secret["rule"].as_str().unwrap().starts_with("aws.secret"),
        "{secret:#}"
    );
    assert!(key["credential_set"].is_string(), "{key:#}");
    assert_eq!(key["credential_set"], secret["credential_set"]);
}

/// The finding of `token` at `path` names cell 2's source, and keeps its own origin.
fn check_cell<'a>(found: &'a [Value], path: &str, token: &str) -> &'a Value {
    let f = found
        .iter()
        .find(|f| f["provenance"]["path"] == path && f["secret"] == token)
        .unwrap_or_else(|| panic!("{token} not found in {path}: {found:#?}"));
    assert_eq!(f["rule"], "github.pat");
    let p = &f["provenance"];
    assert_eq!(
        (&p["cell"], &p["field"]),
        (&json!(2), &json!("source")),
        "{p:#}"
    );
    assert!(p["output"].is_null(), "{p:#}");
    f
}

#[test]
fn a_committed_env_file_and_notebook_name_their_variables_and_cells() {
    let r = Repo::new();
    r.commit(&[("README.md", "hello\n")], "start");
    let (id, env) = env_file(1101);
    let token = fake_github(1102);
    let commit = r.commit(
        &[
            ("deploy/.env", env.as_str()),
            ("work/analysis.ipynb", notebook(&token).as_str()),
        ],
        "deploy settings and a notebook",
    );
    let run = r.leakhound(&["git", "--format", "json", "--show-secrets"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let found = run.json()["findings"].as_array().unwrap().clone();
    assert_eq!(found.len(), 3, "{found:#?}");
    check_env(&found, "deploy/.env", &id);
    let f = check_cell(&found, "work/analysis.ipynb", &token);
    assert_eq!(f["provenance"]["kind"], "git");
    assert_eq!(f["provenance"]["commit"]["id"], commit.as_str());
    // The line is the notebook file's own.
    let text = notebook(&token);
    let line = text.lines().position(|l| l.contains(&token)).unwrap() + 1;
    assert_eq!(f["line"], line);
    // A person reading the human report sees the cell under the commit's file.
    let human = r.leakhound(&["git"]);
    assert!(human.stdout.contains("cells[2] source"), "{}", human.stdout);
    assert!(
        !human.stdout.contains(&token),
        "secret shown: {}",
        human.stdout
    );
    // A later edit that keeps the lines adds no finding: the commit that wrote them has it.
    let edited = format!("{env}LOG_LEVEL=debug\n");
    r.commit(&[("deploy/.env", edited.as_str())], "more settings");
    let again = r.findings(&["--since", "HEAD~1"], 0);
    assert!(again.is_empty(), "{again:#?}");
}

#[test]
fn an_env_file_and_notebook_in_image_layers_name_their_variables_and_cells() {
    let sb = Sandbox::new();
    let dir = sb.path("layout");
    let (id, env) = env_file(1111);
    let token = fake_github(1112);
    let layers = vec![
        vec![("app/.env", env.clone().into_bytes())],
        vec![("work/analysis.ipynb", notebook(&token).into_bytes())],
    ];
    // Two images sharing both layers: the second one's findings are the first's, repeated
    // for it, and must keep their variable and cell.
    let history = ["ADD app /app".to_string()];
    let (v1, _) = image(&dir, &layers, &[], &history, "amd64");
    let (v2, _) = image(&dir, &layers, &["TEAM=payments".into()], &history, "amd64");
    index(&dir, &[("v1", v1), ("v2", v2)]);
    let refs: Vec<String> = ["v1", "v2"]
        .iter()
        .map(|t| format!("oci:{}:{t}", dir.display()))
        .collect();
    let mut args = vec!["image"];
    args.extend(refs.iter().map(String::as_str));
    args.extend(["--format", "json", "--show-secrets"]);
    let run = to_run(sb.cmd().args(&args).output().unwrap());
    assert_eq!(run.code, 1, "{}", run.stderr);
    let found = run.json()["findings"].as_array().unwrap().clone();
    assert_eq!(found.len(), 6, "{found:#?}");
    for r in &refs {
        let of: Vec<Value> = found
            .iter()
            .filter(|f| f["provenance"]["image"] == r.as_str())
            .cloned()
            .collect();
        check_env(&of, "/app/.env", &id);
        let f = check_cell(&of, "/work/analysis.ipynb", &token);
        assert_eq!(f["provenance"]["kind"], "image");
        assert_eq!(f["provenance"]["layer"], 1);
    }
    let human = to_run(sb.cmd().args(["image", &refs[0]]).output().unwrap());
    assert!(human.stdout.contains("cells[2] source"), "{}", human.stdout);
    assert!(
        !human.stdout.contains(&token),
        "secret shown: {}",
        human.stdout
    );

    // The same image as `docker save` writes it (uncompressed layers), copied by skopeo.
    let saved = sb.path("saved.tar");
    skopeo(&[
        &refs[0],
        &format!("docker-archive:{}:team/app:v1", saved.display()),
    ]);
    let run = to_run(
        sb.cmd()
            .args(["image", &format!("docker-archive:{}", saved.display())])
            .args(["--format", "json", "--show-secrets"])
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let found = run.json()["findings"].as_array().unwrap().clone();
    check_env(&found, "/app/.env", &id);
    check_cell(&found, "/work/analysis.ipynb", &token);
}

/// The same files on disk read as they are in git and in an image: the variable and the
/// cell are the file's too (the reference the other sources are held to).
#[test]
fn on_disk_the_same_files_read_the_same_way() {
    let sb = Sandbox::new();
    let (id, env) = env_file(1121);
    let token = fake_github(1122);
    sb.write("deploy/.env", &env);
    sb.write("work/analysis.ipynb", notebook(&token));
    let run = sb.run(&["scan", "--format", "json", "--show-secrets"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let found = run.json()["findings"].as_array().unwrap().clone();
    check_env(&found, "deploy/.env", &id);
    assert_eq!(
        check_cell(&found, "work/analysis.ipynb", &token)["provenance"]["kind"],
        "notebook"
    );
}
