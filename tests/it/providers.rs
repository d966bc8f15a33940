//! The declarative validators (`[[validators]]` in signatures/) against a fake of each
//! provider (tests/fake_provider.py), which answers as the provider documents: every validator
//! in every mode (live, invalid, revoked, rate-limited, 5xx, garbage, hang, redirect), so the
//! mapping to states is tested for each; then the safety rules, each with a test that fails
//! if it is broken.

use crate::util::{to_run, Run, Sandbox, Server};
use leakhound::rules::validator::HttpSpec;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// The fake, on a port the system picked; `redirect_to` is where its redirect mode points.
fn fake(redirect_to: Option<&str>) -> (Server, u16) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fake_provider.py");
    let mut cmd = Command::new("python3");
    cmd.arg(script);
    if let Some(r) = redirect_to {
        cmd.args(["--redirect-to", r]);
    }
    let server = Server::start("fake_provider.py", cmd, |line| {
        line.trim().parse::<u16>().ok().map(|p| p.to_string())
    });
    let port = server.announced.parse().unwrap();
    (server, port)
}

/// `GET path` from the fake, as JSON.
fn ask(port: u16, path: &str) -> Value {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: x\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let body = out.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// What the fake was asked, by provider.
fn asked(port: u16) -> BTreeMap<String, Vec<Value>> {
    let mut out: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for e in ask(port, "/__log").as_array().unwrap() {
        out.entry(e["provider"].as_str().unwrap().to_string())
            .or_default()
            .push(e.clone());
    }
    out
}

fn specs() -> Vec<HttpSpec> {
    leakhound::rules::builtin_validators()
}

/// The first example of each rule a validator checks, one file per validator (with its
/// paired parts' examples beside it), and the secret each should find.
fn corpus(sb: &Sandbox) -> BTreeMap<String, String> {
    let rules = leakhound::rules::builtin();
    let example = |id: &str| {
        let r = rules.iter().find(|r| r.id == id).unwrap();
        r.examples[0].clone()
    };
    let mut files = BTreeMap::new();
    for s in specs() {
        let mut text = example(&s.rules[0]);
        for id in s.with.values() {
            text = format!("{}\n{text}", example(id));
        }
        sb.write(&format!("data/{}.txt", s.name), format!("{text}\n"));
        files.insert(s.name.clone(), s.rules[0].clone());
    }
    files
}

/// A config sending every provider to the fake in `mode`.
fn config(sb: &Sandbox, name: &str, port: u16, mode: &str, extra: &str) -> String {
    let mut text = format!(
        "[validate]\ntimeout_ms = {}\nretries = 0\n{extra}\n[validate.endpoints]\n",
        if mode == "hang" { 700 } else { 10_000 }
    );
    for s in specs() {
        text.push_str(&format!(
            "{:?} = \"http://127.0.0.1:{port}/{mode}/{}\"\n",
            s.name, s.name
        ));
    }
    sb.write(name, text).to_str().unwrap().to_string()
}

fn scan(sb: &Sandbox, mode: &str, args: &[&str]) -> Run {
    let out = sb
        .cmd()
        .args(["scan", "data", "--validate", "--format", "json"])
        .args(args)
        .env("XDG_STATE_HOME", sb.path(&format!("state-{mode}")))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    to_run(out)
}

/// Each validator's finding (of the rule its file was written for) in a JSON report.
fn by_validator<'a>(
    doc: &'a Value,
    files: &BTreeMap<String, String>,
) -> BTreeMap<String, &'a Value> {
    let mut out = BTreeMap::new();
    for f in doc["findings"].as_array().unwrap() {
        let path = f["path"].as_str().unwrap();
        for (name, rule) in files {
            if path == format!("data/{name}.txt") && f["rule"] == rule.as_str() {
                out.insert(name.clone(), f);
            }
        }
    }
    out
}

