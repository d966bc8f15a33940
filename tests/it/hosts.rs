//! `--validate-hosts`: a credential that names its own host (a postgres:// URL) is checked by
//! a real login at that host, and only when the operator says so. A real PostgreSQL server
//! (Debian's `postgresql`, started here in a temporary directory, reached on 127.0.0.1)
//! tells a live URL from a wrong password; without the flag nothing connects to it.

use crate::util::{require_tool, to_run, Run, Sandbox, Server};
use std::net::{Shutdown, TcpListener};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// PostgreSQL's server binaries: where `initdb` lives (Debian puts them under
/// /usr/lib/postgresql/VERSION/bin and links some onto PATH).
fn pg_bin() -> PathBuf {
    let on_path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("initdb"))
        .find(|p| p.is_file());
    let found = on_path.or_else(|| {
        let mut v: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| Some(e.ok()?.path().join("bin/initdb")))
            .filter(|p| p.is_file())
            .collect();
        v.sort();
        v.pop()
    });
    match found {
        Some(p) => std::fs::canonicalize(p)
            .unwrap()
            .parent()
            .unwrap()
            .to_path_buf(),
        None => {
            require_tool("initdb");
            unreachable!()
        }
    }
}

/// `cmd` as the `postgres` user when this runs as root (PostgreSQL refuses root); `setpriv`
/// execs in place, so killing the child kills the server.
fn as_server_user(bin: &Path) -> Command {
    // SAFETY: geteuid has no preconditions and touches no memory.
    if unsafe { libc::geteuid() } != 0 {
        return Command::new(bin);
    }
    let mut c = Command::new("setpriv");
    c.args([
        "--reuid=postgres",
        "--regid=postgres",
        "--clear-groups",
        "--",
    ])
    .arg(bin);
    c
}

/// A PostgreSQL server, reached on 127.0.0.1 through a counting relay, with a role `app`
/// whose password is `password`.
struct Postgres {
    server: Server,
    /// The relay's port, which the URL names.
    port: u16,
    /// Connections made to it so far.
    connections: Arc<AtomicUsize>,
    _dir: tempfile::TempDir,
}

fn postgres(password: &str) -> Postgres {
    let bin = pg_bin();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("pw"), "admin-pw\n").unwrap();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
        let st = Command::new("chown")
            .args(["-R", "postgres"])
            .arg(root)
            .status()
            .unwrap();
        assert!(st.success());
    }
    let out = as_server_user(&bin.join("initdb"))
        .arg("-D")
        .arg(root.join("data"))
        .args([
            "-U",
            "admin",
            "--auth=scram-sha-256",
            "--no-sync",
            "-E",
            "UTF8",
        ])
        .arg(format!("--pwfile={}", root.join("pw").display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "initdb: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The role the URL names, created in single-user mode: no server, no client needed.
    let sql = format!("CREATE ROLE app LOGIN PASSWORD '{password}';\n");
    let mut single = as_server_user(&bin.join("postgres"));
    single
        .args(["--single", "-D"])
        .arg(root.join("data"))
        .arg("postgres")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = single.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(sql.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    // The server listens on a Unix socket in its own directory only, so no TCP port is
    // guessed; the URL's port is a relay the test holds, which counts each connection
    // (rather than reading the server's log for them).
    let mut cmd = as_server_user(&bin.join("postgres"));
    cmd.arg("-D")
        .arg(root.join("data"))
        .args(["-c", "listen_addresses=", "-c", "fsync=off"])
        .args(["-p", "5432", "-k"])
        .arg(root);
    // Its first line says it started (one that exits at once is reported with what it said);
    // ready is what pg_isready, PostgreSQL's own probe, says.
    let server = Server::start("postgres", cmd, |_| Some(String::new()));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ready = Command::new(bin.join("pg_isready"))
            .args(["-q", "-p", "5432", "-h"])
            .arg(root)
            .status()
            .unwrap();
        if ready.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "postgres not ready within 60 s:\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let (port, connections) = relay(root.join(".s.PGSQL.5432"));
    Postgres {
        server,
        port,
        connections,
        _dir: dir,
    }
}

/// A TCP port on 127.0.0.1 (picked by the system, held for the test run) whose every
/// connection is counted and carried to the Unix socket `to`.
fn relay(to: PathBuf) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for tcp in listener.incoming() {
            let Ok(tcp) = tcp else { continue };
            counted.fetch_add(1, Ordering::SeqCst);
            let Ok(unix) = UnixStream::connect(&to) else {
                continue;
            };
            let (mut tcp_in, mut unix_out) = (tcp.try_clone().unwrap(), unix.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut tcp_in, &mut unix_out);
                let _ = unix_out.shutdown(Shutdown::Write);
            });
            let (mut unix_in, mut tcp_out) = (unix, tcp);
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut unix_in, &mut tcp_out);
                let _ = tcp_out.shutdown(Shutdown::Write);
            });
        }
    });
    (port, count)
}

