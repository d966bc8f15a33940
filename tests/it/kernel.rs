//! `kernel install` and the kernel it installs, with a real ipykernel driven by a real
//! Jupyter client (jupyter_client, nbclient; pinned in tests/run.sh) on 127.0.0.1.
//! tests/fixtures/kernel/driver.py runs the cells and records every message the client
//! receives on iopub, shell and stdin. The same driver with the plain `python3` kernel is
//! the reference: it must show each credential, or these tests would prove nothing.

use crate::util::{fake_aws, pin, require_python_modules, to_run, Run, Sandbox};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const KERNEL: &str = "leakhound-python3";

/// Jupyter's Python packages, at the versions tests/run.sh pins.
#[track_caller]
fn require_jupyter() {
    let want = pin("IPYKERNEL");
    let found = require_python_modules(
        &["ipykernel", "jupyter_client", "zmq", "nbclient", "nbformat"],
        &format!(
            "pip install ipykernel=={want} jupyter_client=={} pyzmq=={} nbclient=={} nbformat=={}",
            pin("JUPYTER_CLIENT"),
            pin("PYZMQ"),
            pin("NBCLIENT"),
            pin("NBFORMAT")
        ),
        "from importlib.metadata import version; print(version('ipykernel'))",
    );
    if found != want {
        eprintln!(
            "note: ipykernel {found} is installed; the tests are pinned to {want} (tests/run.sh)"
        );
    }
}

/// `kernel install --prefix` into the sandbox; the Jupyter data directory to search.
fn install(sb: &Sandbox) -> PathBuf {
    let prefix = sb.path("prefix");
    let r = sb.run(&["kernel", "install", "--prefix", prefix.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    prefix.join("share/jupyter")
}

/// The driver in `mode` against `kernel`, with the credential in the kernel's environment
/// (under names of its own and AWS's), Jupyter's and IPython's files kept in the sandbox.
fn drive(sb: &Sandbox, data: &Path, mode: &str, kernel: &str, out: &str, cred: &Creds) -> Run {
    let driver = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kernel/driver.py");
    let tmp = sb.path("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let r = to_run(
        Command::new("python3")
            .arg(driver)
            .args([mode, kernel, sb.path(out).to_str().unwrap()])
            .current_dir(sb.dir.path())
            .env("JUPYTER_PATH", data)
            .env("JUPYTER_RUNTIME_DIR", sb.path("runtime"))
            .env("IPYTHONDIR", sb.path("ipython"))
            // The proxy's inner connection lives here, where the driver can look at it.
            .env("TMPDIR", tmp)
            // No leakhound.toml of the user's: the built-in rules only.
            .env("XDG_CONFIG_HOME", sb.path("config"))
            .env("LH_KEY_ID", &cred.id)
            .env("LH_SECRET", &cred.secret)
            .env("LH_SECRET2", &cred.second)
            .env("AWS_ACCESS_KEY_ID", &cred.id)
            .env("AWS_SECRET_ACCESS_KEY", &cred.secret)
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "driver {mode} {kernel} failed:\n{}", r.stderr);
    r
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every `n`-character piece of `s`.
fn pieces(s: &str, n: usize) -> Vec<&str> {
    (0..=s.len() - n).map(|i| &s[i..i + n]).collect()
}

/// The credentials a test hands the kernel: a key pair, and a second secret first printed
/// in pieces.
struct Creds {
    id: String,
    secret: String,
    second: String,
}

fn creds(seed: u64) -> Creds {
    let (id, secret) = fake_aws(seed);
    Creds {
        id,
        secret,
        second: fake_aws(seed + 1000).1,
    }
}

/// The first piece of a credential found in `text`: any 5 characters of a secret, or 8 of
/// the key id (shorter runs of capitals occur in ordinary output).
fn leaked<'a>(text: &str, c: &'a Creds) -> Option<&'a str> {
    pieces(&c.secret, 5)
        .into_iter()
        .chain(pieces(&c.second, 5))
        .chain(pieces(&c.id, 8))
        .find(|p| text.contains(p))
}

/// What a message says: everything but its header and parent header, whose ids and dates
/// the kernel and the client make up.
fn said(m: &Value) -> String {
    let msg = &m["msg"];
    serde_json::json!([msg["content"], msg["metadata"], msg["buffers"]]).to_string()
}

fn cell<'a>(msgs: &'a [Value], name: &str) -> impl Iterator<Item = &'a Value> + 'a {
    let name = name.to_string();
    msgs.iter().filter(move |m| m["cell"] == name.as_str())
}

