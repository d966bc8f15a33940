//! Nothing lost silently, no crash, no hang (issue 10, items 8–15 and 17): archives cut only
//! the bomb entry, damaged archives are scanned up to the damage, NUL-separated text is text,
//! ignored secret files are scanned, skips are named, named inputs that cannot be read fail
//! the run, shrinking files and FIFOs neither crash nor hang, memory stays bounded.

use crate::archive::{gz, paths, tar_of, warnings, zip_of};
use crate::util::{bin, fake_github, Sandbox};
use child::{assert_exit, run, run_in, run_with};
use serde_json::Value;
use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

#[path = "loss_child.rs"]
mod child;

fn token_line(seed: u64) -> String {
    format!("GITHUB_TOKEN={}\n", fake_github(seed))
}

/// Item 8: an entry that inflates past the ratio (a blank image, a repetitive log) cuts that
/// entry only; the next entries are scanned, and the entry is named.
#[test]
fn a_bomb_entry_is_cut_not_the_archive() {
    let sb = Sandbox::new();
    let blank = vec![0u8; 32 << 20];
    let secret = token_line(801);
    sb.write(
        "release.zip",
        zip_of(&[("blank.bin", &blank), ("app.env", secret.as_bytes())]),
    );
    sb.write(
        "release.tgz",
        gz(&tar_of(&[
            ("blank.bin", &blank),
            ("app.env", secret.as_bytes()),
        ])),
    );
    drop(blank);
    // A repetitive log: the secret comes first, then heartbeat lines far past the ratio.
    let mut log = secret.clone();
    log.push_str(&"2026-11-30T00:00:00Z INFO heartbeat ok\n".repeat(1 << 20));
    sb.write("app.log.gz", gz(log.as_bytes()));
    let r = run(&sb, &["scan", ".", "--format", "json"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let doc = r.json();
    assert_eq!(
        paths(&doc),
        [
            "app.log.gz!app.log:1",
            "release.tgz!app.env:1",
            "release.zip!app.env:1"
        ],
        "{:#?}",
        warnings(&doc)
    );
    let w = warnings(&doc);
    for name in [
        "release.zip!blank.bin",
        "release.tgz!blank.bin",
        "app.log.gz!app.log",
    ] {
        assert!(
            w.iter().any(|x| x.starts_with(name) && x.contains("bomb")),
            "{name}: {w:#?}"
        );
    }
}

/// Item 17: with `--max-file-size 0` the ratio is measured as the entry inflates, so a bomb
/// entry is cut early instead of inflating to hundreds of MiB.
#[test]
fn a_bomb_entry_without_a_size_limit_stays_small_in_memory() {
    let sb = Sandbox::new();
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    z.start_file("zeros.bin", opts).unwrap();
    let chunk = vec![0u8; 1 << 20];
    for _ in 0..1024 {
        z.write_all(&chunk).unwrap();
    }
    z.start_file("app.env", opts).unwrap();
    z.write_all(token_line(1701).as_bytes()).unwrap();
    sb.write("bomb.zip", z.finish().unwrap().into_inner());
    let args = [
        "scan",
        "bomb.zip",
        "--max-file-size",
        "0",
        "-j",
        "2",
        "--format",
        "json",
    ];
    let r = run_in(&sb, &args, 150);
    assert_exit(&r, 1, 150);
    assert_eq!(paths(&r.json()), ["bomb.zip!app.env:1"]);
}

/// Item 9: a damaged gzip is scanned up to the damage, with a warning naming it; zero
/// padding after the end (which `gzip -t` accepts) is no damage at all.
#[test]
fn a_damaged_gzip_is_scanned_up_to_the_damage() {
    let sb = Sandbox::new();
    let text = |seed| {
        let mut t = token_line(seed);
        t.push_str(&"plain text that follows the secret\n".repeat(2000));
        t
    };
    let mut bad_crc = gz(text(901).as_bytes());
    let n = bad_crc.len();
    bad_crc[n - 8] ^= 0xff;
    sb.write("crc.env.gz", &bad_crc);
    // Incompressible filler, so that cutting the file loses only its end.
    let mut long = token_line(902);
    let mut rng = crate::synth::Rng::new(902);
    for _ in 0..20_000 {
        long.push_str(&format!("{:016x}\n", rng.next()));
    }
    let full = gz(long.as_bytes());
    sb.write("cut.env.gz", &full[..full.len() * 3 / 5]);
    let mut padded = gz(text(903).as_bytes());
    padded.extend_from_slice(&[0u8; 1024]);
    sb.write("padded.env.gz", &padded);
    let r = run(&sb, &["scan", ".", "--format", "json"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let doc = r.json();
    assert_eq!(
        paths(&doc),
        [
            "crc.env.gz!crc.env:1",
            "cut.env.gz!cut.env:1",
            "padded.env.gz!padded.env:1"
        ],
        "{:#?}",
        warnings(&doc)
    );
    let w = warnings(&doc);
    for name in ["crc.env.gz", "cut.env.gz"] {
        assert!(
            w.iter()
                .any(|x| x.starts_with(name) && x.contains("damage")),
            "{name}: {w:#?}"
        );
    }
    assert!(!w.iter().any(|x| x.starts_with("padded")), "{w:#?}");
}

/// Item 9: a zip whose central directory is gone (a cut download) gives up its entries
/// through their local headers, with a warning.
#[test]
fn a_zip_without_its_central_directory_is_recovered() {
    let sb = Sandbox::new();
    let whole = zip_of(&[
        ("README", b"hello\n"),
        ("conf/app.env", token_line(904).as_bytes()),
        ("conf/b.env", token_line(905).as_bytes()),
    ]);
    let cd = whole
        .windows(4)
        .position(|w| w == b"PK\x01\x02")
        .expect("a central directory");
    sb.write("cut.zip", &whole[..cd + 10]);
    let r = run(&sb, &["scan", ".", "--format", "json"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let doc = r.json();
    assert_eq!(
        paths(&doc),
        ["cut.zip!conf/app.env:1", "cut.zip!conf/b.env:1"]
    );
    assert!(
        warnings(&doc)
            .iter()
            .any(|w| w.starts_with("cut.zip") && w.contains("local headers")),
        "{:#?}",
        warnings(&doc)
    );
}

/// Item 10: NUL-separated text (a `/proc/PID/environ` capture) is text; a binary file skipped
/// is named in the report.
#[test]
fn nul_separated_text_is_scanned_and_binary_skips_are_named() {
    let sb = Sandbox::new();
    let gh = fake_github(1001);
    sb.write(
        "capture/environ",
        format!("PATH=/usr/bin\0GITHUB_TOKEN={gh}\0HOME=/root\0"),
    );
    sb.write(
        "capture/pid42.txt",
        format!("LANG=C\0SHELL=/bin/sh\0TOKEN={gh}\0"),
    );
    let mut blob = vec![0u8, 1, 2, 3, 0x7f, 0xff, 0, 0, 0x10];
    blob.extend_from_slice(b"no secret here");
    sb.write("image.bin", &blob);
    let r = run(&sb, &["scan", ".", "--format", "json"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let doc = r.json();
    assert_eq!(paths(&doc), ["capture/environ:2", "capture/pid42.txt:3"]);
    let f = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "capture/environ")
        .unwrap();
    assert_eq!(f["provenance"]["variable"], "GITHUB_TOKEN", "{f:#}");
    assert_eq!(doc["summary"]["skipped_binary"], 1);
    assert_eq!(
        doc["summary"]["skipped"],
        serde_json::json!([{"path": "image.bin", "reason": "binary"}])
    );
}

/// The two secret files known by their folder as well as their name (`.kube/config`,
/// `.docker/config.json`) are read when an ignore file lists them; the same names in another
/// folder stay ignored.
#[test]
fn ignored_secret_files_named_by_their_folder_are_scanned() {
    let sb = Sandbox::new();
    sb.write(".gitignore", "config\nconfig.json\n");
    sb.write(".kube/config", token_line(1111));
    sb.write("home/.docker/config.json", token_line(1112));
    sb.write("app/config", token_line(1113));
    sb.write("app/config.json", token_line(1114));
    sb.write(".docker/config", token_line(1115));
    let r = run(&sb, &["scan", ".", "--format", "json"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let doc = r.json();
    assert_eq!(
        paths(&doc),
        [".kube/config:1", "home/.docker/config.json:1"]
    );
    assert_eq!(doc["summary"]["skipped_ignored"], 3, "{:#}", doc["summary"]);
}

/// Item 11: a `.env` (and other well-known secret files) listed in `.gitignore` is scanned;
/// what ignore files excluded is counted; a flag restores the old behaviour.
#[test]
fn ignored_secret_files_are_scanned_and_ignored_entries_counted() {
    let sb = Sandbox::new();
    sb.write(".gitignore", ".env\n*.pem\nbuild/\nnotes.txt\n");
    sb.write(".env", token_line(1101));
    sb.write("deploy/.env.production", token_line(1102));
    sb.write("build/out.txt", token_line(1103));
    sb.write("notes.txt", token_line(1104));
    sb.write("main.py", "print('hi')\n");
    let r = run(&sb, &["scan", ".", "--format", "json"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let doc = r.json();
    // deploy/ is not ignored: its .env.production is scanned either way.
    assert_eq!(paths(&doc), [".env:1", "deploy/.env.production:1"]);
    // build/ and notes.txt; the .env is scanned, not skipped.
    assert_eq!(doc["summary"]["skipped_ignored"], 2, "{:#}", doc["summary"]);
    let human = run(&sb, &["scan", "."]);
    assert!(
        human.stdout.contains("2 ignored skipped"),
        "{}",
        human.stdout
    );
    let off = run(
        &sb,
        &["scan", ".", "--format", "json", "--no-ignored-secret-files"],
    );
    assert_eq!(off.code, Some(1), "{}", off.stderr);
    let doc = off.json();
    assert_eq!(paths(&doc), ["deploy/.env.production:1"]);
    assert_eq!(doc["summary"]["skipped_ignored"], 3);
    sb.write(".gitignore", ".env\n");
    let r = run(&sb, &["scan", ".", "--format", "json"]);
    assert_eq!(
        paths(&r.json()),
        [
            ".env:1",
            "build/out.txt:1",
            "deploy/.env.production:1",
            "notes.txt:1"
        ]
    );
}

/// Item 12: a named path that cannot be read fails the run (exit 2); the other paths are
/// still scanned and reported.
#[test]
fn a_named_path_that_cannot_be_read_fails_the_run() {
    let sb = Sandbox::new();
    sb.write("ok.env", token_line(1201));
    let r = run(
        &sb,
        &[
            "scan",
            "ok.env",
            "missing.txt",
            "/dev/null",
            "--format",
            "json",
        ],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    let doc = r.json();
    assert_eq!(paths(&doc), ["ok.env:1"]);
    let w = warnings(&doc);
    assert!(w.iter().any(|x| x.starts_with("missing.txt")), "{w:#?}");
    assert!(
        w.iter()
            .any(|x| x.starts_with("/dev/null") && x.contains("device")),
        "{w:#?}"
    );
    assert_eq!(doc["summary"]["failed_inputs"], 2);
    // Without findings too.
    let r = run(&sb, &["scan", "missing.txt"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
}

/// Item 13: each file over the size limit is named, with its size.
#[test]
fn files_over_the_size_limit_are_named() {
    let sb = Sandbox::new();
    sb.write("big.log", "filler line of text\n".repeat(100_000));
    sb.write("small.env", token_line(1301));
    let r = run(
        &sb,
        &["scan", ".", "--max-file-size", "1M", "--format", "json"],
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.contains("big.log") && r.stderr.contains("too large"),
        "{}",
        r.stderr
    );
    let doc = r.json();
    assert_eq!(
        doc["summary"]["skipped"],
        serde_json::json!([{"path": "big.log", "reason": "too large"}])
    );
}

/// Item 14: a file truncated while it is scanned (logrotate's copytruncate) ends early with
/// a warning; the run is never killed by SIGBUS. The truncation is made to land inside the
/// read: the test watches the scan's own file offset (/proc/PID/fdinfo) and truncates once it
/// is past the start and far from the end, never too early or after the scan is done.
#[test]
fn a_file_truncated_during_the_scan_never_kills_the_run() {
    let sb = Sandbox::new();
    let line = "2026-11-30T00:00:00Z INFO request served in 12ms path=/api/v1/items\n";
    let body = line.repeat((160 << 20) / line.len());
    // As /proc names it, to know the scan's descriptor for it.
    let path = std::fs::canonicalize(sb.write("app.log", &body)).unwrap();
    let mut c = sb.cmd();
    c.args([
        "scan",
        "app.log",
        "--max-file-size",
        "0",
        "-j",
        "2",
        "--format",
        "json",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let pid = child.id();
    let mut hit = None;
    while child.try_wait().unwrap().is_none() {
        // Started, with at least two of its 16 MiB reads still to come: the truncation
        // lands inside the read even if one more read completes meanwhile.
        if let Some(pos) = offset_of(pid, &path) {
            if pos > 0 && pos + (32 << 20) < body.len() as u64 {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .unwrap()
                    .set_len(0)
                    .unwrap();
                hit = Some(pos);
                break;
            }
        }
        // Look again soon: a readiness poll on the scan's own progress, not a guessed delay.
        std::thread::yield_now();
    }
    let out = child.wait_with_output().unwrap();
    use std::os::unix::process::ExitStatusExt;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.signal(), None, "killed by a signal: {stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let at = hit.expect("the scan was never seen reading the file: nothing was tested");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        warnings(&doc).iter().any(|w| w.starts_with("app.log")),
        "truncated at byte {at}, no warning: {:#?}",
        warnings(&doc)
    );
}

/// The offset of the descriptor `pid` holds `path` open on, from /proc.
fn offset_of(pid: u32, path: &std::path::Path) -> Option<u64> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    for e in fds.flatten() {
        if std::fs::read_link(e.path()).ok().as_deref() != Some(path) {
            continue;
        }
        let fd = e.file_name().to_string_lossy().into_owned();
        let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).ok()?;
        let pos = info
            .lines()
            .find_map(|l| l.strip_prefix("pos:"))
            .and_then(|p| p.trim().parse().ok())?;
        return Some(pos);
    }
    None
}

/// Item 15: FIFOs swapped in for files after the directory was listed are refused, never
/// opened blocking: the scan ends.
#[test]
fn fifos_swapped_in_after_the_listing_never_hang_the_scan() {
    let sb = Sandbox::new();
    let n = 3000;
    for i in 0..n {
        sb.write(&format!("d/f{i:05}.txt"), "plain text\n");
    }
    let dir = sb.path("d");
    let swapper = std::thread::spawn(move || {
        // Replace the files with FIFOs, atomically, while the scan runs.
        for i in (0..n).rev() {
            let tmp = dir.join(format!(".tmp{i}"));
            let c = std::ffi::CString::new(tmp.to_str().unwrap()).unwrap();
            // SAFETY: a valid C string.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            std::fs::rename(&tmp, dir.join(format!("f{i:05}.txt"))).unwrap();
        }
    });
    let r = run_with(
        &sb,
        &["scan", "d", "-j", "2", "--format", "json"],
        None,
        Duration::from_secs(60),
        None,
    );
    swapper.join().unwrap();
    assert!(!r.timed_out, "the scan hung on a FIFO");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // And every FIFO met is named; a second scan meets only FIFOs.
    let r = run_with(
        &sb,
        &["scan", "d", "--format", "json"],
        None,
        Duration::from_secs(60),
        None,
    );
    assert!(!r.timed_out, "the scan hung on a FIFO");
    let w = warnings(&r.json());
    assert_eq!(w.len(), n, "{:#?}", &w[..w.len().min(5)]);
}

fn mkfifo(p: &std::path::Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// Item 15: a FIFO named on purpose is read, with a time bound when no writer comes
/// (`scan FIFO` and `env FIFO`): exit 2, never a hang.
#[test]
fn a_named_fifo_is_read_with_a_bound() {
    let sb = Sandbox::new();
    let fifo = sb.path("pipe.env");
    mkfifo(&fifo);
    let secret = token_line(1501);
    let writer = {
        let (fifo, secret) = (fifo.clone(), secret.clone());
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            let mut f = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            f.write_all(secret.as_bytes()).unwrap();
        })
    };
    let r = run_with(
        &sb,
        &["scan", "pipe.env", "--format", "json"],
        None,
        Duration::from_secs(60),
        None,
    );
    writer.join().unwrap();
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert_eq!(paths(&r.json()), ["pipe.env:1"]);
    // No writer at all: bounded, and the run fails.
    for args in [&["scan", "pipe.env"][..], &["env", "pipe.env"]] {
        let r = run_with(&sb, args, None, Duration::from_secs(60), None);
        assert!(!r.timed_out, "{args:?} hung");
        assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains("pipe.env"), "{}", r.stderr);
    }
}

/// Item 17: standard input is scanned a chunk at a time: memory stays bounded, positions
/// stay right.
#[test]
fn stdin_is_scanned_in_bounded_memory() {
    let sb = Sandbox::new();
    let secret = token_line(1701);
    // About 330 MiB, more than the memory the run is given: it cannot hold its input.
    let lines = 6 << 20;
    let feed: Box<dyn FnOnce(std::process::ChildStdin) + Send> = Box::new(move |mut s| {
        let block = "filler line of text, nothing secret in it at all....\n".repeat(1 << 14);
        let per = 1 << 14;
        for _ in 0..lines / per {
            if s.write_all(block.as_bytes()).is_err() {
                return;
            }
        }
        let _ = s.write_all(secret.as_bytes());
    });
    let r = run_with(
        &sb,
        &["scan", "-", "-j", "2", "--format", "json"],
        Some(feed),
        Duration::from_secs(300),
        Some(230),
    );
    assert_exit(&r, 1, 230);
    let doc = r.json();
    assert_eq!(paths(&doc), [format!("<stdin>:{}", lines + 1)]);
    assert!(doc["summary"]["bytes"].as_u64().unwrap() > 230 << 20);
}

/// Item 17: `env FILE` reads at most a bounded dump; a larger one is refused by name.
#[test]
fn env_reads_a_bounded_dump() {
    let sb = Sandbox::new();
    let mut big =
        "FILLER=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n".repeat(300_000);
    big.push_str(&token_line(1702));
    sb.write("huge.env", &big);
    let r = run_in(&sb, &["env", "huge.env", "-j", "2"], 120);
    assert_exit(&r, 2, 120);
    assert!(r.stderr.contains("huge.env"), "{}", r.stderr);
}

/// Item 17: a notebook too large to hold as structure is scanned as text, with a warning.
#[test]
fn a_huge_notebook_is_scanned_as_text_in_bounded_memory() {
    let sb = Sandbox::new();
    let cell = r#"{"cell_type": "code", "source": ["x = 1\n"], "outputs": [], "metadata": {}},"#;
    let mut nb = String::from(r#"{"cells": ["#);
    nb.push_str(&cell.repeat((24 << 20) / cell.len()));
    nb.push_str(&format!(
        r#"{{"cell_type": "code", "source": ["token = '{}'\n"], "outputs": [], "metadata": {{}}}}"#,
        fake_github(1703)
    ));
    nb.push_str(r#"], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}"#);
    sb.write("big.ipynb", &nb);
    let r = run_in(
        &sb,
        &["scan", "big.ipynb", "-j", "2", "--format", "json"],
        150,
    );
    assert_exit(&r, 1, 150);
    let doc = r.json();
    assert_eq!(paths(&doc).len(), 1, "{:#}", doc["findings"]);
    assert!(
        warnings(&doc)
            .iter()
            .any(|w| w.starts_with("big.ipynb") && w.contains("plain text")),
        "{:#?}",
        warnings(&doc)
    );
}

/// The summary says what was skipped and why, in the human line too.
#[test]
fn the_summary_line_names_every_kind_of_skip() {
    let sb = Sandbox::new();
    sb.write(".gitignore", "ignored.txt\n");
    sb.write("ignored.txt", "x\n");
    sb.write("image.bin", [0u8, 1, 2, 3, 0x10, 0x11]);
    sb.write("big.txt", "y".repeat(2 << 20));
    let fifo = sb.path("pipe");
    mkfifo(&fifo);
    let r = run(&sb, &["scan", ".", "--max-file-size", "1M"]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for what in [
        "1 binary skipped",
        "1 too large skipped",
        "1 ignored skipped",
        "1 could not be read",
    ] {
        assert!(r.stdout.contains(what), "{what}: {}", r.stdout);
    }
    let _ = bin();
}
