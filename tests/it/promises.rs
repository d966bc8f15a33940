//! Documented promises no other test held (issue 29): the maskers fail closed on a bad
//! config and on a read error; hook log files are private and never written through a
//! symlink; runs started at once agree on one fingerprint key; an archive's entry limit.

use crate::util::{fake_aws, fake_github, Sandbox};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Stdio};

/// docs/security.md: a masker that cannot load its config passes nothing through, and
/// `run` does not start the command whose output it could not mask.
#[test]
fn filter_and_run_fail_closed_on_a_bad_config() {
    let sb = Sandbox::new();
    let gh = fake_github(2910);
    // Malformed TOML. (An allowlist regex that does not compile is no error here: a masker
    // reads no allowlist, so nothing is switched off by one.)
    sb.write("bad.toml", "[allow\npaths = 3\n");
    // A rule file that cannot be read: the masker would run with fewer rules than asked.
    sb.write("missing-rules.toml", "[rules]\nfiles = [\"nope.toml\"]\n");
    // Standard input from a file, not a pipe: a filter that exits before reading must not
    // fail the test's own write (EPIPE).
    let input = sb.write("input.txt", format!("token {gh}\n"));
    let filter = |cfg: &str| {
        let out = sb
            .cmd()
            .args(["filter", "--config", cfg])
            .stdin(std::fs::File::open(&input).unwrap())
            .output()
            .unwrap();
        crate::util::to_run(out)
    };
    let r = filter("bad.toml");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stdout, "",
        "a filter that could not start passed its input through"
    );
    let r = sb.run(&[
        "run",
        "--config",
        "bad.toml",
        "--",
        "sh",
        "-c",
        &format!("touch ran; echo {gh}"),
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    assert!(!sb.path("ran").exists(), "the command ran without a masker");
    // A missing config given by name is no better than a broken one, nor a missing rule file.
    for cfg in ["none.toml", "missing-rules.toml"] {
        let r = filter(cfg);
        assert_eq!((r.code, r.stdout.as_str()), (2, ""), "{cfg}: {}", r.stderr);
    }
}

/// README: a filter that cannot scan because its input fails (a read error) stops, exits 2,
/// and never forwards the bytes it was holding. The input is a TCP socket the test resets
/// once the filter has read a secret's first half: its next read fails with ECONNRESET.
#[test]
fn filter_fails_closed_on_a_read_error_with_half_a_secret_held() {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::{AsRawFd, OwnedFd};
    let sb = Sandbox::new();
    let token = fake_github(2915);
    // No newline after it: the filter must hold it, since the rest could still come.
    let held = &token[..24];
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (input, _) = listener.accept().unwrap();
    // The test's own handle on the filter's socket, to see what is still unread on it.
    let watch = input.try_clone().unwrap();
    let mut child = sb
        .cmd()
        .arg("filter")
        .stdin(Stdio::from(OwnedFd::from(input)))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (&client)
        .write_all(format!("line one clean\ntoken {held}").as_bytes())
        .unwrap();
    // Ready when the first line is out and the kernel holds nothing unread for the filter.
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert_eq!(first, "line one clean\n");
    let unread = || {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through the pointer given, on a socket we hold.
        let rc = unsafe { libc::ioctl(watch.as_raw_fd(), libc::FIONREAD, &mut n) };
        assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
        n
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while unread() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the filter never read its input"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // Close with a reset (SO_LINGER 0) rather than an end of input.
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: setsockopt reads `linger` for its size, on a socket this test owns.
    let rc = unsafe {
        libc::setsockopt(
            client.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&raw const linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0);
    drop(client);
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2), "{status}: {err}");
    assert!(err.contains("reset"), "the read error is not named: {err}");
    crate::util::assert_no_piece(&rest, &held[4..], "the filter's output after the error");
    crate::util::assert_no_piece(&err, &held[4..], "the filter's stderr");
}

/// docs/agents.md: `--report` and `--audit-log` files are created 0600, and a symlink in
/// their place is refused (the event is still answered) rather than written through.
#[test]
fn hook_log_files_are_private_and_never_written_through_a_symlink() {
    let sb = Sandbox::new();
    let (key, secret) = fake_aws(2911);
    let fixture = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/agents/claude/post_tool_use_bash.json"),
    )
    .unwrap();
    let event = fixture
        .replace("@@AWS_KEY_ID@@", &key)
        .replace("@@AWS_SECRET@@", &secret);
    let args = [
        "hook",
        "claude",
        "--report",
        "found.jsonl",
        "--audit-log",
        "audit.jsonl",
    ];
    let r = sb.run_stdin(&args, Some(event.as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    for f in ["found.jsonl", "audit.jsonl"] {
        let meta = std::fs::metadata(sb.path(f)).unwrap();
        assert!(meta.len() > 0, "{f} is empty");
        assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{f}");
    }
    // Both replaced by symlinks to a file elsewhere: it is left as it was.
    let target = sb.write("elsewhere/keep.txt", "untouched\n");
    for f in ["found.jsonl", "audit.jsonl"] {
        std::fs::remove_file(sb.path(f)).unwrap();
        std::os::unix::fs::symlink(&target, sb.path(f)).unwrap();
    }
    let r = sb.run_stdin(&args, Some(event.as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let answer = r.json();
    assert!(
        answer.get("hookSpecificOutput").is_some(),
        "not answered: {answer}"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched\n");
    assert!(r.stderr.contains("warning"), "{}", r.stderr);
    crate::util::assert_no_piece(&r.stdout, &secret, "the hook's answer");
    crate::util::assert_no_piece(&r.stderr, &secret, "the hook's stderr");
}

/// docs/security.md: the first run makes the fingerprint key under the state directory; runs
/// started at the same moment on a fresh machine all use that one key.
#[test]
fn runs_started_at_once_agree_on_one_fingerprint_key() {
    let sb = Sandbox::new();
    sb.write(
        "data/t.env",
        format!("GITHUB_TOKEN={}\n", fake_github(2912)),
    );
    let state = sb.path("state");
    let children: Vec<Child> = (0..8)
        .map(|_| {
            sb.cmd()
                .args(["scan", "data", "--format", "json"])
                .env("XDG_STATE_HOME", &state)
                .env_remove("LEAKHOUND_FINGERPRINT_KEY")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    for c in children {
        let r = crate::util::to_run(c.wait_with_output().unwrap());
        assert_eq!(r.code, 1, "{}", r.stderr);
        assert!(!r.stderr.contains("fingerprint"), "{}", r.stderr);
        let doc = r.json();
        seen.insert((
            doc["fingerprint_key_id"].to_string(),
            doc["findings"][0]["fingerprint"].to_string(),
        ));
    }
    assert_eq!(seen.len(), 1, "runs disagree: {seen:?}");
    // And a later run still agrees: the key was kept, not made per run.
    let later = sb
        .cmd()
        .args(["scan", "data", "--format", "json"])
        .env("XDG_STATE_HOME", &state)
        .env_remove("LEAKHOUND_FINGERPRINT_KEY")
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&later.stdout).unwrap();
    let first = seen.into_iter().next().unwrap();
    assert_eq!(doc["fingerprint_key_id"].to_string(), first.0);
}

/// README: at most 100,000 entries per archive; past it the rest is skipped with a warning.
#[test]
fn an_archive_past_100000_entries_is_cut_there_with_a_warning() {
    let sb = Sandbox::new();
    let early = format!("GITHUB_TOKEN={}\n", fake_github(2913));
    let late = format!("GITHUB_TOKEN={}\n", fake_github(2914));
    let mut files: Vec<(String, Vec<u8>)> = vec![("a/first.env".into(), early.into_bytes())];
    files.extend((0..100_000).map(|i| (format!("e/{i}"), Vec::new())));
    files.push(("z/last.env".into(), late.into_bytes()));
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(p, d)| (p.as_str(), &d[..])).collect();
    sb.write("many.zip", crate::archive::zip_of(&refs));
    let r = sb.run(&["scan", "many.zip", "--format", "json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        finding_paths(&r.json()),
        ["many.zip!a/first.env"],
        "the entry past the limit was read"
    );
    assert!(
        r.stderr.contains("more than 100000 entries"),
        "{}",
        r.stderr
    );
}

/// A zip (zip64 where an offset needs it) of `entries`, each (name, size, bytes): an entry
/// with bytes is written; one without is `size` zero bytes left as a hole, so a file of
/// gigabytes costs neither the disk nor the time to write it. Entries are stored (no
/// compression): inflating them is reading them, 1:1, so no ratio limit can cut them first.
fn sparse_zip(path: &std::path::Path, entries: &[(&str, u64, Option<&[u8]>)]) {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut zero_crcs: std::collections::HashMap<u64, u32> = Default::default();
    let mut central = Vec::new();
    let mut offset = 0u64;
    for &(name, size, bytes) in entries {
        let crc = match bytes {
            Some(b) => crc32fast::hash(b),
            None => *zero_crcs
                .entry(size)
                .or_insert_with(|| crc32fast::hash(&vec![0; size as usize])),
        };
        let size32 = u32::try_from(size).expect("entries under 4 GiB each");
        let mut local = Vec::new();
        local.extend(0x0403_4b50u32.to_le_bytes());
        local.extend(45u16.to_le_bytes()); // version needed: zip64
        local.extend([0u8; 4]); // flags, method 0 (stored)
        local.extend([0u8; 4]); // time, date
        local.extend(crc.to_le_bytes());
        local.extend(size32.to_le_bytes());
        local.extend(size32.to_le_bytes());
        local.extend((name.len() as u16).to_le_bytes());
        local.extend(0u16.to_le_bytes());
        local.extend(name.as_bytes());
        f.write_all(&local).unwrap();
        match bytes {
            Some(b) => f.write_all(b).unwrap(),
            None => {
                f.seek(SeekFrom::Current(size as i64)).unwrap();
            }
        }
        // Central directory entry; the offset moves to a zip64 extra field past 4 GiB.
        let big = offset >= 0xFFFF_FFFF;
        central.extend(0x0201_4b50u32.to_le_bytes());
        central.extend(45u16.to_le_bytes());
        central.extend(45u16.to_le_bytes());
        central.extend([0u8; 8]); // flags, method, time, date
        central.extend(crc.to_le_bytes());
        central.extend(size32.to_le_bytes());
        central.extend(size32.to_le_bytes());
        central.extend((name.len() as u16).to_le_bytes());
        central.extend((if big { 12u16 } else { 0 }).to_le_bytes());
        central.extend(0u16.to_le_bytes()); // comment length
        central.extend(0u16.to_le_bytes()); // disk
        central.extend(0u16.to_le_bytes()); // internal attributes
        central.extend(0u32.to_le_bytes()); // external attributes
        central.extend((if big { 0xFFFF_FFFF } else { offset as u32 }).to_le_bytes());
        central.extend(name.as_bytes());
        if big {
            central.extend(1u16.to_le_bytes());
            central.extend(8u16.to_le_bytes());
            central.extend(offset.to_le_bytes());
        }
        offset += local.len() as u64 + size;
    }
    let cd_offset = offset;
    f.write_all(&central).unwrap();
    let n = entries.len() as u64;
    let eocd64 = cd_offset + central.len() as u64;
    let mut tail = Vec::new();
    tail.extend(0x0606_4b50u32.to_le_bytes());
    tail.extend(44u64.to_le_bytes());
    tail.extend(45u16.to_le_bytes());
    tail.extend(45u16.to_le_bytes());
    tail.extend([0u8; 8]); // this disk, the central directory's disk
    tail.extend(n.to_le_bytes());
    tail.extend(n.to_le_bytes());
    tail.extend((central.len() as u64).to_le_bytes());
    tail.extend(cd_offset.to_le_bytes());
    tail.extend(0x0706_4b50u32.to_le_bytes());
    tail.extend(0u32.to_le_bytes());
    tail.extend(eocd64.to_le_bytes());
    tail.extend(1u32.to_le_bytes());
    tail.extend(0x0605_4b50u32.to_le_bytes());
    tail.extend([0u8; 4]); // disks
    tail.extend((n.min(0xFFFF) as u16).to_le_bytes());
    tail.extend((n.min(0xFFFF) as u16).to_le_bytes());
    tail.extend((central.len() as u32).to_le_bytes());
    tail.extend(0xFFFF_FFFFu32.to_le_bytes());
    tail.extend(0u16.to_le_bytes());
    f.write_all(&tail).unwrap();
    f.flush().unwrap();
}

/// README: at most 4 GiB inflated per outermost archive; past it the rest of that archive is
/// skipped with a warning. A sparse zip64 of 64 holes of (64 MiB - 1 KiB) each, a secret
/// before them and one after: the one after lies past 4 GiB of entries and is never read.
/// About 4 GiB of zeros are read from the page cache: a few seconds, the cost of reaching the
/// real limit (the ratio limit stops any cheaper, compressed way to 4 GiB).
#[test]
fn an_archive_past_4_gib_inflated_is_cut_there_with_a_warning() {
    let sb = Sandbox::new();
    let early = format!("GITHUB_TOKEN={}\n", fake_github(2915));
    let late = format!("GITHUB_TOKEN={}\n", fake_github(2916));
    let hole = (64 << 20) - 1024;
    let names: Vec<String> = (0..65).map(|i| format!("blank/{i:02}.bin")).collect();
    let mut entries = vec![("a/first.env", early.len() as u64, Some(early.as_bytes()))];
    entries.extend(names.iter().map(|n| (n.as_str(), hole, None)));
    entries.push(("z/last.env", late.len() as u64, Some(late.as_bytes())));
    let zip = sb.path("huge.zip");
    sparse_zip(&zip, &entries);
    assert!(std::fs::metadata(&zip).unwrap().len() > 4 << 30);
    // The outer file is over the default size limit, which archives obey too.
    let r = sb.run(&[
        "scan",
        "huge.zip",
        "--max-file-size",
        "0",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        finding_paths(&r.json()),
        ["huge.zip!a/first.env"],
        "the entry past the limit was read"
    );
    assert!(
        r.stderr
            .contains(&format!("more than {} inflated bytes", 4u64 << 30)),
        "{}",
        r.stderr
    );
}

/// The path of every finding of a JSON report, in report order.
fn finding_paths(doc: &serde_json::Value) -> Vec<String> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}