fn stream_text(msgs: &[Value], name: &str) -> String {
    cell(msgs, name)
        .filter(|m| m["msg"]["msg_type"] == "stream")
        .map(|m| m["msg"]["content"]["text"].as_str().unwrap().to_string())
        .collect()
}

/// A notebook cell's source, which nbformat writes as a list of lines.
fn source(v: &Value) -> String {
    match v {
        Value::Array(lines) => lines.iter().filter_map(Value::as_str).collect(),
        v => v.as_str().unwrap_or_default().to_string(),
    }
}

fn note<'a>(msgs: &'a [Value], kind: &str) -> &'a Value {
    msgs.iter()
        .find(|m| m["kind"] == kind)
        .unwrap_or_else(|| panic!("the driver wrote no {kind} line"))
}

/// The cells of driver.py that put the credential out, each a different way.
const LEAKY: &[&str] = &[
    "pieces-new",
    "named",
    "bare",
    "key-id",
    "pieces",
    "fd1",
    "exception",
    "display",
    "result",
    "input",
    "environ",
];

#[test]
fn no_message_on_any_channel_holds_a_piece_of_a_secret() {
    require_jupyter();
    let sb = Sandbox::new();
    let data = install(&sb);
    let cred = creds(2601);
    let (id, secret) = (&cred.id, &cred.secret);

    let reference = drive(&sb, &data, "session", "python3", "direct.jsonl", &cred);
    let direct = lines(&sb.path("direct.jsonl"));
    for name in LEAKY {
        let all: String = cell(&direct, name).map(said).collect();
        let joined = stream_text(&direct, name);
        assert!(
            all.contains(secret.as_str())
                || all.contains(id.as_str())
                || joined.contains(secret.as_str())
                || joined.contains(cred.second.as_str()),
            "without leakhound, cell {name} should show the credential: {all}"
        );
    }
    // ipykernel echoes what a subprocess writes to fd 1 to its own stdout: the server's log.
    let log = |r: &Run| format!("{}{}", r.stdout, r.stderr);
    assert!(
        log(&reference).contains(secret.as_str()),
        "{}",
        log(&reference)
    );

    let proxied = drive(&sb, &data, "session", KERNEL, "masked.jsonl", &cred);
    let msgs = lines(&sb.path("masked.jsonl"));
    for m in msgs.iter().filter(|m| m["kind"] == "msg") {
        if let Some(p) = leaked(&said(m), &cred) {
            panic!("{p:?} reached the client in {}", m);
        }
    }
    if let Some(p) = leaked(&log(&proxied), &cred) {
        panic!("{p:?} reached the kernel's log:\n{}", log(&proxied));
    }
    for name in LEAKY {
        let all: String = cell(&msgs, name).map(said).collect();
        assert!(
            all.contains("[REDACTED:"),
            "cell {name}: its output should arrive, masked: {all}"
        );
    }
    // Each channel was masked, not only iopub: the error reply on shell, the prompt on stdin.
    let channel_of = |c: &str, t: &str| {
        cell(&msgs, c)
            .find(|m| m["msg"]["msg_type"] == t)
            .map(said)
            .unwrap_or_else(|| panic!("cell {c}: no {t}"))
    };
    assert!(channel_of("exception", "execute_reply").contains("[REDACTED:"));
    assert!(channel_of("input", "input_request").contains("paste [REDACTED:"));

    // Clean output arrives as it was, character for character, partial last line included.
    let clean = stream_text(&msgs, "clean");
    assert_eq!(clean, stream_text(&direct, "clean"));
    assert_eq!(
        clean,
        "clean: tab\there ünïcödé 😀 <b>&amp;</b> 12s 50%\nno newline at the end"
    );

    assert_eq!(note(&msgs, "heartbeat")["beating"], true);
    // The kernel behind the proxy is on Unix sockets in a directory only its user enters, and
    // the directory, with the inner key, is gone once the kernel is shut down.
    assert_eq!(
        note(&msgs, "inner")["dirs"],
        serde_json::json!([{"mode": "0o700", "transport": "ipc"}])
    );
    assert_eq!(note(&direct, "inner")["dirs"], serde_json::json!([]));
    let interrupt = note(&msgs, "interrupt");
    assert_eq!(interrupt["ename"], "KeyboardInterrupt", "{interrupt}");
    assert!(interrupt["seconds"].as_f64().unwrap() < 15.0, "{interrupt}");
    let restart = note(&msgs, "restart");
    assert_ne!(restart["before"], restart["after"], "{restart}");
    assert_eq!(
        restart["before_alive"], false,
        "the old kernel outlived a restart"
    );
    let shutdown = note(&msgs, "shutdown");
    assert_eq!(shutdown["manager_alive"], false, "{shutdown}");
    assert_eq!(
        shutdown["kernel_alive"], false,
        "the kernel outlived its shutdown"
    );
    assert_eq!(shutdown["inner"], serde_json::json!([]), "{shutdown}");
}