#[test]
fn every_declarative_validator_maps_every_answer_of_its_fake_provider() {
    let (target, target_port) = fake(None);
    let (server, port) = fake(Some(&format!("http://127.0.0.1:{target_port}/live")));
    let providers = ask(port, "/__providers");
    let sb = Sandbox::new();
    let files = corpus(&sb);
    assert!(files.len() >= 60, "{} validators", files.len());
    for s in specs() {
        assert!(providers.get(&s.name).is_some(), "no fake for {}", s.name);
    }
    let modes = [
        "live", "invalid", "revoked", "limited", "error", "garbage", "hang", "redirect",
    ];
    for mode in modes {
        let cfg = config(&sb, &format!("{mode}.toml"), port, mode, "");
        let audit = sb.path(&format!("audit-{mode}.jsonl"));
        let mut args = vec!["--config", &cfg, "--audit-log", audit.to_str().unwrap()];
        if mode == "live" {
            args.extend(["--reach", "--show-secrets"]);
        }
        let started = std::time::Instant::now();
        let r = scan(&sb, mode, &args);
        assert!(r.code == 0 || r.code == 1, "{mode}: {}", r.stderr);
        if mode == "hang" {
            // One timeout for all: providers are asked at once, not one after another.
            assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
        }
        let doc = r.json();
        let found = by_validator(&doc, &files);
        for (name, rule) in &files {
            let f = found
                .get(name)
                .unwrap_or_else(|| panic!("{mode}: no {rule} finding in data/{name}.txt"));
            let v = &f["validation"];
            let status = v["status"].as_str().unwrap_or("(none)");
            let reason = v["reason"].as_str().unwrap_or("");
            let fake = &providers[name];
            let want: &[&str] = match mode {
                "live" => &["live"],
                "invalid" => &["invalid"],
                "revoked" if fake["revoked"] == true => &["revoked", "expired"],
                "revoked" => &["invalid"],
                _ => &["unknown"],
            };
            assert!(want.contains(&status), "{mode} {name}: {status} ({reason})");
            match mode {
                "limited" => assert!(reason.contains("rate-limited"), "{name}: {reason}"),
                "error" => assert!(reason.contains("HTTP 503"), "{name}: {reason}"),
                "garbage" => assert!(reason.contains("not JSON"), "{name}: {reason}"),
                "hang" => assert!(reason.contains("network"), "{name}: {reason}"),
                "redirect" => assert!(
                    reason.contains("redirect, not followed"),
                    "{name}: {reason}"
                ),
                _ => {}
            }
            if mode == "live" {
                if fake["identity"] == true {
                    let id = v["identity"].to_string().to_lowercase();
                    assert!(id.contains("fake"), "{name}: identity {id}");
                }
                // The secret reached the provider in the place the provider reads it.
                let seen = asked(port);
                let got: Vec<&Value> = seen[name.as_str()]
                    .iter()
                    .filter(|e| e["mode"] == "live")
                    .map(|e| &e["credential"])
                    .collect();
                assert_eq!(got, vec![&f["secret"]], "{name}: what the fake was sent");
            }
        }
        let text = std::fs::read_to_string(&audit).unwrap();
        assert_eq!(
            text.lines()
                .filter(|l| l.contains("\"event\":\"validation\""))
                .count(),
            files.len(),
            "{mode}: one audit line per credential"
        );
        if mode == "live" {
            // Windows of 12: fingerprints and ids in the log are hex, and a hex secret shares
            // short runs with them by chance.
            for f in doc["findings"].as_array().unwrap() {
                let secret = f["secret"].as_str().unwrap().as_bytes();
                for w in secret.windows(12.min(secret.len())) {
                    let w = String::from_utf8_lossy(w);
                    assert!(!text.contains(&*w), "the audit log holds {w}: {text}");
                }
            }
            assert!(
                text.contains(&format!(
                    "\"request\":\"GET http://127.0.0.1:{port}/live/github/user\""
                )),
                "{text}"
            );
            let overrides = doc["summary"]["endpoint_overrides"].to_string();
            assert!(
                overrides.contains(&format!("github -> http://127.0.0.1:{port}/live/github")),
                "{overrides}"
            );
            reach_is_read_from_the_answer(&by_validator(&doc, &files));
        }
    }
    // The redirect went nowhere: the other host was never asked.
    assert!(asked(target_port).is_empty(), "{:?}", asked(target_port));
    drop((server, target));
}

