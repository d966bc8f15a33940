//! Archives and compressed files met by `scan`: opened, nested, limited, never extracted.

use crate::util::{fake_aws, fake_github, Sandbox};
use serde_json::Value;
use std::io::Write;

/// A small source file with an AWS key pair on lines 3 and 4.
fn creds(seed: u64) -> (String, String) {
    let (id, secret) = fake_aws(seed);
    (
        id.clone(),
        format!(
            "import os\n\nAWS_ACCESS_KEY_ID = \"{id}\"\nAWS_SECRET_ACCESS_KEY = \"{secret}\"\n"
        ),
    )
}

pub fn tar_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (path, data) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        // Written into the header directly: the builder refuses `..` and absolute paths,
        // which is exactly what a hostile archive holds.
        let name = &mut h.as_old_mut().name;
        name[..path.len()].copy_from_slice(path.as_bytes());
        h.set_cksum();
        b.append(&h, *data).unwrap();
    }
    b.into_inner().unwrap()
}

pub fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (path, data) in files {
        z.start_file(*path, opts).unwrap();
        z.write_all(data).unwrap();
    }
    z.finish().unwrap().into_inner()
}

pub fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn scan_json(sb: &Sandbox, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["scan", ".", "--format", "json"];
    args.extend_from_slice(extra);
    let r = sb.run(&args);
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    (r.code, r.json())
}

