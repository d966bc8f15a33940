//! `scrub` on SQLite databases, as agents keep them (Codex's thread history, Copilot's session
//! store with a full-text index), built and read back by the real SQLite in Python's sqlite3:
//! every piece of every secret leaves the file and its write-ahead log, full-text index
//! included, and everything else reads back as it was.

use crate::util::{bin, fake_aws, fake_github, to_run};
use std::process::Command;

/// Python's sqlite3: create the database (WAL mode, a frame left in the log), or read it back.
const PY: &str = r#"
import json, sqlite3, sys
mode, path = sys.argv[1], sys.argv[2]
if mode == "create":
    key, secret, token = sys.argv[3:6]
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE thread_items (id INTEGER PRIMARY KEY, kind TEXT, body TEXT, raw BLOB, n INTEGER)")
    db.execute("CREATE VIRTUAL TABLE search_index USING fts5(content)")
    rows = [
        ("tool_output", f"AWS_ACCESS_KEY_ID={key}\nAWS_SECRET_ACCESS_KEY={secret}\n", None, 1),
        ("message", "the secret again: " + secret, None, 2),
        ("json", json.dumps({"output": f"token: {token}", "exit": 0}), json.dumps({"cmd": f"echo {token}"}).encode(), 3),
        ("clean", "nothing to see here", b"\x00\x01binary", 4),
    ]
    db.executemany("INSERT INTO thread_items (kind, body, raw, n) VALUES (?, ?, ?, ?)", rows)
    db.executemany("INSERT INTO search_index (content) VALUES (?)", [(r[1],) for r in rows])
    db.commit()
    # The connection stays open while leakhound runs? No: closing checkpoints; keep the log by
    # copying it aside first, as a live agent's would be.
    import shutil
    shutil.copy(path + "-wal", path + "-wal.keep")
    db.close()
    shutil.copy(path + "-wal.keep", path + "-wal")
    import os; os.remove(path + "-wal.keep")
else:
    db = sqlite3.connect(path)
    out = {
        "items": db.execute("SELECT kind, body, raw, n FROM thread_items ORDER BY id").fetchall(),
        "hits": db.execute("SELECT count(*) FROM search_index WHERE search_index MATCH 'nothing'").fetchone()[0],
        "integrity": db.execute("PRAGMA integrity_check").fetchone()[0],
    }
    print(json.dumps([[k, b, r.decode("latin-1") if isinstance(r, bytes) else r, n] for k, b, r, n in out["items"]]))
    print(out["hits"], out["integrity"])
"#;

/// `leakhound scrub --force` (the files are seconds old) with `flags`, over `path`.
fn scrub(flags: &[&str], path: &std::path::Path) -> crate::util::Run {
    let mut cmd = Command::new(bin());
    cmd.args(["scrub", "--force"]).args(flags).arg(path);
    to_run(cmd.output().unwrap())
}

fn py(args: &[&str]) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(PY)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every file in `dir`, name and bytes, in name order.
fn all_bytes(dir: &std::path::Path) -> String {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut s = String::new();
    for p in files {
        s.push_str(&format!("\n== {}\n", p.display()));
        s.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
    }
    s
}

/// No 6-character piece, in any case (a full-text index keeps words lowercased).
fn assert_gone(haystack: &str, secret: &str, what: &str) {
    let hay = haystack.to_lowercase();
    for w in secret.to_lowercase().as_bytes().windows(6) {
        let piece = std::str::from_utf8(w).unwrap();
        assert!(
            !hay.contains(piece),
            "{what}: a piece of a secret ({piece}) is still in the files"
        );
    }
}

#[test]
fn a_database_and_its_log_lose_every_piece_of_every_secret() {
    crate::util::require_tool("python3");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("thread_history_1.sqlite");
    let (key, secret) = fake_aws(71);
    let token = fake_github(72);
    py(&["create", db.to_str().unwrap(), &key, &secret, &token]);
    assert!(dir.path().join("thread_history_1.sqlite-wal").exists());
    let before = all_bytes(dir.path());
    assert!(
        before.contains(&secret) && before.contains(&token),
        "the fixture holds the secrets"
    );

    // A dry run changes nothing and says which rows.
    let r = scrub(&["--dry-run"], &db);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("table thread_items row 1: aws.access-key-id"),
        "{}",
        r.stdout
    );
    assert!(
        all_bytes(dir.path()) == before,
        "a dry run changed the folder"
    );

    let r = scrub(&[], dir.path());
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("0 error(s)"), "{}", r.stderr);
    let after = all_bytes(dir.path());
    for (s, what) in [
        (&key, "key id"),
        (&secret, "secret"),
        (&token, "GitHub token"),
    ] {
        assert_gone(&after, s, what);
    }
    // SQLite still reads it; the rows keep their shape and what held no secret.
    let back = py(&["read", db.to_str().unwrap()]);
    let mut lines = back.lines();
    let items: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(lines.next().unwrap(), "1 ok", "{back}");
    assert_eq!(items[0][1], "AWS_ACCESS_KEY_ID=[REDACTED:aws.access-key-id]\nAWS_SECRET_ACCESS_KEY=[REDACTED:aws.secret-access-key]\n");
    assert!(
        items[1][1]
            .as_str()
            .unwrap()
            .starts_with("the secret again: [REDACTED"),
        "{back}"
    );
    let json: serde_json::Value = serde_json::from_str(items[2][1].as_str().unwrap()).unwrap();
    assert_eq!(json["exit"], 0, "{back}");
    assert_eq!(
        items[3],
        serde_json::json!(["clean", "nothing to see here", "\u{0}\u{1}binary", 4])
    );

    // Scrubbed again: nothing left to mask.
    let r = scrub(&[], dir.path());
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}
