//! `filter` and `run` with real processes: split writes with pauses, prompts, ANSI colour,
//! exit statuses and signals. The chunking property (against the engine's one-shot result,
//! with idle flushes, ANSI and `\r`) is in `filter_trust.rs`.

use crate::util::{bin, fake_aws, fake_github, to_run, Sandbox};
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[test]
fn secret_written_in_pieces_with_pauses_is_masked() {
    let sb = Sandbox::new();
    let (id, secret) = fake_aws(300);
    let script = format!(
        "import sys, time\nline = 'aws_secret_access_key = {secret}\\nid={id}\\n'\nfor i in range(0, len(line), 5):\n    sys.stdout.write(line[i:i+5]); sys.stdout.flush(); time.sleep(0.02)\n"
    );
    sb.write("leak.py", script);
    crate::util::require_tool("python3");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "python3 leak.py | {} filter --report found.jsonl",
            bin().display()
        ))
        .current_dir(sb.dir.path())
        .output()
        .unwrap();
    let r = to_run(out);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains(&secret[..12]), "{}", r.stdout);
    assert!(!r.stdout.contains(&id), "{}", r.stdout);
    assert_eq!(
        r.stdout,
        "aws_secret_access_key = [REDACTED:aws.secret-access-key]\nid=[REDACTED:aws.access-key-id]\n"
    );
    let report = std::fs::read_to_string(sb.path("found.jsonl")).unwrap();
    assert_eq!(report.lines().count(), 2);
    assert!(!report.contains(&secret));
}

/// `leakhound filter` with its stdin and stdout piped to the test.
fn spawn_filter() -> std::process::Child {
    Command::new(bin())
        .arg("filter")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Read what the child has written so far, waiting at most `wait`.
fn read_for(rx: &mpsc::Receiver<Vec<u8>>, wait: Duration) -> Vec<u8> {
    let end = Instant::now() + wait;
    let mut got = Vec::new();
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(b) => got.extend(b),
            Err(_) => break,
        }
    }
    got
}

#[test]
fn prompt_forwarded_when_idle_but_no_fragment_of_a_secret() {
    let (_, secret) = fake_aws(301);
    let mut child = spawn_filter();
    let mut stdin = child.stdin.take().unwrap();
    let rx = crate::util::arriving(child.stdout.take().unwrap());
    stdin.write_all(b">>> ").unwrap();
    stdin.flush().unwrap();
    assert_eq!(
        read_for(&rx, Duration::from_secs(2)),
        b">>> ",
        "a prompt goes out while idle"
    );
    // A complete line goes out at once, keywords (`token`, `password`) and all.
    stdin
        .write_all(b"token_count=3 password_field=form.password\n")
        .unwrap();
    stdin.flush().unwrap();
    assert_eq!(
        read_for(&rx, Duration::from_millis(500)),
        b"token_count=3 password_field=form.password\n"
    );
    // A PEM header holds its block until the block is complete (or the stream ends).
    stdin
        .write_all(b"-----BEGIN RSA PRIVATE KEY-----\n")
        .unwrap();
    stdin.flush().unwrap();
    assert_eq!(
        read_for(&rx, Duration::from_millis(400)),
        b"",
        "a key header is held"
    );
    stdin.write_all(b"not a key after all\n").unwrap();
    write!(stdin, "aws_secret_access_key = {}", &secret[..20]).unwrap();
    stdin.flush().unwrap();
    let early = read_for(&rx, Duration::from_millis(600));
    assert!(
        !String::from_utf8_lossy(&early).contains(&secret[..20]),
        "fragment leaked"
    );
    writeln!(stdin, "{}", &secret[20..]).unwrap();
    drop(stdin);
    let mut all = early;
    all.extend(read_for(&rx, Duration::from_secs(3)));
    assert_eq!(
        String::from_utf8_lossy(&all),
        "-----BEGIN RSA PRIVATE KEY-----\nnot a key after all\naws_secret_access_key = [REDACTED:aws.secret-access-key]\n"
    );
    assert!(child.wait().unwrap().success());
}

