//! `leakhound hook AGENT --server`: the answer of a hook server is the answer of one process
//! per event, byte for byte on stdout and stderr; a change to the flags or the config is a new
//! server; a socket folder others may enter is not used; an idle server ends; a connection
//! that is not an event costs the server nothing else; `agents install --server` installs the
//! flag and `uninstall` takes it back out.

use crate::util::{fake_aws, run_with_stdin, Run, Sandbox};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A sandbox whose HOME and runtime folder are its own; its hook servers are stopped when it
/// is dropped (and would idle out after 20 s anyway).
struct Served {
    sb: Sandbox,
}

impl Served {
    fn new() -> Served {
        let sb = Sandbox::new();
        std::fs::create_dir_all(sb.path("home")).unwrap();
        std::fs::create_dir_all(sb.path("run")).unwrap();
        Served { sb }
    }

    fn sockets_dir(&self) -> PathBuf {
        self.sb.path("run/leakhound")
    }

    /// `leakhound hook ARGS` on `event`, from `cwd` (the sandbox when `None`).
    fn hook(&self, args: &[&str], event: &[u8]) -> Run {
        let mut c = self.sb.cmd();
        c.arg("hook")
            .args(args)
            .env("HOME", self.sb.path("home"))
            .env("XDG_RUNTIME_DIR", self.sb.path("run"))
            .env("CLAUDE_CONFIG_DIR", self.sb.path("claude"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("LEAKHOUND_FINGERPRINT_KEY");
        let r = run_with_stdin(c, Some(event));
        assert_eq!(r.code, 0, "{}", r.stderr);
        r
    }

    /// The sockets of the servers running now.
    fn sockets(&self) -> Vec<PathBuf> {
        let Ok(dir) = std::fs::read_dir(self.sockets_dir()) else {
            return Vec::new();
        };
        let mut v: Vec<PathBuf> = dir
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "sock"))
            .collect();
        v.sort();
        v
    }

    /// Each server's process id and the number of events it answered, as its lock file
    /// says (`PID EVENTS`).
    fn servers(&self) -> Vec<(i32, u64)> {
        let Ok(dir) = std::fs::read_dir(self.sockets_dir()) else {
            return Vec::new();
        };
        dir.map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "lock"))
            .map(|p| {
                let text = std::fs::read_to_string(&p).unwrap();
                let (pid, events) = text
                    .trim()
                    .split_once(' ')
                    .unwrap_or_else(|| panic!("{text:?}"));
                (pid.parse().unwrap(), events.parse().unwrap())
            })
            .collect()
    }

    fn pids(&self) -> Vec<i32> {
        self.servers().into_iter().map(|(pid, _)| pid).collect()
    }

    /// Events answered by any server.
    fn answered(&self) -> u64 {
        self.servers().into_iter().map(|(_, n)| n).sum()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        for pid in self.pids() {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}

fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// A Claude Bash event whose output holds a fresh fake key pair and `extra`.
fn bash_event(seed: u64, extra: &str) -> (String, String, Vec<u8>) {
    let (key, secret) = fake_aws(seed);
    let ev = serde_json::json!({
        "session_id": "s1", "transcript_path": "/t.jsonl", "cwd": "/app",
        "permission_mode": "default", "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": {"command": "env"}, "tool_use_id": "toolu_1",
        "tool_response": {
            "stdout": format!("AWS_ACCESS_KEY_ID={key}\nAWS_SECRET_ACCESS_KEY={secret}\n{extra}\n"),
            "stderr": "", "interrupted": false, "isImage": false
        },
    });
    (key, secret, serde_json::to_vec(&ev).unwrap())
}

const IDLE: &[&str] = &["--server-idle", "20"];

fn with<'a>(base: &[&'a str], more: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(more).copied().collect()
}