/// `--reach` from the answer itself: scopes, team, organisation, mode.
fn reach_is_read_from_the_answer(found: &BTreeMap<String, &Value>) {
    let reach = |name: &str| found[name]["reach"].clone();
    let gh = reach("github");
    assert_eq!(gh["level"], "write", "{gh}");
    assert_eq!(gh["flags"], serde_json::json!(["data-read"]), "{gh}");
    assert_eq!(gh["identity"], "github:fake-user");
    assert!(gh["notes"].to_string().contains("repo, read:org"), "{gh}");
    let slack = reach("slack");
    assert_eq!(
        (
            slack["level"].as_str(),
            slack["flags"].to_string().contains("data-read")
        ),
        (Some("write"), true),
        "{slack}"
    );
    assert!(
        slack["notes"].to_string().contains("org: Fake Team"),
        "{slack}"
    );
    let openai = reach("openai");
    assert!(
        openai["notes"].to_string().contains("org: org-fake1"),
        "{openai}"
    );
    let stripe = reach("stripe");
    assert!(
        stripe["notes"].to_string().contains("mode: test"),
        "{stripe}"
    );
    assert_eq!(reach("gitlab")["level"], "read-only");
    // A fine-grained answer without scopes is not guessed at.
    assert_eq!(reach("tailscale")["level"], "unknown");
}

fn github_example() -> String {
    let rules = leakhound::rules::builtin();
    rules
        .iter()
        .find(|r| r.id == "github.pat")
        .unwrap()
        .examples[0]
        .clone()
}

