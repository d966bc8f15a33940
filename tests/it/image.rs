//! `leakhound image` against images built here by hand (an OCI layout: tar, gzip, sha256),
//! copied with the real `skopeo` into archives and into Debian's `docker-registry` running on
//! 127.0.0.1, with and without htpasswd auth.

use crate::archive::{gz, tar_of};
use crate::util::{fake_aws, fake_github, require_tool, to_run, Run, Sandbox};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::process::Command;

fn digest(b: &[u8]) -> String {
    format!("sha256:{:x}", Sha256::digest(b))
}

/// Write a blob into an OCI layout; its digest and size.
fn blob(dir: &Path, data: &[u8]) -> (String, usize) {
    let d = digest(data);
    let p = dir.join("blobs/sha256").join(&d[7..]);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, data).unwrap();
    (d, data.len())
}

/// One image in `dir`: gzipped layers of (path, content) files, a config with `env` and
/// `history` lines. Returns the manifest's descriptor and the layer digests.
pub(crate) fn image(
    dir: &Path,
    layers: &[Vec<(&str, Vec<u8>)>],
    env: &[String],
    history: &[String],
    arch: &str,
) -> (Value, Vec<String>) {
    let mut descs = Vec::new();
    let mut diff_ids = Vec::new();
    let mut digests = Vec::new();
    for files in layers {
        let refs: Vec<(&str, &[u8])> = files.iter().map(|(p, d)| (*p, d.as_slice())).collect();
        let tar = tar_of(&refs);
        diff_ids.push(digest(&tar));
        let (d, n) = blob(dir, &gz(&tar));
        digests.push(d.clone());
        descs.push(json!({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": d, "size": n}));
    }
    let config = json!({
        "architecture": arch, "os": "linux",
        "config": {"Env": env, "Cmd": ["python3", "app.py"], "Labels": {"team": "payments"}},
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "history": history.iter().map(|h| json!({"created_by": h})).collect::<Vec<_>>(),
    });
    let (cd, cn) = blob(dir, config.to_string().as_bytes());
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": cn},
        "layers": descs,
    });
    let (md, mn) = blob(dir, manifest.to_string().as_bytes());
    let desc = json!({
        "mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md, "size": mn,
        "platform": {"os": "linux", "architecture": arch},
    });
    (desc, digests)
}

/// `index.json` naming each descriptor by a tag.
pub(crate) fn index(dir: &Path, tagged: &[(&str, Value)]) {
    let manifests: Vec<Value> = tagged
        .iter()
        .map(|(tag, d)| {
            let mut d = d.clone();
            d["annotations"] = json!({"org.opencontainers.image.ref.name": tag});
            d
        })
        .collect();
    std::fs::write(dir.join("oci-layout"), r#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
    std::fs::write(
        dir.join("index.json"),
        json!({"schemaVersion": 2, "manifests": manifests}).to_string(),
    )
    .unwrap();
}

/// The secrets the standard test image holds, and where.
struct Planted {
    deleted: String,
    kept: String,
    upper: String,
    env_id: String,
    history: String,
    nested: String,
}

/// A two-layer image tagged `v1` in `dir`: the top layer deletes `/app/.env`.
fn standard(dir: &Path) -> (Planted, String, Vec<String>) {
    let deleted = fake_github(41);
    let kept = fake_github(42);
    let upper = fake_github(43);
    let (env_id, env_secret) = fake_aws(44);
    let history = fake_github(45);
    let nested = fake_github(46);
    let layers = vec![
        vec![
            ("app/.env", format!("GITHUB_TOKEN={deleted}\n").into_bytes()),
            ("etc/app/token.txt", format!("token: {kept}\n").into_bytes()),
            (
                "opt/bundle.zip",
                crate::archive::zip_of(&[(
                    "conf/ci.env",
                    format!("GH_TOKEN={nested}\n").as_bytes(),
                )]),
            ),
        ],
        vec![
            ("app/.wh..env", Vec::new()),
            (
                "srv/run.sh",
                format!("#!/bin/sh\nexport GITHUB_TOKEN={upper}\n").into_bytes(),
            ),
        ],
    ];
    let env = vec![
        "PATH=/usr/bin".to_string(),
        format!("AWS_ACCESS_KEY_ID={env_id}"),
        format!("AWS_SECRET_ACCESS_KEY={env_secret}"),
    ];
    let hist = vec![
        "ADD app /app".to_string(),
        format!("RUN git clone https://x-access-token:{history}@github.com/o/r"),
    ];
    let (desc, layers) = image(dir, &layers, &env, &hist, "amd64");
    index(dir, &[("v1", desc.clone())]);
    let md = desc["digest"].as_str().unwrap().to_string();
    (
        Planted {
            deleted,
            kept,
            upper,
            env_id,
            history,
            nested,
        },
        md,
        layers,
    )
}

fn lh(sb: &Sandbox, args: &[&str]) -> Run {
    to_run(sb.cmd().args(args).output().unwrap())
}

fn findings(sb: &Sandbox, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["image"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json", "--show-secrets"]);
    let r = lh(sb, &all);
    assert_eq!(r.code, 1, "stdout: {}\nstderr: {}", r.stdout, r.stderr);
    r.json()["findings"].as_array().unwrap().clone()
}

fn find<'a>(found: &'a [Value], secret: &str) -> &'a Value {
    found
        .iter()
        .find(|f| f["secret"] == secret)
        .unwrap_or_else(|| panic!("{secret} not found in {found:#?}"))
}

/// Every planted secret is found with its layer, path and deleted flag.
fn check_standard(found: &[Value], p: &Planted, layers: &[String]) {
    let f = find(found, &p.deleted)["provenance"].clone();
    assert_eq!(f["kind"], "image");
    assert_eq!(f["path"], "/app/.env");
    assert_eq!(f["layer"], 0);
    assert_eq!(f["layer_digest"], layers[0].as_str());
    assert_eq!(f["deleted"], true);
    let f = &find(found, &p.kept)["provenance"];
    assert_eq!(
        (f["path"].as_str(), f["deleted"].as_bool()),
        (Some("/etc/app/token.txt"), Some(false))
    );
    let f = &find(found, &p.upper)["provenance"];
    assert_eq!(
        (f["path"].as_str(), f["layer"].as_u64()),
        (Some("/srv/run.sh"), Some(1))
    );
    assert_eq!(
        find(found, &p.nested)["provenance"]["path"],
        "/opt/bundle.zip!conf/ci.env"
    );
    let f = find(found, &p.env_id);
    assert_eq!(f["provenance"]["path"], "config.Env");
    assert!(f["provenance"]["layer"].is_null());
    assert!(f["credential_set"].is_string(), "{f:#}");
    assert_eq!(
        find(found, &p.history)["provenance"]["path"],
        "history[1].created_by"
    );
}

#[test]
fn an_oci_layout_reports_config_layers_and_deleted_files() {
    let sb = Sandbox::new();
    let dir = sb.path("layout");
    let (p, md, layers) = standard(&dir);
    let found = findings(&sb, &[&format!("oci:{}:v1", dir.display())]);
    check_standard(&found, &p, &layers);
    assert!(found
        .iter()
        .all(|f| f["provenance"]["manifest"] == md.as_str()));
    // Without the tag: the layout holds one image, so it is that one.
    assert_eq!(
        findings(&sb, &[&format!("oci:{}", dir.display())]).len(),
        found.len()
    );
    // Human output says where, and that a file is deleted yet still in the image.
    let r = lh(&sb, &["image", &format!("oci:{}:v1", dir.display())]);
    assert!(
        r.stdout.contains("deleted by a later layer"),
        "{}",
        r.stdout
    );
    crate::util::assert_no_piece(&r.stdout, &p.kept, "the image report");
    crate::util::assert_no_piece(&r.stderr, &p.kept, "the image scan's stderr");
}

#[test]
fn broken_images_are_clear_errors_or_warnings() {
    let sb = Sandbox::new();
    let dir = sb.path("layout");
    let (p, _, layers) = standard(&dir);
    // A truncated top layer: the bottom layer and the config are still scanned.
    let top = dir.join("blobs/sha256").join(&layers[1][7..]);
    let bytes = std::fs::read(&top).unwrap();
    std::fs::write(&top, &bytes[..bytes.len() / 2]).unwrap();
    let r = lh(
        &sb,
        &[
            "image",
            &format!("oci:{}:v1", dir.display()),
            "--format",
            "json",
            "--show-secrets",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc = r.json();
    let found = doc["findings"].as_array().unwrap();
    find(found, &p.kept);
    find(found, &p.env_id);
    let w = doc["warnings"].to_string();
    assert!(w.contains("layer 1") && w.contains("unreadable"), "{w}");
    // A layer whose bytes do not match its digest: reported as such.
    let bottom = dir.join("blobs/sha256").join(&layers[0][7..]);
    let mut tar = tar_of(&[("x.txt", b"other\n")]);
    tar = gz(&tar);
    std::fs::write(&bottom, tar).unwrap();
    let r = lh(
        &sb,
        &[
            "image",
            &format!("oci:{}:v1", dir.display()),
            "--format",
            "json",
        ],
    );
    assert!(
        r.json()["warnings"].to_string().contains("digest mismatch"),
        "{}",
        r.stdout
    );
    // No such tag, no such directory, not an image reference.
    for (args, msg) in [
        (format!("oci:{}:v9", dir.display()), "no image tagged"),
        (
            "oci-archive:/nonexistent.tar".to_string(),
            "/nonexistent.tar",
        ),
        ("Bad/Name:1".to_string(), "bad image reference"),
    ] {
        let r = lh(&sb, &["image", &args]);
        assert_eq!(r.code, 2, "{args}: {}", r.stderr);
        assert!(r.stderr.contains(msg), "{args}: {}", r.stderr);
    }
}

/// Debian's docker-registry on a loopback port it picks itself (and names in its log),
/// storage in a temporary directory.
struct Registry {
    _server: crate::util::Server,
    pub addr: String,
    _dir: tempfile::TempDir,
}

impl Registry {
    fn start(htpasswd: Option<(&str, &str)>) -> Registry {
        require_tool("docker-registry");
        let dir = tempfile::tempdir().unwrap();
        // Info level, for the "listening on ADDR" line; the requests it logs are drained.
        let mut cfg = format!(
            "version: 0.1\nlog:\n  level: info\n  formatter: json\nstorage:\n  filesystem:\n    \
             rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:0\n",
            dir.path().join("data").display()
        );
        if let Some((user, pass)) = htpasswd {
            require_tool("htpasswd");
            let out = Command::new("htpasswd")
                .args(["-Bbn", user, pass])
                .output()
                .unwrap();
            assert!(out.status.success());
            std::fs::write(dir.path().join("htpasswd"), &out.stdout).unwrap();
            cfg.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: test\n    path: {}\n",
                dir.path().join("htpasswd").display()
            ));
        }
        let cfg_path = dir.path().join("config.yml");
        std::fs::write(&cfg_path, cfg).unwrap();
        let mut cmd = Command::new("docker-registry");
        cmd.arg("serve").arg(&cfg_path);
        let server = crate::util::Server::start("docker-registry", cmd, |line| {
            let v: serde_json::Value = serde_json::from_str(line).ok()?;
            let addr = v["msg"].as_str()?.strip_prefix("listening on ")?;
            Some(addr.trim().to_string())
        });
        Registry {
            addr: server.announced.clone(),
            _server: server,
            _dir: dir,
        }
    }
}

pub(crate) fn skopeo(args: &[&str]) {
    require_tool("skopeo");
    let out = Command::new("skopeo")
        .arg("--insecure-policy")
        .args(["copy", "-q"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "skopeo {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[cfg(feature = "registry")]
fn a_registry_anonymous_and_with_basic_auth() {
    let sb = Sandbox::new();
    let dir = sb.path("layout");
    let (p, md, layers) = standard(&dir);
    let src = format!("oci:{}:v1", dir.display());

    let open = Registry::start(None);
    skopeo(&[
        "--dest-tls-verify=false",
        &src,
        &format!("docker://{}/team/app:v1", open.addr),
    ]);
    let by_tag = format!("{}/team/app:v1", open.addr);
    let found = findings(&sb, &[&by_tag, "--plain-http"]);
    check_standard(&found, &p, &layers);
    // By digest too.
    let by_digest = format!("{}/team/app@{md}", open.addr);
    assert_eq!(
        findings(&sb, &[&by_digest, "--plain-http"]).len(),
        found.len()
    );
    // A tag that is not there is a clear error.
    let r = lh(
        &sb,
        &[
            "image",
            &format!("{}/team/app:nope", open.addr),
            "--plain-http",
        ],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("404"), "{}", r.stderr);

    let locked = Registry::start(Some(("ci", "s3cret-pass")));
    skopeo(&[
        "--dest-tls-verify=false",
        "--dest-creds",
        "ci:s3cret-pass",
        &src,
        &format!("docker://{}/team/app:v1", locked.addr),
    ]);
    let image = format!("{}/team/app:v1", locked.addr);
    let r = lh(&sb, &["image", &image, "--plain-http"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("401") || r.stderr.contains("authentication"),
        "{}",
        r.stderr
    );
    let wrong = lh(
        &sb,
        &["image", &image, "--plain-http", "--creds", "ci:wrong"],
    );
    assert_eq!(wrong.code, 2);
    assert!(
        !wrong.stderr.contains("wrong"),
        "password echoed: {}",
        wrong.stderr
    );
    check_standard(
        &findings(&sb, &[&image, "--plain-http", "--creds", "ci:s3cret-pass"]),
        &p,
        &layers,
    );
    // The credentials can come from docker's config file instead.
    use base64::Engine;
    let auth = base64::engine::general_purpose::STANDARD.encode("ci:s3cret-pass");
    let docker = sb.path("docker");
    std::fs::create_dir_all(&docker).unwrap();
    std::fs::write(
        docker.join("config.json"),
        json!({"auths": {locked.addr.clone(): {"auth": auth}}}).to_string(),
    )
    .unwrap();
    let r = to_run(
        sb.cmd()
            .env("DOCKER_CONFIG", &docker)
            .args(["image", &image, "--plain-http", "--format", "json"])
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    // Nothing listens (a port held and refusing, not a guessed one): a clear error.
    let dead_addr = format!("127.0.0.1:{}", crate::util::refused_port());
    let dead = lh(
        &sb,
        &["image", &format!("{dead_addr}/team/app:v1"), "--plain-http"],
    );
    assert_eq!(dead.code, 2);
    assert!(dead.stderr.contains(&dead_addr), "{}", dead.stderr);
}

#[test]
fn docker_and_oci_archives_and_shared_layers() {
    let sb = Sandbox::new();
    let dir = sb.path("layout");
    let (p, _, layers) = standard(&dir);
    let src = format!("oci:{}:v1", dir.display());
    let docker = sb.path("saved.tar");
    let oci = sb.path("oci.tar");
    skopeo(&[
        &src,
        &format!("docker-archive:{}:team/app:v1", docker.display()),
    ]);
    skopeo(&[&src, &format!("oci-archive:{}:v1", oci.display())]);
    let from_docker = findings(&sb, &[&format!("docker-archive:{}", docker.display())]);
    // skopeo writes uncompressed layers to a docker archive: the same files, other digests.
    for s in [
        &p.deleted, &p.kept, &p.upper, &p.nested, &p.env_id, &p.history,
    ] {
        find(&from_docker, s);
    }
    assert_eq!(
        find(&from_docker, &p.deleted)["provenance"]["deleted"],
        true
    );
    check_standard(
        &findings(&sb, &[&format!("oci-archive:{}:v1", oci.display())]),
        &p,
        &layers,
    );
    // Pushed from the docker archive, the registry serves Docker v2 (schema 2) media types.
    if cfg!(feature = "registry") {
        let reg = Registry::start(None);
        let remote = format!("{}/team/docker:v1", reg.addr);
        skopeo(&[
            "--dest-tls-verify=false",
            &format!("docker-archive:{}", docker.display()),
            &format!("docker://{remote}"),
        ]);
        let out = Command::new("skopeo")
            .args([
                "inspect",
                "--raw",
                "--tls-verify=false",
                &format!("docker://{remote}"),
            ])
            .output()
            .unwrap();
        assert!(String::from_utf8_lossy(&out.stdout)
            .contains("application/vnd.docker.distribution.manifest.v2+json"));
        let from_v2 = findings(&sb, &[&remote, "--plain-http"]);
        assert_eq!(find(&from_v2, &p.deleted)["provenance"]["deleted"], true);
        assert_eq!(from_v2.len(), from_docker.len());
    }

    // Two images sharing the bottom layer: it is read once, reported for both.
    let top = vec![("srv/other.txt", b"nothing\n".to_vec())];
    let std_layers: Vec<Vec<(&str, Vec<u8>)>> = vec![vec![
        (
            "app/.env",
            format!("GITHUB_TOKEN={}\n", p.deleted).into_bytes(),
        ),
        (
            "etc/app/token.txt",
            format!("token: {}\n", p.kept).into_bytes(),
        ),
        (
            "opt/bundle.zip",
            crate::archive::zip_of(&[(
                "conf/ci.env",
                format!("GH_TOKEN={}\n", p.nested).as_bytes(),
            )]),
        ),
    ]];
    let mut two = std_layers.clone();
    two.push(top);
    let (d2, l2) = image(&dir, &two, &[], &[], "amd64");
    assert_eq!(l2[0], layers[0], "the base layer is byte-identical");
    let v1 = serde_json::from_slice::<Value>(&std::fs::read(dir.join("index.json")).unwrap())
        .unwrap()["manifests"][0]
        .clone();
    index(&dir, &[("v1", v1), ("v2", d2)]);
    let r = lh(
        &sb,
        &[
            "image",
            &format!("oci:{}:v1", dir.display()),
            &format!("oci:{}:v2", dir.display()),
            "--format",
            "json",
            "--show-secrets",
        ],
    );
    let doc = r.json();
    let found = doc["findings"].as_array().unwrap();
    let kept: Vec<&Value> = found
        .iter()
        .filter(|f| f["secret"] == p.kept.as_str())
        .collect();
    assert_eq!(kept.len(), 2, "{kept:#?}");
    let images: Vec<&str> = kept
        .iter()
        .map(|f| f["provenance"]["image"].as_str().unwrap())
        .collect();
    assert!(images[0] != images[1]);
    // In v2 nothing deletes /app/.env.
    let env: Vec<bool> = found
        .iter()
        .filter(|f| f["secret"] == p.deleted.as_str())
        .map(|f| f["provenance"]["deleted"].as_bool().unwrap())
        .collect();
    assert_eq!(env.len(), 2);
    assert!(env.contains(&true) && env.contains(&false), "{env:?}");
    // Files read: 3 + 1 for v1's layers, 1 for v2's own layer; the shared one once.
    // (Config fields are counted too: v1 has Env, Cmd, Labels and two history lines, v2 has
    // Cmd and Labels.)
    assert_eq!(
        doc["summary"]["files"],
        3 + 1 + 1 + 5 + 2,
        "{:#}",
        doc["summary"]
    );
}

#[test]
fn multi_platform_indexes_pick_the_platform() {
    let sb = Sandbox::new();
    let dir = sb.path("layout");
    let amd = fake_github(51);
    let arm = fake_github(52);
    let (da, _) = image(
        &dir,
        &[vec![("a.txt", format!("t={amd}\n").into_bytes())]],
        &[],
        &[],
        "amd64",
    );
    let (dr, _) = image(
        &dir,
        &[vec![("a.txt", format!("t={arm}\n").into_bytes())]],
        &[],
        &[],
        "arm64",
    );
    let list = json!({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [da, dr],
    });
    let (ld, ln) = blob(&dir, list.to_string().as_bytes());
    index(
        &dir,
        &[(
            "multi",
            json!({"mediaType": "application/vnd.oci.image.index.v1+json", "digest": ld, "size": ln}),
        )],
    );
    let src = format!("oci:{}:multi", dir.display());
    let found = findings(&sb, &[&src]);
    find(&found, &amd);
    assert!(found.iter().all(|f| f["secret"] != arm.as_str()));
    find(&findings(&sb, &[&src, "--platform", "linux/arm64"]), &arm);
    let r = lh(&sb, &["image", &src, "--platform", "linux/s390x"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("linux/amd64, linux/arm64"),
        "{}",
        r.stderr
    );
    // The same through a registry, pushed with all its platforms.
    if cfg!(feature = "registry") {
        let reg = Registry::start(None);
        skopeo(&[
            "--all",
            "--dest-tls-verify=false",
            &src,
            &format!("docker://{}/multi/app:1", reg.addr),
        ]);
        let remote = format!("{}/multi/app:1", reg.addr);
        find(
            &findings(&sb, &[&remote, "--plain-http", "--platform", "linux/arm64"]),
            &arm,
        );
    }
}

#[test]
fn links_in_layers_are_skipped_not_followed() {
    let sb = Sandbox::new();
    let dir = sb.path("layout");
    let token = fake_github(61);
    let mut b = tar::Builder::new(Vec::new());
    let data = format!("t={token}\n");
    let mut h = tar::Header::new_gnu();
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    b.append_data(&mut h, "etc/real.txt", data.as_bytes())
        .unwrap();
    for (kind, name) in [
        (tar::EntryType::Symlink, "etc/soft"),
        (tar::EntryType::Link, "etc/hard"),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(kind);
        h.set_size(0);
        b.append_link(&mut h, name, "etc/real.txt").unwrap();
    }
    // A symlink pointing out of the image is only a name, never opened.
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Symlink);
    h.set_size(0);
    b.append_link(&mut h, "etc/passwd-link", "/etc/passwd")
        .unwrap();
    let tar = b.into_inner().unwrap();
    let (d, n) = blob(&dir, &gz(&tar));
    let config = json!({"architecture": "amd64", "os": "linux", "config": {}, "rootfs": {"type": "layers", "diff_ids": [digest(&tar)]}});
    let (cd, cn) = blob(&dir, config.to_string().as_bytes());
    let manifest = json!({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": cd, "size": cn},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": d, "size": n}]});
    let (md, mn) = blob(&dir, manifest.to_string().as_bytes());
    index(
        &dir,
        &[(
            "v1",
            json!({"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md, "size": mn}),
        )],
    );
    let found = findings(&sb, &[&format!("oci:{}:v1", dir.display())]);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["provenance"]["path"], "/etc/real.txt");
}