#[test]
fn a_server_answers_every_event_as_one_process_does() {
    let s = Served::new();
    let (key, secret, bash) = bash_event(1201, "");
    let persisted_text = format!("aws_access_key_id = {key}\naws_secret_access_key = {secret}\n");
    // Masking less than the built-in rules is said on stderr when the engine is built: the
    // server says it with every answer too.
    let weak =
        s.sb.write("weak.toml", "[rules]\ndisable = [\"github.*\"]\n");
    let events: Vec<(&str, Vec<u8>)> = vec![
        ("bash", bash.clone()),
        ("not json", b"{\"hook_event_name\": ".to_vec()),
        ("prompt", br#"{"session_id":"s","transcript_path":"/t","cwd":"/","hook_event_name":"UserPromptSubmit","prompt":"hi"}"#.to_vec()),
        ("unknown event", br#"{"session_id":"s","hook_event_name":"SomethingNew"}"#.to_vec()),
    ];
    for flags in [
        vec!["claude"],
        vec!["claude", "--config", weak.to_str().unwrap()],
    ] {
        for (name, ev) in &events {
            let alone = s.hook(&flags, ev);
            let served = s.hook(&with(&flags, &with(IDLE, &["--server=wait"])), ev);
            assert_eq!(served.stdout, alone.stdout, "{name} {flags:?}");
            // Equal stderr also says no "hook server not used" warning: the server answered.
            assert_eq!(served.stderr, alone.stderr, "{name} {flags:?}");
            crate::util::assert_no_piece(&served.stdout, &secret, name);
            crate::util::assert_no_piece(&served.stdout, &key, name);
        }
    }
    let weak_said = s.hook(&["claude", "--config", weak.to_str().unwrap()], &bash);
    assert!(
        weak_said.stderr.contains("makes masking weaker"),
        "{}",
        weak_said.stderr
    );
    assert_eq!(s.sockets().len(), 2, "one server per set of flags");
    // The persisted output is rewritten by the server, in Claude's config folder as the
    // client's environment places it.
    let file = s.sb.write(
        "claude/projects/-app/s1/tool-results/toolu_01.txt",
        &persisted_text,
    );
    let ev = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/agents/claude/post_tool_use_bash_persisted.json"),
    )
    .unwrap()
    .replace("@@AWS_KEY_ID@@", &key)
    .replace("@@AWS_SECRET@@", &secret)
    .replace("@@PERSISTED@@", file.to_str().unwrap());
    let r = s.hook(
        &with(&["claude"], &with(IDLE, &["--server=wait"])),
        ev.as_bytes(),
    );
    assert_eq!(r.stderr, "");
    let after = std::fs::read_to_string(&file).unwrap();
    crate::util::assert_no_piece(&after, &secret, "persisted output");
    assert!(
        after.contains("[REDACTED:aws.secret-access-key]"),
        "{after}"
    );
    // Every event sent with --server=wait was answered by a server: 4 events with each of
    // the two sets of flags, and the persisted one.
    assert_eq!(s.answered(), 9, "{:?}", s.servers());
    // Every server's process is alive, and its socket is closed to others.
    let pids = s.pids();
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|&p| alive(p)), "{pids:?}");
    use std::os::unix::fs::PermissionsExt;
    for sock in s.sockets() {
        let mode = std::fs::metadata(&sock).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{}", sock.display());
    }
}

#[test]
fn a_changed_rules_file_is_answered_by_a_new_server() {
    let s = Served::new();
    let token = "ZQX-7f3a9c2e51b84d06a7c3e9f1";
    let rules = s.sb.write("extra.toml", "");
    let args = |mode| with(&["claude", "--rules", "extra.toml"], &with(IDLE, &[mode]));
    let (_, _, ev) = bash_event(1202, token);
    let before = s.hook(&args("--server=wait"), &ev);
    assert!(before.stdout.contains(token), "{}", before.stdout);
    assert_eq!(s.sockets().len(), 1);
    std::fs::write(
        &rules,
        "[[rules]]\nid = \"test.zqx-token\"\nname = \"ZQX token\"\npattern = '''\\b(?P<secret>ZQX-[0-9a-f]{24})\\b'''\nkeywords = [\"zqx-\"]\nexamples = [\"ZQX-9c41e07b2d58fa36c1e4b7d0\"]\n",
    )
    .unwrap();
    let after = s.hook(&args("--server=wait"), &ev);
    assert!(!after.stdout.contains(token), "{}", after.stdout);
    assert_eq!(
        after.stdout,
        s.hook(&["claude", "--rules", "extra.toml"], &ev).stdout
    );
    assert_eq!(
        s.sockets().len(),
        2,
        "the first server still holds the old rules"
    );
    // `auto` finds the running server: no third one is started.
    let auto = s.hook(&args("--server"), &ev);
    assert_eq!(auto.stdout, after.stdout);
    assert_eq!(auto.stderr, "");
    assert_eq!(s.sockets().len(), 2);
    assert_eq!(s.answered(), 3, "{:?}", s.servers());
}

