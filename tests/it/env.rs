//! `leakhound env`: a live process's environment, dump files, and the variable as context.

use crate::util::{bin, fake_aws, fake_github, Sandbox};
use std::process::{Command, Stdio};

#[test]
fn pid_environment_names_each_variable() {
    let (id, secret) = fake_aws(400);
    let gh = fake_github(400);
    let mut child = Command::new("sh")
        .args(["-c", "echo ready; exec sleep 30"])
        .stdout(Stdio::piped())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("AWS_ACCESS_KEY_ID", &id)
        .env("AWS_SECRET_ACCESS_KEY", &secret)
        .env("MY_SERVICE_TOKEN", "Xq7vN2pL9wRt4ZkB8mHs3JdC")
        .env("GH", &gh)
        .env("HOME_PAGE", "https://example.org/docs")
        .spawn()
        .unwrap();
    // /proc/PID/environ shows the new environment only once exec has happened: the shell's
    // first line says it has (sh's environment and then sleep's are the one given here).
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "ready\n");
    let pid = child.id().to_string();
    let out = Command::new(bin())
        .args(["env", "--pid", &pid, "--format", "jsonl"])
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    child.kill().ok();
    child.wait().ok();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    crate::util::assert_no_piece(&text, &secret, "env --pid report");
    let mut got: Vec<(String, String)> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|v| {
            (
                v["provenance"]["variable"].as_str().unwrap().to_string(),
                v["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    got.sort();
    let want = [
        ("AWS_ACCESS_KEY_ID", "aws.access-key-id"),
        ("AWS_SECRET_ACCESS_KEY", "aws.secret-access-key"),
        ("GH", "github.pat"),
        ("MY_SERVICE_TOKEN", "generic.token"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn dump_files_in_the_usual_shapes() {
    let sb = Sandbox::new();
    let (id, secret) = fake_aws(401);
    sb.write(
        "exported.sh",
        format!("# from a CI job\nexport AWS_ACCESS_KEY_ID={id}\ndeclare -x AWS_SECRET_ACCESS_KEY=\"{secret}\"\nexport PLAIN=1\n"),
    );
    sb.write(
        "proc.environ",
        format!("PATH=/bin\0AWS_SECRET_ACCESS_KEY={secret}\0"),
    );
    let r = sb.run(&["env", "exported.sh", "proc.environ", "--format", "jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let f = r.jsonl();
    let vars: Vec<String> = f
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        vars,
        [
            "exported.sh:AWS_ACCESS_KEY_ID",
            "exported.sh:AWS_SECRET_ACCESS_KEY",
            "proc.environ:AWS_SECRET_ACCESS_KEY"
        ]
    );
    let clean = sb.write("clean.env", "A=1\nDEBUG=true\nPASSWORD=${DB_PASSWORD}\n");
    assert_eq!(sb.run(&["env", clean.to_str().unwrap()]).code, 0);
}

#[test]
fn missing_pid_or_file_is_a_clear_error() {
    let sb = Sandbox::new();
    let r = sb.run(&["env", "--pid", "4000000"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("pid 4000000"), "{}", r.stderr);
    assert_eq!(sb.run(&["env", "no-such.env"]).code, 2);
}

#[test]
fn runtime_audits_credential_files_under_home() {
    let sb = Sandbox::new();
    let (id, secret) = fake_aws(402);
    sb.write(
        "home/.aws/credentials",
        format!("[default]\naws_access_key_id = {id}\naws_secret_access_key = {secret}\n"),
    );
    sb.write(
        "home/.netrc",
        "machine api.example.org login bot password Zq8wX2vN7pL4rT9k\n",
    );
    let out = sb
        .cmd()
        .args(["env", "--runtime", "--format", "jsonl"])
        .env_clear()
        .env("HOME", sb.path("home"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{text}");
    for needle in [
        ".aws/credentials",
        "aws.secret-access-key",
        ".netrc",
        "netrc.password",
    ] {
        assert!(text.contains(needle), "missing {needle}: {text}");
    }
}

#[test]
fn aws_credential_sets_pair_by_variable_name_and_by_proximity() {
    let sb = Sandbox::new();
    let (id1, s1) = fake_aws(410);
    let (id2, s2) = fake_aws(411);
    sb.write(
        "two.env",
        format!("PROD_AWS_ACCESS_KEY_ID={id1}\nSTAGE_AWS_ACCESS_KEY_ID={id2}\nSTAGE_AWS_SECRET_ACCESS_KEY={s2}\nPROD_AWS_SECRET_ACCESS_KEY={s1}\n"),
    );
    let f = sb.run(&["env", "two.env", "--format", "jsonl"]).jsonl();
    let set_of = |var: &str| {
        f.iter()
            .find(|x| x["provenance"]["variable"] == var)
            .unwrap()["credential_set"]
            .clone()
    };
    assert!(set_of("PROD_AWS_ACCESS_KEY_ID").is_string());
    assert_eq!(
        set_of("PROD_AWS_ACCESS_KEY_ID"),
        set_of("PROD_AWS_SECRET_ACCESS_KEY")
    );
    assert_eq!(
        set_of("STAGE_AWS_ACCESS_KEY_ID"),
        set_of("STAGE_AWS_SECRET_ACCESS_KEY")
    );
    assert_ne!(
        set_of("PROD_AWS_ACCESS_KEY_ID"),
        set_of("STAGE_AWS_ACCESS_KEY_ID")
    );

    // In a file, by proximity; a lone key id forms no set.
    let filler = "# nothing here\n".repeat(400);
    sb.write(
        "creds.ini",
        format!("[a]\naws_access_key_id = {id1}\naws_secret_access_key = {s1}\n{filler}[b]\naws_access_key_id = {id2}\n"),
    );
    let f = sb.run(&["scan", "creds.ini", "--format", "jsonl"]).jsonl();
    assert_eq!(f.len(), 3);
    assert!(f[0]["credential_set"].is_string());
    assert_eq!(f[0]["credential_set"], f[1]["credential_set"]);
    assert!(f[2]["credential_set"].is_null());
}

#[test]
fn scan_names_variables_in_env_shaped_files_and_pairs_by_name() {
    let sb = Sandbox::new();
    let (id1, s1) = fake_aws(420);
    let (id2, _) = fake_aws(421);
    sb.write(
        "deploy/prod.env",
        format!("export PROD_AWS_ACCESS_KEY_ID={id1}\nSTAGE_AWS_ACCESS_KEY_ID={id2}\nPROD_AWS_SECRET_ACCESS_KEY={s1}\n"),
    );
    sb.write("src/app.py", format!("KEY = '{id2}'\n"));
    let f = sb.run(&["scan", "--format", "jsonl"]).jsonl();
    let env: Vec<_> = f
        .iter()
        .filter(|x| x["path"] == "deploy/prod.env")
        .collect();
    let vars: Vec<&str> = env
        .iter()
        .map(|x| x["provenance"]["variable"].as_str().unwrap())
        .collect();
    assert_eq!(
        vars,
        [
            "PROD_AWS_ACCESS_KEY_ID",
            "STAGE_AWS_ACCESS_KEY_ID",
            "PROD_AWS_SECRET_ACCESS_KEY"
        ]
    );
    // The secret pairs with PROD's id by name, not with STAGE's id next to it.
    assert_eq!(env[0]["credential_set"], env[2]["credential_set"]);
    assert!(env[1]["credential_set"].is_null());
    // Ordinary files carry no variable.
    let py = f.iter().find(|x| x["path"] == "src/app.py").unwrap();
    assert!(py["provenance"].get("variable").is_none());
}

/// Issue 12, item 5: `cat /proc/PID/environ > proc-1000-environ` is an environment whatever
/// its name. Each finding names its variable, AWS parts pair by name (not by nearness), a
/// line is a record (a newline inside a value does not start one), and start..end are the
/// capture's own bytes.
#[test]
fn scan_reads_a_nul_separated_capture_as_an_environment() {
    let sb = Sandbox::new();
    let (prod_id, prod_secret) = fake_aws(430);
    let (stage_id, stage_secret) = fake_aws(431);
    let records = [
        "PATH=/usr/local/bin:/usr/bin".to_string(),
        format!("PROD_AWS_ACCESS_KEY_ID={prod_id}"),
        // A value with newlines in it: still one record, one line.
        "MOTD=welcome\nto the\nbuild host".to_string(),
        format!("STAGE_AWS_ACCESS_KEY_ID={stage_id}"),
        format!("STAGE_AWS_SECRET_ACCESS_KEY={stage_secret}"),
        // More than the 2 KiB that pairs parts by nearness in a file.
        format!("LS_COLORS={}", "di=01;34:ln=01;36:".repeat(150)),
        format!("PROD_AWS_SECRET_ACCESS_KEY={prod_secret}"),
        "HOME=/root".to_string(),
    ];
    let capture: Vec<u8> = records.iter().flat_map(|r| r.bytes().chain([0])).collect();
    sb.write("captures/proc-1000-environ", &capture);
    // A command line is NUL-separated too, but its `-Dkey=value` are not variables.
    let gh = fake_github(432);
    sb.write(
        "captures/proc-1000-cmdline",
        format!("java\0-Dgithub.token={gh}\0-jar\0app.jar\0"),
    );
    let r = sb.run(&["scan", "captures", "--format", "jsonl", "--show-secrets"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let found = r.jsonl();
    let env: Vec<_> = found
        .iter()
        .filter(|f| f["path"] == "captures/proc-1000-environ")
        .collect();
    // (variable, line, column, context) of each, in the capture's order.
    let got: Vec<(&str, u64, u64, &str)> = env
        .iter()
        .map(|f| {
            (
                f["provenance"]["variable"].as_str().unwrap_or("<none>"),
                f["line"].as_u64().unwrap(),
                f["column"].as_u64().unwrap(),
                f["context"].as_str().unwrap(),
            )
        })
        .collect();
    let want = [
        ("PROD_AWS_ACCESS_KEY_ID", 2, 24, records[1].as_str()),
        ("STAGE_AWS_ACCESS_KEY_ID", 4, 25, records[3].as_str()),
        ("STAGE_AWS_SECRET_ACCESS_KEY", 5, 29, records[4].as_str()),
        ("PROD_AWS_SECRET_ACCESS_KEY", 7, 28, records[6].as_str()),
    ];
    assert_eq!(got, want, "{env:#?}");
    for f in &env {
        let (s, e) = (f["start"].as_u64().unwrap(), f["end"].as_u64().unwrap());
        assert_eq!(
            &capture[s as usize..e as usize],
            f["secret"].as_str().unwrap().as_bytes()
        );
        assert_eq!(f["provenance"]["kind"], "file");
    }
    // Paired by the variables' prefix: PROD's id with PROD's secret 2 KiB away, not with
    // STAGE's secret next to it.
    assert!(env[0]["credential_set"].is_string(), "{:#}", env[0]);
    assert_eq!(env[0]["credential_set"], env[3]["credential_set"]);
    assert_eq!(env[1]["credential_set"], env[2]["credential_set"]);
    assert_ne!(env[0]["credential_set"], env[1]["credential_set"]);
    let cmd = found
        .iter()
        .find(|f| f["path"] == "captures/proc-1000-cmdline")
        .unwrap_or_else(|| panic!("no finding in the command line: {found:#?}"));
    assert_eq!(cmd["rule"], "github.pat");
    assert!(cmd["provenance"].get("variable").is_none(), "{cmd:#}");

    // `leakhound env` reads the same capture the same way: variables and lines agree.
    let dump = sb
        .run(&["env", "captures/proc-1000-environ", "--format", "jsonl"])
        .jsonl();
    let lines: Vec<(&str, u64)> = dump
        .iter()
        .map(|f| {
            (
                f["provenance"]["variable"].as_str().unwrap(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut lines = lines;
    lines.sort_by_key(|l| l.1);
    let want: Vec<(&str, u64)> = want.iter().map(|w| (w.0, w.1)).collect();
    assert_eq!(lines, want);
}

/// A binary file that merely holds NULs, even with `NAME=value` strings in it (a core dump,
/// a padded blob), is still binary: skipped and named, not read as an environment.
#[test]
fn a_binary_file_with_nuls_and_assignments_is_still_binary() {
    let sb = Sandbox::new();
    let (_, secret) = fake_aws(433);
    let strings = format!("PATH=/bin\0AWS_SECRET_ACCESS_KEY={secret}\0HOME=/root\0");
    let mut core = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x04\0\x3e\0\x01\0\0\0".to_vec();
    core.extend_from_slice(strings.as_bytes());
    sb.write("core.1000", &core);
    // No other control bytes, but padded: more NUL than text.
    let mut padded = strings.clone().into_bytes();
    padded.extend(std::iter::repeat_n(0u8, 4096));
    sb.write("padded.bin", &padded);
    let r = sb.run(&["scan", ".", "--format", "json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let doc = r.json();
    assert_eq!(doc["summary"]["skipped_binary"], 2, "{:#}", doc["summary"]);
    assert_eq!(
        doc["summary"]["skipped"],
        serde_json::json!([
            {"path": "core.1000", "reason": "binary"},
            {"path": "padded.bin", "reason": "binary"}
        ])
    );
}

/// Regression #16: one byte that is not UTF-8 in a NUL-separated environment capture made
/// the whole capture "binary", every secret in it skipped.
#[test]
fn a_capture_with_a_stray_byte_is_still_an_environment() {
    let sb = Sandbox::new();
    let (id, secret) = fake_aws(1620);
    let mut capture = b"PATH=/usr/bin\0LANG=caf\xe9\0".to_vec();
    capture.extend(
        format!("AWS_ACCESS_KEY_ID={id}\0AWS_SECRET_ACCESS_KEY={secret}\0HOME=/root\0").bytes(),
    );
    sb.write("proc-7-environ", &capture);
    let r = sb.run(&["scan", ".", "--format", "json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = r.json();
    let vars: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["provenance"]["variable"].as_str())
        .collect();
    assert!(vars.contains(&"AWS_SECRET_ACCESS_KEY"), "{v}");
    assert_eq!(v["summary"]["skipped_binary"], 0, "{v}");
}

/// Regression #16: `env` dropped a variable whose name is not UTF-8, and its value with it.
/// It is read with the name shown lossily, and a warning says so.
#[test]
fn env_reads_a_name_that_is_not_utf8_and_says_so() {
    let sb = Sandbox::new();
    let gh = fake_github(1621);
    let mut dump = b"PATH=/bin\0GH\xffTOKEN=".to_vec();
    dump.extend(format!("{gh}\0HOME=/root\0").bytes());
    sb.write("dump.environ", &dump);
    let r = sb.run(&["env", "dump.environ", "--format", "json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = r.json();
    let f = &v["findings"][0];
    assert_eq!(f["provenance"]["variable"], "GH\u{fffd}TOKEN", "{v}");
    let warnings = v["warnings"].to_string();
    assert!(warnings.contains("not UTF-8"), "{warnings}");
    assert!(!warnings.contains(&gh[4..]), "{warnings}");
}

/// A variable's name is shown beside its finding (`path:NAME`, `provenance.variable`): a
/// secret in the name is masked there as in the context, whether a rule found it (a `.env`
/// line whose name is a token) or it is a generated word of the name (`TOKEN_ghp_…`, which no
/// rule takes after `_`). An ordinary name, however varied, stays readable.
#[test]
fn a_secret_in_a_variable_name_is_masked_where_the_name_is_shown() {
    use crate::synth::{Rng, ALNUM, DIGITS};
    let sb = Sandbox::new();
    let gh = fake_github(440);
    let mut r = Rng::new(440);
    let slack = format!(
        "xoxb-{}-{}-{}",
        r.chars(DIGITS, 11),
        r.chars(DIGITS, 12),
        r.chars(ALNUM, 24)
    );
    sb.write(
        "dump.env",
        format!("{gh}={slack}\nMY_SERVICE_API_TOKEN_V2={slack}\n"),
    );
    sb.write("environ", format!("TOKEN_{gh}={slack}\0"));
    for args in [
        &["scan", "dump.env", "--format", "json"][..],
        &["scan", "dump.env", "--format", "jsonl"],
        &["scan", "dump.env"],
        &["env", "environ"],
        &["env", "environ", "--format", "jsonl"],
    ] {
        let r = sb.run(args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        crate::util::assert_no_piece(
            &format!("{}{}", r.stdout, r.stderr),
            &gh,
            &format!("{args:?}"),
        );
    }
    let r = sb.run(&["env", "environ", "--format", "jsonl"]);
    assert_eq!(r.jsonl()[0]["path"], "environ:TOKEN_ghp_********");
    let found = sb.run(&["scan", "dump.env", "--format", "jsonl"]).jsonl();
    let vars: Vec<&str> = found
        .iter()
        .filter_map(|f| f["provenance"]["variable"].as_str())
        .collect();
    assert!(vars.contains(&"MY_SERVICE_API_TOKEN_V2"), "{vars:?}");
}