/// Issue 27: a secret on the line after a line that ends with its key id is masked, and the
/// key id's line is not held for it: it goes out at once (the secret that may follow is
/// read with that line as context), and a secret written in pieces leaks no piece.
#[test]
fn a_secret_on_the_line_after_its_key_id_is_masked_without_holding_the_key_ids_line() {
    let (id, secret) = fake_aws(306);
    let mut child = spawn_filter();
    let mut stdin = child.stdin.take().unwrap();
    let rx = crate::util::arriving(child.stdout.take().unwrap());
    writeln!(stdin, "aws_access_key_id = {id}").unwrap();
    stdin.flush().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&read_for(&rx, Duration::from_millis(400))),
        "aws_access_key_id = [REDACTED:aws.access-key-id]\n",
        "the key id's line goes out at once"
    );
    write!(stdin, "{}", &secret[..20]).unwrap();
    stdin.flush().unwrap();
    let early = read_for(&rx, Duration::from_millis(600));
    assert!(early.is_empty(), "{:?}", String::from_utf8_lossy(&early));
    writeln!(stdin, "{}", &secret[20..]).unwrap();
    // A CSV row split over two lines, in one write.
    let (id2, secret2) = fake_aws(307);
    writeln!(stdin, "{id2},\n{secret2}").unwrap();
    drop(stdin);
    let all = String::from_utf8_lossy(&read_for(&rx, Duration::from_secs(3))).into_owned();
    assert_eq!(
        all,
        "[REDACTED:aws.secret-access-key.next-line]\n[REDACTED:aws.access-key-id],\n[REDACTED:aws.secret-access-key.next-line]\n"
    );
    assert!(child.wait().unwrap().success());
    // `run` masks the child's output the same way.
    let sb = Sandbox::new();
    let r = sb.run(&[
        "run",
        "--",
        "sh",
        "-c",
        &format!("echo 'key: {id}'; sleep 0.2; echo '{secret}'"),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "key: [REDACTED:aws.access-key-id]\n[REDACTED:aws.secret-access-key.next-line]\n"
    );
}

#[test]
fn ansi_colour_inside_a_secret_does_not_hide_it() {
    let sb = Sandbox::new();
    let gh = fake_github(302);
    let input = format!("token: \x1b[1;31m{}\x1b[0m{}\n", &gh[..10], &gh[10..]);
    let r = sb.run_stdin(&["filter"], Some(input.as_bytes()));
    assert_eq!(r.code, 0);
    assert!(!r.stdout.contains(&gh[10..]), "{:?}", r.stdout);
    assert!(r.stdout.contains("[REDACTED:github.pat]"), "{:?}", r.stdout);
    assert!(r.stdout.starts_with("token: "));
}

#[test]
fn binary_garbage_passes_through_unchanged() {
    let mut rng = crate::synth::Rng::new(303);
    let bytes: Vec<u8> = (0..300_000).map(|_| rng.next() as u8).collect();
    let mut child = spawn_filter();
    let mut stdin = child.stdin.take().unwrap();
    let input = bytes.clone();
    let w = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    w.join().unwrap().unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout.len(), bytes.len());
    assert!(out.stdout == bytes, "bytes changed");
}

#[test]
fn a_100_mb_line_streams_through_in_bounded_pieces() {
    let gh = fake_github(305);
    let mut child = spawn_filter();
    let mut stdin = child.stdin.take().unwrap();
    let secret = gh.clone();
    let w = std::thread::spawn(move || {
        let block = vec![b'z'; 1 << 20];
        for _ in 0..100 {
            stdin.write_all(&block)?;
        }
        stdin.write_all(format!(" {secret} tail").as_bytes())
    });
    let out = child.wait_with_output().unwrap();
    w.join().unwrap().unwrap();
    assert!(out.status.success());
    let expected_len = 100 * (1 << 20) + " [REDACTED:github.pat] tail".len();
    assert_eq!(out.stdout.len(), expected_len);
    assert!(out.stdout.ends_with(b" [REDACTED:github.pat] tail"));
    assert!(out.stdout[..100 << 20].iter().all(|&b| b == b'z'));
}