#[test]
fn a_canary_is_never_sent() {
    let (server, port) = fake(None);
    let sb = Sandbox::new();
    let token = github_example();
    sb.write("data/a.env", format!("{token}\n"));
    let secret = token.rsplit(['=', ' ', '"']).next().unwrap().to_string();
    let pattern = format!("canary_patterns = [{:?}]", regex::escape(&secret[..12]));
    let cfg = config(&sb, "c.toml", port, "live", &pattern);
    let r = scan(&sb, "canary", &["--config", &cfg]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = &r.json()["findings"][0]["validation"];
    assert_eq!(
        (v["status"].as_str(), v["reason"].as_str()),
        (Some("skipped"), Some("canary")),
        "{v}"
    );
    assert!(asked(port).is_empty(), "{:?}", asked(port));
    drop(server);
}

#[test]
fn only_the_operators_config_moves_an_endpoint_never_the_scanned_tree() {
    let (good, good_port) = fake(None);
    let (bad, bad_port) = fake(None);
    let sb = Sandbox::new();
    let token = github_example();
    let elsewhere = format!("http://127.0.0.1:{bad_port}/live/github");
    // The scanned text names another API host, and carries a config of its own.
    sb.write(
        "data/app.env",
        format!("GITHUB_API_URL={elsewhere}\n{token}\n"),
    );
    sb.write(
        "data/leakhound.toml",
        format!("[validate.endpoints]\ngithub = {elsewhere:?}\n"),
    );
    let cfg = sb.write(
        "ops/leakhound.toml",
        format!("[validate.endpoints]\ngithub = \"http://127.0.0.1:{good_port}/live/github\"\n"),
    );
    let r = scan(&sb, "a", &["--config", cfg.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc = r.json();
    let f = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "github.pat")
        .unwrap();
    assert_eq!(f["validation"]["status"], "live", "{f}");
    assert!(
        r.stderr.contains(&format!(
            "validation endpoint overridden by --config: github -> http://127.0.0.1:{good_port}"
        )),
        "{}",
        r.stderr
    );
    assert!(asked(bad_port).is_empty(), "{:?}", asked(bad_port));
    assert_eq!(asked(good_port)["github"].len(), 1);

    // A leakhound.toml in the working directory (not named with --config) moves nothing: a
    // validator of the operator's own, documented on this fake's port over https, is asked
    // there (and fails its TLS handshake), never at the override.
    let sb = Sandbox::new();
    sb.write(
        "probe.toml",
        format!(
            r#"[[rules]]
id = "probe.token"
name = "Probe token"
keywords = ["prb_"]
pattern = '\b(?P<secret>prb_[a-z0-9]{{20}})\b'
examples = ["prb_k2j4h5g6f7d8s9a0q1w3"]

[[validators]]
name = "probe"
rules = ["probe.token"]
docs = "a test provider"
url = "https://127.0.0.1:{good_port}/live/github/user"
headers = {{ Authorization = "Bearer {{{{secret}}}}" }}
answers = [{{ status = [200], has = ["/login"], outcome = "live" }}]
"#
        ),
    );
    sb.write(
        "leakhound.toml",
        format!("[validate]\nretries = 0\n[validate.endpoints]\nprobe = {elsewhere:?}\n"),
    );
    sb.write("data/t.txt", "prb_z9x8c7v6b5n4m3l2k1j0\n");
    let r = scan(&sb, "b", &["--rules", "probe.toml"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("validate.endpoints is honoured only from a config named with --config"),
        "{}",
        r.stderr
    );
    let v = &r.json()["findings"][0]["validation"];
    assert_eq!(v["status"], "unknown", "{v}");
    assert!(v["reason"].as_str().unwrap().contains("network"), "{v}");
    assert!(asked(bad_port).is_empty(), "{:?}", asked(bad_port));
    drop((good, bad));
}

#[test]
fn rules_list_names_each_rules_validator_and_its_kind() {
    let r = Sandbox::new().run(&["rules", "list", "--format", "json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let list: Vec<Value> = serde_json::from_str(&r.stdout).unwrap();
    let of = |id: &str| list.iter().find(|r| r["id"] == id).unwrap()["validator"].clone();
    assert_eq!(
        (
            of("github.pat")["name"].clone(),
            of("github.pat")["kind"].clone()
        ),
        ("github".into(), "http".into())
    );
    assert_eq!(of("aws.access-key-id")["kind"], "code");
    assert_eq!(of("twilio.api-key")["part"], "sid");
    assert!(of("generic.password").is_null());
    let http: std::collections::BTreeSet<&str> = list
        .iter()
        .filter(|r| r["validator"]["kind"] == "http")
        .filter_map(|r| r["validator"]["name"].as_str())
        .collect();
    assert!(http.len() >= 60, "{} providers: {http:?}", http.len());
}

#[test]
fn rules_check_refuses_a_validator_that_could_send_a_secret_elsewhere_or_check_nothing() {
    let sb = Sandbox::new();
    let spec = |rule: &str, url: &str| {
        format!(
            "[[validators]]\nname = \"ghe\"\nrules = [{rule:?}]\ndocs = \"d\"\nurl = {url:?}\n\
             headers = {{ Authorization = \"Bearer {{{{secret}}}}\" }}\n\
             answers = [{{ status = [200], has = [\"/login\"], outcome = \"live\" }}]\n"
        )
    };
    for (rule, url, says) in [
        (
            "github.pat",
            "https://ghe.example/api/v3/user",
            "is checked by \"github\" already",
        ),
        (
            "gitlab.deploy-token",
            "http://ghe.example/user",
            "is not https://HOST/",
        ),
        (
            "gitlab.deploy-token",
            "https://{{secret}}.example/user",
            "the host must be fixed",
        ),
    ] {
        let f = sb.write("v.toml", spec(rule, url));
        let r = sb.run(&["rules", "check", f.to_str().unwrap()]);
        assert_eq!(r.code, 2, "{url}: {}", r.stderr);
        assert!(r.stderr.contains(says), "{url}: {}", r.stderr);
    }
    let f = sb.write(
        "v.toml",
        spec("gitlab.deploy-token", "https://ghe.example/user"),
    );
    let r = sb.run(&["rules", "check", f.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// `--rotate`: a live GitHub, GitLab or Slack token revokes itself with the provider's own
/// request, once, and only when the flag is given; a provider with no such request (OpenAI)
/// is left alone. The fake records each revoke and answers the token revoked afterwards.
#[test]
fn rotate_revokes_a_live_key_once_and_only_when_asked() {
    let (server, port) = fake(None);
    let sb = Sandbox::new();
    let files = corpus(&sb);
    // Only the providers under test, so the log is theirs.
    let providers = ["github", "gitlab", "slack", "openai"];
    for name in files.keys().filter(|n| !providers.contains(&n.as_str())) {
        std::fs::remove_file(sb.path(&format!("data/{name}.txt"))).unwrap();
    }
    let cfg = config(&sb, "live.toml", port, "live", "");
    let audit = sb.path("audit.jsonl");
    let audit = audit.to_str().unwrap();
    let revokes = |port: u16| -> Vec<Value> {
        asked(port)
            .into_values()
            .flatten()
            .filter(|e| e["revoke"] == true)
            .collect()
    };
    // --validate alone: live, nothing revoked.
    let r = scan(&sb, "rotate", &["--config", &cfg, "--audit-log", audit]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(revokes(port).is_empty(), "{:?}", revokes(port));
    // --rotate: each revocable key revoked once, and found revoked when checked again.
    let args = [
        "--config",
        &cfg,
        "--audit-log",
        audit,
        "--rotate",
        "--show-secrets",
    ];
    let r = scan(&sb, "rotate", &args);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc = r.json();
    let found = by_validator(&doc, &files);
    let done = revokes(port);
    for name in ["github", "gitlab", "slack"] {
        let f = found[name];
        let mine: Vec<&Value> = done.iter().filter(|e| e["provider"] == name).collect();
        assert_eq!(mine.len(), 1, "{name}: {done:?}");
        assert_eq!(
            mine[0]["credential"], f["secret"],
            "{name}: the key revoked"
        );
        let hook = &f["hooks"][0];
        assert_eq!(
            (hook["name"].as_str(), hook["status"].as_str()),
            (Some("rotate"), Some("ok")),
            "{name}: {f}"
        );
        let after = hook["status_after"].as_str().unwrap_or("");
        assert!(["revoked", "invalid"].contains(&after), "{name}: {hook}");
        assert_eq!(f["validation"]["status"], after, "{name}: {f}");
    }
    assert!(found["openai"]["hooks"]
        .as_array()
        .is_none_or(|h| h.is_empty()));
    assert!(!done.iter().any(|e| e["provider"] == "openai"), "{done:?}");
    let log = std::fs::read_to_string(sb.path("audit.jsonl")).unwrap();
    let hook_lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("\"event\":\"hook\""))
        .collect();
    assert_eq!(hook_lines.len(), 3, "{log}");
    assert!(hook_lines.iter().all(|l| l.contains("\"hook\":\"rotate\"")));
    for f in found.values() {
        crate::util::assert_no_piece(&log, f["secret"].as_str().unwrap(), "the audit log");
    }
    // Again with --rotate, against a fresh fake that calls the keys live again and with the
    // validation cache gone: the hooks' state alone says done, no second revoke.
    let (again, again_port) = fake(None);
    let cfg = config(&sb, "again.toml", again_port, "live", "");
    std::fs::remove_file(sb.path("state-rotate/leakhound/validation-cache.json")).unwrap();
    let args = ["--config", &cfg, "--audit-log", audit, "--rotate"];
    let r = scan(&sb, "rotate", &args);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc = r.json();
    let found = by_validator(&doc, &files);
    for name in ["github", "gitlab", "slack"] {
        assert_eq!(found[name]["validation"]["status"], "live", "{name}");
        assert_eq!(found[name]["hooks"][0]["status"], "done-before", "{name}");
    }
    assert!(revokes(again_port).is_empty(), "{:?}", revokes(again_port));
    assert_eq!(revokes(port).len(), 3, "{:?}", revokes(port));
    drop((server, again));
}

/// An endpoint override for a provider no validator checks (a typo) is an error naming the
/// key, as an unknown key is: it would move nothing, and the check would go to the provider's
/// own host unnoticed.
#[test]
fn an_endpoint_for_an_unknown_provider_is_an_error() {
    let sb = Sandbox::new();
    sb.write("data/t.txt", "nothing\n");
    let cfg = sb.write(
        "ops.toml",
        "[validate.endpoints]\ngithb = \"http://127.0.0.1:9/\"\n",
    );
    let r = scan(&sb, "typo", &["--config", cfg.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("validate.endpoints.githb"),
        "{}",
        r.stderr
    );
    let cfg = sb.write(
        "ok.toml",
        "[validate.endpoints]\ngithub = \"http://127.0.0.1:9/\"\n",
    );
    let r = scan(&sb, "ok", &["--config", cfg.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}