fn scan(sb: &Sandbox, args: &[&str]) -> Run {
    to_run(
        sb.cmd()
            .args([
                "scan",
                "data",
                "--format",
                "json",
                "--min-confidence",
                "low",
            ])
            .args(args)
            .env("XDG_STATE_HOME", sb.path("state"))
            .output()
            .unwrap(),
    )
}

fn validation(r: &Run) -> serde_json::Value {
    let doc = r.json();
    let f = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "database.postgres-url")
        .unwrap_or_else(|| panic!("no postgres finding: {doc}"))
        .clone();
    f["validation"].clone()
}

#[test]
fn a_postgres_url_is_logged_into_at_its_own_host_only_with_validate_hosts() {
    let mut rng = crate::synth::Rng::new(0x5eed_0a11);
    // No hex digits: the report and the audit log hold hex fingerprints, and a 5-character
    // piece of the password must not turn up in them by chance.
    let charset = "ghijkmnopqrstuvwxyzGHJKLMNPQRSTUVWXYZ";
    let password = rng.chars(charset, 20);
    let wrong = rng.chars(charset, 20);
    let pg = postgres(&password);
    let url = |pw: &str| format!("postgres://app:{pw}@127.0.0.1:{}/postgres", pg.port);
    let connections = |pg: &Postgres| pg.connections.load(Ordering::SeqCst);

    // Without --validate-hosts: unknown, saying why, and nothing connects.
    let sb = Sandbox::new();
    sb.write("data/app.env", format!("DATABASE_URL={}\n", url(&password)));
    let audit = sb.path("audit.jsonl");
    let r = scan(&sb, &["--validate", "--audit-log", audit.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = validation(&r);
    assert_eq!(v["status"], "unknown", "{v}");
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.contains("--validate-hosts") && reason.contains(&format!("127.0.0.1:{}", pg.port)),
        "{reason}"
    );
    assert_eq!(connections(&pg), 0, "{}", pg.server.log());

    // With it: a real login says live, with who and where.
    let r = scan(
        &sb,
        &[
            "--validate",
            "--validate-hosts",
            "--audit-log",
            audit.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = validation(&r);
    assert_eq!(v["status"], "live", "{v}");
    let id = &v["identity"];
    assert_eq!(
        (
            id["provider"].as_str(),
            id["user"].as_str(),
            id["org"].as_str()
        ),
        (Some("postgres"), Some("app"), Some("postgres")),
        "{v}"
    );
    assert_eq!(connections(&pg), 1, "{}", pg.server.log());
    let log = std::fs::read_to_string(&audit).unwrap();
    assert!(log.contains("app@127.0.0.1"), "{log}");
    crate::util::assert_no_piece(&log, &password, "the audit log");
    crate::util::assert_no_piece(&r.stdout, &password, "the report");
    crate::util::assert_no_piece(&r.stderr, &password, "stderr");

    // A wrong password is invalid, in the server's own words.
    let sb = Sandbox::new();
    sb.write("data/app.env", format!("DATABASE_URL={}\n", url(&wrong)));
    let r = scan(&sb, &["--validate", "--validate-hosts"]);
    let v = validation(&r);
    assert_eq!(v["status"], "invalid", "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("28P01"),
        "{v}: {}",
        pg.server.log()
    );
    // Nothing listening at the URL's port: unknown, never invalid.
    let sb = Sandbox::new();
    let nobody = crate::util::refused_port();
    sb.write(
        "data/app.env",
        format!("DATABASE_URL=postgres://app:{password}@127.0.0.1:{nobody}/postgres\n"),
    );
    let v = validation(&scan(&sb, &["--validate", "--validate-hosts"]));
    assert_eq!(v["status"], "unknown", "{v}");
    assert!(v["reason"].as_str().unwrap().contains("network"), "{v}");
}