#[test]
fn run_keeps_separate_streams_and_the_exit_status() {
    let sb = Sandbox::new();
    let gh = fake_github(304);
    let r = sb.run(&[
        "run",
        "--",
        "sh",
        "-c",
        &format!("echo out {gh}; echo err {gh} >&2; exit 7"),
    ]);
    assert_eq!(r.code, 7);
    assert_eq!(r.stdout, "out [REDACTED:github.pat]\n");
    assert_eq!(r.stderr, "err [REDACTED:github.pat]\n");
    let killed = sb.run(&["run", "--", "sh", "-c", "kill -TERM $$"]);
    assert_eq!(killed.code, 128 + 15);
    let missing = sb.run(&["run", "--", "/no/such/program"]);
    assert_eq!(missing.code, 127, "as a shell says a missing command");
    assert!(missing.stderr.contains("/no/such/program"));
}

/// A signal sent to `leakhound run` alone (kill(1), a supervisor) reaches the child, which
/// dies of it, and run exits as a shell would report that: 128 + the signal.
#[test]
fn run_forwards_sigterm_sigint_and_sighup_to_the_child() {
    use std::io::BufRead;
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        let started = Instant::now();
        let mut child = Command::new(bin())
            .args(["run", "--", "sh", "-c", "echo ready $$; exec sleep 30"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        // The child's first line has come through run's pump: the child is running and run
        // knows its pid (it is recorded before the pumps start), so the signal is not sent
        // to a run still starting up.
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let grandchild: i32 = line
            .strip_prefix("ready ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("{line:?}"));
        // SAFETY: kill with a pid this test spawned.
        unsafe {
            libc::kill(child.id() as i32, sig);
        }
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(128 + sig), "signal {sig}: {status:?}");
        assert!(started.elapsed() < Duration::from_secs(10), "signal {sig}");
        // The child itself got it: it is gone, not left running after run reported its
        // death (run reaps it; kill(pid, 0) fails once it is).
        // SAFETY: signal 0 only checks that the pid exists.
        let alive = unsafe { libc::kill(grandchild, 0) } == 0;
        if alive {
            // SAFETY: the pid is the child run started and did not stop.
            unsafe { libc::kill(grandchild, libc::SIGKILL) };
            panic!("signal {sig}: run exited but its child is still running");
        }
    }
}

#[test]
fn child_closing_stdout_early_is_fine() {
    let sb = Sandbox::new();
    let r = sb.run(&[
        "run",
        "--",
        "sh",
        "-c",
        "exec 1>&-; sleep 0.1; echo still >&2",
    ]);
    assert_eq!(r.code, 0);
    assert_eq!(r.stderr, "still\n");
}

/// What `scan` finds in a decoded view, the filter masks too: a token base64-encoded (as a
/// Kubernetes secret or a basic-auth header carries it), percent-encoded in a URL, escaped in
/// a JSON string. The report names the decoded secret's rule and encoding.
#[test]
fn encoded_secrets_are_masked_as_scan_finds_them() {
    use base64::Engine as _;
    let sb = Sandbox::new();
    let gh = crate::util::fake_github(77);
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("GITHUB_TOKEN={gh}"));
    let escaped = gh.replacen('_', "\\u005f", 1);
    let input = format!("data: {b64}\n{{\"note\": \"token is {escaped}\"}}\nplain line\n");
    let r = sb.run_stdin(
        &["filter", "--report", "found.jsonl"],
        Some(input.as_bytes()),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains(&b64), "{}", r.stdout);
    assert!(!r.stdout.contains(&escaped[8..]), "{}", r.stdout);
    assert!(r.stdout.ends_with("plain line\n"), "{}", r.stdout);
    assert_eq!(
        r.stdout.matches("[REDACTED:github.pat]").count(),
        2,
        "{}",
        r.stdout
    );
    let report = std::fs::read_to_string(sb.path("found.jsonl")).unwrap();
    let encodings: Vec<String> = report
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["encoding"].to_string())
        .collect();
    assert_eq!(encodings, ["\"base64\"", "\"escapes\""], "{report}");
    assert!(!report.contains(&gh), "the report is redacted");
}