/// `path:line` of every finding, sorted, once each.
pub fn paths(doc: &Value) -> Vec<String> {
    let mut v: Vec<String> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{}:{}", f["path"].as_str().unwrap(), f["line"]))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// `path: message` of every warning.
pub fn warnings(doc: &Value) -> Vec<String> {
    doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            format!(
                "{}: {}",
                w["path"].as_str().unwrap(),
                w["message"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn nested_archives_report_the_inner_path_and_line() {
    let sb = Sandbox::new();
    let (id, text) = creds(1);
    let inner = gz(&tar_of(&[("app/settings.py", text.as_bytes())]));
    sb.write(
        "release.zip",
        zip_of(&[("bundle/app.tgz", &inner), ("README", b"hello\n")]),
    );
    let (code, doc) = scan_json(&sb, &[]);
    assert_eq!(code, 1);
    assert_eq!(
        paths(&doc),
        [
            "release.zip!bundle/app.tgz!app/settings.py:3",
            "release.zip!bundle/app.tgz!app/settings.py:4"
        ]
    );
    let f = &doc["findings"][0];
    assert_eq!(f["secret"], id.as_str());
    // Archives can be turned off: then the zip is a binary file and skipped.
    let (code, doc) = scan_json(&sb, &["--no-archives"]);
    assert_eq!(code, 0, "{doc:#}");
}

#[test]
fn every_compression_format_is_opened() {
    let sb = Sandbox::new();
    let (_, text) = creds(2);
    let t = text.as_bytes();
    sb.write("a.env.gz", gz(t));
    sb.write("b.env.bz2", {
        let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
        e.write_all(t).unwrap();
        e.finish().unwrap()
    });
    sb.write("c.env.xz", {
        let mut e = xz2::write::XzEncoder::new(Vec::new(), 6);
        e.write_all(t).unwrap();
        e.finish().unwrap()
    });
    sb.write(
        "d.tar.zst",
        zstd::encode_all(&tar_of(&[("d.env", t)])[..], 3).unwrap(),
    );
    sb.write("e.tar", tar_of(&[("e.env", t)]));
    sb.write("f.whl", zip_of(&[("pkg/f.env", t)]));
    let (_, doc) = scan_json(&sb, &[]);
    let got: Vec<String> = paths(&doc)
        .into_iter()
        .filter(|p| p.ends_with(":3"))
        .collect();
    assert_eq!(
        got,
        [
            "a.env.gz!a.env:3",
            "b.env.bz2!b.env:3",
            "c.env.xz!c.env:3",
            "d.tar.zst!d.env:3",
            "e.tar!e.env:3",
            "f.whl!pkg/f.env:3"
        ]
    );
}

/// Regression #5: a file over 64 MiB is read as a stream, and an archive among those was
/// sniffed from where the first read stopped: "not an archive", nothing found, exit 0.
#[test]
fn an_archive_over_64_mib_is_opened_when_the_size_limit_allows_it() {
    let sb = Sandbox::new();
    let (_, text) = creds(6);
    // Incompressible filler, stored, so the zip file itself is over 64 MiB; the secret is in
    // the entry after it.
    let mut filler = vec![0u8; 65 << 20];
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for word in filler.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        word.copy_from_slice(&x.to_le_bytes()[..word.len()]);
    }
    let mut z = zip::ZipWriter::new(std::fs::File::create(sb.path("big.zip")).unwrap());
    let stored = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(true);
    z.start_file("filler.bin", stored).unwrap();
    z.write_all(&filler).unwrap();
    z.start_file("conf/app.env", stored).unwrap();
    z.write_all(text.as_bytes()).unwrap();
    z.finish().unwrap();
    drop(filler);
    assert!(std::fs::metadata(sb.path("big.zip")).unwrap().len() > 64 << 20);

    let (code, doc) = scan_json(&sb, &["--max-file-size", "200M"]);
    assert_eq!(code, 1, "{doc:#}");
    assert!(
        paths(&doc).contains(&"big.zip!conf/app.env:3".to_string()),
        "{doc:#}"
    );
    let warned = warnings(&doc);
    assert!(
        !warned.iter().any(|w| w.contains("not an archive")),
        "{warned:?}"
    );
}

#[test]
fn depth_limit_bombs_and_corrupt_archives_are_warnings() {
    let sb = Sandbox::new();
    // Nested four deep: with a depth of 2, the innermost is not opened.
    let (_, text) = creds(3);
    let mut data = zip_of(&[("deep.env", text.as_bytes())]);
    for i in 0..3 {
        data = zip_of(&[(&format!("level{i}.zip"), &data)]);
    }
    sb.write("deep.zip", &data);
    // A bomb: 300 MB of zeros compress to a few hundred KB.
    let zeros = vec![0u8; 300 << 20];
    sb.write("bomb.zip", zip_of(&[("zeros.bin", &zeros)]));
    drop(zeros);
    // A truncated gzip, and a file that merely starts like a zip.
    let full = gz(text.as_bytes());
    sb.write("cut.env.gz", &full[..full.len() / 2]);
    sb.write("fake.zip", b"PK\x03\x04 not really a zip");
    // A plain secret next to them is still found.
    let token = fake_github(4);
    sb.write("plain.env", format!("GITHUB_TOKEN={token}\n"));

    let (code, doc) = scan_json(&sb, &["--archive-depth", "2"]);
    assert_eq!(code, 1);
    // The truncated gzip is scanned up to the damage: its first lines' secret is found.
    assert_eq!(paths(&doc), ["cut.env.gz!cut.env:3", "plain.env:1"]);
    let warnings = warnings(&doc);
    let has = |p: &str, m: &str| warnings.iter().any(|w| w.starts_with(p) && w.contains(m));
    assert!(
        has("deep.zip!level2.zip!level1.zip", "nested more than 2"),
        "{warnings:#?}"
    );
    assert!(has("bomb.zip", "bomb"), "{warnings:#?}");
    // The message must say what is wrong with the file (any of a few wordings).
    let says = |p: &str, words: &[&str]| {
        warnings.iter().any(|w| {
            let m = w.to_ascii_lowercase();
            w.starts_with(p) && words.iter().any(|word| m[p.len()..].contains(word))
        })
    };
    let damage = [
        "incomplete",
        "truncated",
        "damaged",
        "corrupt",
        "unexpected end",
    ];
    assert!(says("cut.env.gz", &damage), "{warnings:#?}");
    assert!(
        says(
            "fake.zip",
            &["invalid zip", "not a zip", "damaged", "corrupt"]
        ),
        "{warnings:#?}"
    );
    // Four archives deep: found when the depth allows four.
    let (_, doc) = scan_json(&sb, &["--archive-depth", "4"]);
    assert!(paths(&doc)
        .iter()
        .any(|p| p == "deep.zip!level2.zip!level1.zip!level0.zip!deep.env:3"));
}

#[test]
fn hostile_tar_paths_are_reported_never_written() {
    let sb = Sandbox::new();
    let token = fake_github(5);
    let line = format!("GITHUB_TOKEN={token}\n");
    sb.write(
        "evil.tar",
        tar_of(&[
            ("../../escaped.env", line.as_bytes()),
            ("/etc/absolute.env", line.as_bytes()),
        ]),
    );
    let (_, doc) = scan_json(&sb, &[]);
    assert_eq!(
        paths(&doc),
        [
            "evil.tar!../../escaped.env:1",
            "evil.tar!/etc/absolute.env:1"
        ]
    );
    assert!(!sb.dir.path().join("../../escaped.env").exists());
    assert!(!std::path::Path::new("/etc/absolute.env").exists());
}

/// Regression #16: an entry behind a local header that the central directory does not list
/// (an extractor shows no such file) was neither scanned nor named.
#[test]
fn a_zip_entry_missing_from_the_central_directory_is_scanned_and_named() {
    let sb = Sandbox::new();
    let (id, text) = creds(1601);
    let listed = zip_of(&[("readme.txt", b"hello\n")]);
    let hidden = zip_of(&[("hidden/creds.py", text.as_bytes())]);
    // The hidden entry's local header and data, without its central directory, before a
    // whole zip: the zip's offsets are found again past the prefix, as for a
    // self-extracting archive.
    let cd = hidden.windows(4).position(|w| w == b"PK\x01\x02").unwrap();
    let mut bytes = hidden[..cd].to_vec();
    bytes.extend_from_slice(&listed);
    sb.write("bundle.zip", &bytes);
    let (code, v) = scan_json(&sb, &[]);
    assert_eq!(code, 1, "{v}");
    let findings = v["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .any(|f| f["path"] == "bundle.zip!hidden/creds.py" && f["secret"] == id.as_str()),
        "{v}"
    );
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("1 entry behind a local header but not in the central directory")
            && warnings.contains("hidden/creds.py"),
        "{warnings}"
    );
    // The listed entry is read once, not again as an orphan.
    assert!(!warnings.contains("readme.txt"), "{warnings}");
}