#[test]
fn a_socket_folder_others_may_enter_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let s = Served::new();
    let dir = s.sockets_dir();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (key, secret, ev) = bash_event(1203, "");
    let alone = s.hook(&["claude"], &ev);
    for mode in ["--server", "--server=wait"] {
        let r = s.hook(&with(&["claude"], &with(IDLE, &[mode])), &ev);
        // Answered here, masked as ever, with a warning that names the folder.
        assert_eq!(r.stdout, alone.stdout, "{mode}");
        assert!(
            r.stderr.contains("hook server not used")
                && r.stderr.contains("is not a folder of this user's alone"),
            "{mode}: {}",
            r.stderr
        );
        crate::util::assert_no_piece(&r.stdout, &secret, mode);
        crate::util::assert_no_piece(&r.stderr, &key, mode);
    }
    assert!(s.sockets().is_empty());
    assert_eq!(s.answered(), 0);
}

#[test]
fn an_idle_server_ends_and_the_next_event_starts_another() {
    let s = Served::new();
    let (_, _, ev) = bash_event(1204, "");
    let args = ["claude", "--server-idle", "1", "--server=wait"];
    let first = s.hook(&args, &ev);
    assert_eq!(first.stderr, "");
    let pid = s.pids()[0];
    assert!(alive(pid));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while (alive(pid) || !s.sockets().is_empty()) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(!alive(pid), "the server did not end");
    assert!(s.sockets().is_empty(), "its socket was left behind");
    assert!(s.servers().is_empty(), "its lock file was left behind");
    let again = s.hook(&args, &ev);
    assert_eq!(again.stdout, first.stdout);
    assert_eq!(again.stderr, "");
    assert_ne!(s.pids(), vec![pid]);
}

#[test]
fn agents_install_server_adds_the_flag_and_uninstall_takes_it_out() {
    let sb = Sandbox::new();
    let home = sb.path("home");
    let settings = home.join(".claude/settings.json");
    let before = "{\n  \"model\": \"opus\"\n}\n";
    sb.write("home/.claude/settings.json", before);
    let run = |args: &[&str]| {
        let mut c = sb.cmd();
        c.args(args)
            .env("HOME", &home)
            .env_remove("CLAUDE_CONFIG_DIR");
        let r = run_with_stdin(c, None);
        assert_eq!(r.code, 0, "{}", r.stderr);
    };
    run(&["agents", "install", "--agent", "claude", "--server"]);
    let text = std::fs::read_to_string(&settings).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let command = v["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(command.ends_with("hook claude --server"), "{command}");
    run(&["agents", "uninstall", "--agent", "claude"]);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), before);
}

/// Bytes that are not an event (another program, a client cut off, a length that lies) cost
/// the server nothing but that connection: it goes on answering, and counts none of them.
#[test]
fn a_server_survives_connections_that_are_not_events() {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    let s = Served::new();
    let (_, _, ev) = bash_event(1205, "");
    let args = with(&["claude"], &with(IDLE, &["--server=wait"]));
    let first = s.hook(&args, &ev);
    assert_eq!(first.stderr, "");
    let socket = s.sockets().pop().unwrap();
    // The key is the socket's name: `hook-HEX.sock`.
    let name = socket.file_stem().unwrap().to_str().unwrap();
    let key: Vec<u8> = (0..16)
        .map(|i| u8::from_str_radix(&name[5 + 2 * i..7 + 2 * i], 16).unwrap())
        .collect();
    let mut lying = b"LHQ1".to_vec();
    lying.extend_from_slice(&key);
    lying.extend_from_slice(&(1u64 << 62).to_le_bytes());
    lying.extend_from_slice(b"{\"hook_event_name\":");
    let mut wrong_key = b"LHQ1".to_vec();
    wrong_key.extend_from_slice(&[0u8; 16]);
    for (what, bytes) in [
        ("an HTTP request", b"GET / HTTP/1.0\r\n\r\n".to_vec()),
        ("nothing", Vec::new()),
        ("half a header", b"LHQ1\x00\x01".to_vec()),
        ("a length that lies", lying),
        ("another key", wrong_key),
    ] {
        let mut c = UnixStream::connect(&socket).unwrap();
        c.write_all(&bytes).unwrap();
        c.shutdown(std::net::Shutdown::Write).unwrap();
        let mut back = Vec::new();
        let _ = c.read_to_end(&mut back);
        // Only another key is answered (with a refusal, and no event); the rest are dropped.
        if what == "another key" {
            assert_eq!(back, b"LHA1\x01", "{what}");
        } else {
            assert!(back.is_empty(), "{what}: {back:?}");
        }
    }
    let again = s.hook(&args, &ev);
    assert_eq!(again.stdout, first.stdout);
    assert_eq!(again.stderr, "");
    assert_eq!(s.answered(), 2, "{:?}", s.servers());
}