#[test]
fn nbclient_writes_a_masked_notebook() {
    require_jupyter();
    let sb = Sandbox::new();
    let data = install(&sb);
    let cred = creds(2602);
    drive(&sb, &data, "notebook", KERNEL, "out.ipynb", &cred);
    let raw = std::fs::read_to_string(sb.path("out.ipynb")).unwrap();
    let nb: Value = serde_json::from_str(&raw).unwrap();
    // The outputs of the cell whose code holds `code`.
    let outputs = |code: &str| {
        nb["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| source(&c["source"]).contains(code))
            .unwrap_or_else(|| panic!("no cell with {code:?}"))["outputs"]
            .to_string()
    };
    if let Some(p) = leaked(&raw, &cred) {
        panic!("{p:?} is in the notebook:\n{raw}");
    }
    let named = outputs("print(\"aws_secret_access_key = \" +");
    assert!(
        named.contains("aws_secret_access_key = [REDACTED:aws.secret-access-key]"),
        "{named}"
    );
    let raised = outputs("raise RuntimeError");
    assert!(raised.contains("\"ename\":\"RuntimeError\""), "{raised}");
    assert!(raised.contains("[REDACTED:"), "{raised}");
    let shown = outputs("display(HTML");
    assert!(shown.contains("<b>[REDACTED:"), "{shown}");
    assert!(raw.contains("no newline at the end"));
}

#[test]
fn install_status_and_uninstall_touch_only_leakhound_kernelspecs() {
    require_jupyter();
    let sb = Sandbox::new();
    let data = install(&sb);
    let prefix = sb.path("prefix");
    let prefix = prefix.to_str().unwrap();
    let dir = data.join("kernels").join(KERNEL);
    let spec: Value =
        serde_json::from_slice(&std::fs::read(dir.join("kernel.json")).unwrap()).unwrap();
    let argv: Vec<&str> = spec["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(Path::new(argv[0]).is_absolute(), "{argv:?}");
    assert_eq!(argv[1], dir.join("leakhound_kernel.py").to_str().unwrap());
    let lh = argv.iter().position(|a| *a == "--leakhound").unwrap();
    assert_eq!(argv[lh + 1], crate::util::bin().to_str().unwrap());
    let inner = &argv[argv.iter().position(|a| *a == "--").unwrap() + 1..];
    assert!(inner.contains(&"{connection_file}"), "{argv:?}");
    assert_eq!(spec["interrupt_mode"], "message");
    assert_eq!(spec["display_name"], "Python 3 (leakhound)");

    let status = sb.run(&["kernel", "status", "--prefix", prefix]);
    assert_eq!(status.code, 0, "{}", status.stderr);
    assert!(status.stdout.starts_with(KERNEL), "{}", status.stdout);
    assert!(
        status.stdout.contains("wraps python3:"),
        "{}",
        status.stdout
    );
    assert!(
        status.stdout.contains("(ok, this binary)"),
        "{}",
        status.stdout
    );

    // A kernelspec leakhound did not write is neither replaced nor removed.
    let other = sb.write(
        "prefix/share/jupyter/kernels/other/kernel.json",
        r#"{"argv": ["python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "other", "language": "python"}"#,
    );
    let r = sb.run(&["kernel", "install", "--name", "other", "--prefix", prefix]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("did not write"), "{}", r.stderr);
    let r = sb.run(&["kernel", "uninstall", "--name", "other", "--prefix", prefix]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(other.is_file());
    // Nor is one wrapped twice.
    let r = to_run(
        sb.cmd()
            .args([
                "kernel", "install", "--from", KERNEL, "--name", "twice", "--prefix", prefix,
            ])
            .env("JUPYTER_PATH", &data)
            .output()
            .unwrap(),
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("already runs behind leakhound"),
        "{}",
        r.stderr
    );

    let r = sb.run(&["kernel", "uninstall", "--prefix", prefix]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!dir.exists());
    assert!(other.is_file());
    let status = sb.run(&["kernel", "status", "--prefix", prefix]);
    assert!(
        status.stdout.starts_with("no leakhound kernelspec"),
        "{}",
        status.stdout
    );
    let r = sb.run(&["kernel", "uninstall", "--prefix", prefix]);
    assert_eq!(r.code, 2);
}

/// What real jupyter_client says about the kernelspec `name` found on `data` (JUPYTER_PATH
/// first, so the machine's own kernelspecs cannot answer): its display name and its files.
fn jupyter_sees(sb: &Sandbox, data: &Path, name: &str) -> (String, Vec<String>) {
    let r = to_run(
        Command::new("python3")
            .args([
                "-c",
                "import json, os, sys\n\
                 from jupyter_client.kernelspec import KernelSpecManager\n\
                 s = KernelSpecManager().get_kernel_spec(sys.argv[1])\n\
                 print(json.dumps([s.display_name, sorted(os.listdir(s.resource_dir))]))",
                name,
            ])
            .env("JUPYTER_PATH", data)
            .env("JUPYTER_DATA_DIR", sb.path("jupyter-user"))
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str(r.stdout.trim()).unwrap()
}

/// `jupyter kernelspec install` replaces a kernelspec of the same name without being asked
/// (jupyter_client accepts `--replace` and ignores it), and so does `kernel install` for the
/// kernelspecs it wrote; so there is no `--force`, which could only have meant "replace one
/// leakhound did not write", a thing it refuses to do (the test above).
#[test]
fn installing_again_replaces_as_jupyter_does_and_there_is_no_force() {
    require_jupyter();
    let sb = Sandbox::new();
    let data = sb.path("prefix/share/jupyter");

    // The convention, from jupyter_client itself: a second install of `reference`, with no
    // replace asked for, leaves only the second's files.
    let source = sb.path("reference");
    sb.write(
        "reference/kernel.json",
        r#"{"argv": ["python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "first", "language": "python"}"#,
    );
    sb.write("reference/stale.txt", "from the first install");
    let jupyter_install = || {
        let r = to_run(
            Command::new("python3")
                .args([
                    "-c",
                    "import sys\n\
                     from jupyter_client.kernelspec import KernelSpecManager\n\
                     KernelSpecManager().install_kernel_spec(sys.argv[1], 'reference', prefix=sys.argv[2])",
                    source.to_str().unwrap(),
                    sb.path("prefix").to_str().unwrap(),
                ])
                .output()
                .unwrap(),
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
    };
    jupyter_install();
    std::fs::remove_file(source.join("stale.txt")).unwrap();
    let second = r#"{"argv": ["python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "second", "language": "python"}"#;
    sb.write("reference/kernel.json", second);
    jupyter_install();
    let (shown, files) = jupyter_sees(&sb, &data, "reference");
    assert_eq!(
        (shown.as_str(), files),
        ("second", vec!["kernel.json".to_string()])
    );

    // leakhound's: installed, then installed again with nothing but a new display name.
    let data = install(&sb);
    let prefix = sb.path("prefix");
    let prefix = prefix.to_str().unwrap();
    let dir = data.join("kernels").join(KERNEL);
    std::fs::write(dir.join("stale.txt"), "from the first install").unwrap();
    let r = sb.run(&[
        "kernel",
        "install",
        "--display-name",
        "second",
        "--prefix",
        prefix,
    ]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let (shown, files) = jupyter_sees(&sb, &data, KERNEL);
    assert_eq!(shown, "second");
    assert!(!files.contains(&"stale.txt".to_string()), "{files:?}");
    assert!(files.contains(&"kernel.json".to_string()), "{files:?}");

    // A flag that would change nothing is refused rather than accepted and ignored.
    let r = sb.run(&["kernel", "install", "--force", "--prefix", prefix]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("--force"), "{}", r.stderr);
}

/// The masker's own protocol, without Python: what the proxy relies on.
#[test]
fn the_masker_keeps_clean_documents_byte_for_byte_and_holds_a_secret_in_pieces() {
    let sb = Sandbox::new();
    let (_, secret) = fake_aws(2603);
    let clean = r#"D[{"msg_id": "a1", "n": 1.50, "text": "caf\u00e9 ok\n"}, {}]"#;
    let input = format!(
        "{clean}\nD{{\"text\": \"aws_secret_access_key = {secret}\"}}\nD[\"{secret}\"]\n\
         Pstdout\t\"{}\"\nIstdout\nPstdout\t\"{} done\\n\"\nnonsense\n",
        &secret[..20],
        &secret[20..]
    );
    let r = sb.run_stdin(&["kernel", "mask"], Some(input.as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(out[0], clean);
    assert_eq!(
        out[1],
        r#"D{"text": "aws_secret_access_key = [REDACTED:aws.secret-access-key]"}"#
    );
    // Known by value from then on, bare.
    assert_eq!(out[2], r#"D["[REDACTED:aws.secret-access-key]"]"#);
    // Half of it is held, through an idle pause, until the rest comes.
    assert_eq!(out[3], r#"T1"""#);
    assert_eq!(out[4], r#"T1"""#);
    assert_eq!(out[5], r#"T0"[REDACTED:aws.secret-access-key] done\n""#);
    assert!(out[6].starts_with('E'), "{}", out[6]);
    assert!(!r.stderr.contains(&secret[..10]));
}

/// Fail closed: with a masker that cannot start, the client gets notices in place of the
/// kernel's output, and a working session (replies, idle states) to show them in.
#[test]
fn a_kernel_whose_masker_fails_withholds_its_output() {
    require_jupyter();
    let sb = Sandbox::new();
    let data = install(&sb);
    let cred = creds(2604);
    // leakhound for every command but the masker, which exits at once.
    let broken = sb.write(
        "broken-leakhound",
        format!(
            "#!/bin/sh\n[ \"$1 $2\" = \"kernel mask\" ] && exit 3\nexec '{}' \"$@\"\n",
            crate::util::bin().display()
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(0o755)).unwrap();
    let spec = data.join("kernels").join(KERNEL).join("kernel.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&spec).unwrap()).unwrap();
    let argv = v["argv"].as_array_mut().unwrap();
    let at = argv.iter().position(|a| a == "--leakhound").unwrap() + 1;
    argv[at] = broken.to_str().unwrap().into();
    std::fs::write(&spec, v.to_string()).unwrap();

    let run = drive(&sb, &data, "notebook", KERNEL, "out.ipynb", &cred);
    let raw = std::fs::read_to_string(sb.path("out.ipynb")).unwrap();
    if let Some(p) = leaked(&raw, &cred) {
        panic!("{p:?} is in the notebook:\n{raw}");
    }
    if let Some(p) = leaked(&format!("{}{}", run.stdout, run.stderr), &cred) {
        panic!("{p:?} reached the kernel's log:\n{}", run.stderr);
    }
    let nb: Value = serde_json::from_str(&raw).unwrap();
    let first = nb["cells"][0]["outputs"].to_string();
    assert!(first.contains("output withheld"), "{first}");
}
