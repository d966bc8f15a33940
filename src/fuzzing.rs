//! Entry points shared by the fuzz targets (`fuzz/fuzz_targets/*.rs`) and the stable replay
//! of their corpus (`tests/it/fuzz_replay.rs`), so both drive the very same code. Each takes
//! arbitrary bytes, feeds them to a parser of untrusted input, and asserts the parser's own
//! contract (spans inside the input, one line per variable, ...): a panic here is a bug.
//!
//! Not an API: hidden from the docs and free to change.

use crate::decode::View;
use crate::engine::Engine;
use crate::policy::Policy;
use crate::scan::Scanner;
use crate::source::{Blob, Provenance};
use std::sync::{Arc, Mutex};

/// A target: the name of its corpus directory (`fuzz/corpus/<name>/`) and its body.
pub type Target = (&'static str, fn(&[u8]));

/// Every target.
pub const TARGETS: &[Target] = &[
    ("rules_toml", rules_toml),
    ("config_toml", config_toml),
    ("notebook", notebook),
    ("env_dump", env_dump),
    ("archive", archive),
    ("decode", decode),
    ("engine", engine),
    ("masker", masker),
    ("image", image),
    ("git_log", git_log),
];

/// The default rules, compiled once and shared: compiling them per input would drown the
/// fuzzer's time. The scanner caches what it has seen, so it is replaced
/// every so many inputs, or a long run would grow without bound.
fn scanner() -> Arc<Scanner> {
    static S: Mutex<Option<(usize, Arc<Scanner>)>> = Mutex::new(None);
    let mut s = crate::sync::lock(&S);
    match &mut *s {
        Some((uses, sc)) if *uses < 50_000 => {
            *uses += 1;
            sc.clone()
        }
        _ => {
            let engine = Engine::new(
                crate::rules::builtin(),
                crate::engine::FingerprintKey::ephemeral(),
            )
            .expect("built-in rules compile");
            let sc = Arc::new(Scanner::new(engine, Policy::default()));
            *s = Some((1, sc.clone()));
            sc
        }
    }
}

/// A view's map has one entry per decoded byte plus the end, each inside the original.
fn check_view(v: &View, original_len: usize) {
    assert_eq!(v.map.len(), v.bytes.len() + 1, "view map length");
    assert!(
        v.map.iter().all(|i| i <= original_len),
        "view maps outside its input"
    );
}

/// A rule file (`--rules`, `rules check`): parse, compile, and run each rule's own examples.
pub fn rules_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(rules) = crate::rules::parse("fuzz.toml", text) else {
        return;
    };
    let Ok(engine) = Engine::new(rules, crate::engine::FingerprintKey::ephemeral()) else {
        return;
    };
    let _ = crate::engine::check(&engine, |_| true);
    for m in engine.scan(data) {
        assert!(
            m.start <= m.end && m.end <= data.len(),
            "match outside input"
        );
    }
}

/// `leakhound.toml`: parse, then build everything the CLI builds from it.
pub fn config_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(cfg) = crate::policy::Config::parse(text, std::path::Path::new("fuzz/leakhound.toml"))
    else {
        return;
    };
    if let Ok(policy) = Policy::new(&cfg.allow, "fuzz") {
        let _ = policy.path_allowed("src/main.rs");
        for m in scanner().engine().scan(data) {
            let _ = policy.match_allowed(data, &m);
        }
    }
    // The set as the CLI loads it, less the config's rule files: a fuzzed config must not
    // make the target read whatever paths it names.
    let _ = crate::rules::load_set(&[], &cfg.rules.disable);
    for h in &cfg.hooks {
        let _ = crate::respond::OperatorHook::new(h, &cfg.dir);
    }
}

/// A Jupyter notebook: its parts, the scan of it, and its redacted copy.
pub fn notebook(data: &[u8]) {
    if let Some(parts) = crate::source::notebook::parts(data) {
        for p in &parts {
            check_view(&p.view, data.len());
        }
    }
    let s = scanner();
    let blob = Blob {
        provenance: Provenance::File {
            path: "fuzz.ipynb".into(),
            variable: None,
        },
        data: data.to_vec(),
    };
    check_findings(&s.blob(&blob), data.len());
    let (out, _, valid) = crate::filter::redact_notebook(s.engine(), data);
    // The redaction promises that a valid notebook stays valid JSON.
    if valid && serde_json::from_slice::<serde_json::Value>(data).is_ok() {
        assert!(
            serde_json::from_slice::<serde_json::Value>(&out).is_ok(),
            "redacting a valid notebook broke its JSON"
        );
    }
}

/// An environment dump (`leakhound env FILE`): one blob line per variable.
pub fn env_dump(data: &[u8]) {
    use crate::source::env::{variable_at, Environment};
    let env = Environment::from_dump("fuzz".into(), data);
    let blob = env.blob();
    let lines = blob.data.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(lines, env.vars.len(), "blob line N must be variable N");
    for line in 0..=env.vars.len() + 1 {
        let _ = env.variable(line);
        let _ = env.file_line(line);
    }
    for at in [0, data.len() / 2, data.len()] {
        let _ = variable_at(data, at);
    }
    check_findings(&scanner().blob(&blob), blob.data.len());
}

/// An archive or compressed file, with limits small enough that a bomb cannot exhaust the
/// fuzzer's memory.
pub fn archive(data: &[u8]) {
    use crate::source::archive::{expand, Event, Limits};
    let limits = Limits {
        depth: 3,
        total: 4 << 20,
        entries: 256,
        ratio: 200,
        entry_size: Some(1 << 20),
    };
    let mut total = 0u64;
    let mut files = 0usize;
    expand("fuzz.bin", data, &limits, &mut |e| {
        if let Event::File { path, data } = e {
            assert!(path.starts_with("fuzz"), "entry path lost its archive");
            total += data.len() as u64;
            files += 1;
        }
    });
    // A file that is not an archive comes back whole, so the budget is the limit plus it.
    assert!(
        total <= limits.total + data.len() as u64,
        "inflated past the limit"
    );
    assert!(files <= limits.entries + 1, "more entries than the limit");
}

/// Decoded views (UTF-16, escapes, percent, base64, ANSI) and the JSON string walker.
pub fn decode(data: &[u8]) {
    for (_, v) in crate::decode::views(data) {
        check_view(&v, data.len());
    }
    check_view(&crate::decode::strip_ansi(data), data.len());
    check_view(&crate::decode::visible(data), data.len());
    let _ = crate::decode::looks_utf16(data);
    let _ = crate::decode::utf16_text(data);
    if let Some(strings) = crate::decode::json::strings(data) {
        for s in strings {
            assert!(
                s.start <= s.end && s.end <= data.len(),
                "string outside doc"
            );
            let v = crate::decode::json::unescape(&data[s.start..s.end], s.start);
            check_view(&v, data.len());
        }
    }
}

/// Findings point inside the blob they came from.
fn check_findings(found: &[crate::model::Finding], len: usize) {
    for f in found {
        assert!(f.start <= f.end && f.end <= len, "finding outside blob");
        assert!(f.line >= 1 && f.end_line >= f.line, "finding lines");
        let _ = f.context.render(false);
        let _ = f.display_secret(false);
    }
}

/// The engine over arbitrary bytes, its matches turned into findings, and the whole-blob scan
/// (decoded views, env-file variables) a file gets.
pub fn engine(data: &[u8]) {
    let s = scanner();
    let matches = s.engine().scan(data);
    for m in &matches {
        assert!(
            m.start <= m.end && m.end <= data.len(),
            "match outside input"
        );
    }
    let prov = Provenance::Stream {
        name: "fuzz".into(),
    };
    let found = crate::model::findings(
        s.engine().rules(),
        data,
        &matches,
        &prov,
        s.engine().fingerprint_key(),
    );
    check_findings(&found, data.len());
    let path = if data.first().is_some_and(|b| b & 1 == 1) {
        "fuzz/.env"
    } else {
        "fuzz/file.txt"
    };
    let blob = Blob {
        provenance: Provenance::File {
            path: path.into(),
            variable: None,
        },
        data: data.to_vec(),
    };
    check_findings(&s.blob(&blob), data.len());
}

/// The streaming masker with arbitrary chunking and idle points. The first two bytes seed
/// the chunk sizes; the rest is the stream. Compared with the masker given the whole
/// stream at once: without idle points the output is the same byte for byte; with them
/// (an idle flush may forward a tail too short to be worth holding), no piece of
/// [`PIECE`] bytes of a secret the one-shot run found is in the output unless the one-shot
/// output shows it too (the text around it may repeat it), or the stream printed it before
/// it showed the value whole.
pub fn masker(data: &[u8]) {
    let (seed, stream) = match data {
        [a, b, rest @ ..] => (u16::from_le_bytes([*a, *b]) as u32 | 1, rest),
        _ => return,
    };
    let s = scanner();
    let mut m = crate::filter::Masker::new(s.engine(), "fuzz");
    let mut rng = seed;
    let mut next = || {
        // xorshift: cheap, and the same chunking for the same input.
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        rng
    };
    let mut out = Vec::new();
    let mut idled = false;
    let mut at = 0;
    while at < stream.len() {
        let r = next();
        let n = (1 + (r % 64) as usize).min(stream.len() - at);
        out.extend(m.push(&stream[at..at + n]).0);
        at += n;
        if r & 0x300 == 0 {
            out.extend(m.idle().0);
            idled = true;
        }
    }
    out.extend(m.finish().0);
    assert!(!m.has_pending(), "bytes held after the end of the stream");

    let mut whole = crate::filter::Masker::new(s.engine(), "fuzz");
    let (mut expected, mut found) = whole.push(stream);
    let (tail, more) = whole.finish();
    expected.extend(tail);
    found.extend(more);
    if !idled {
        assert!(
            out == expected,
            "chunked and one-shot outputs differ:\n{}\n---\n{}",
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&expected)
        );
        return;
    }
    let count = |hay: &[u8], w: &[u8]| memchr::memmem::find_iter(hay, w).count();
    // A piece of a value printed before the stream shows the value whole went out before
    // anything knew it, while the one-shot run knew the value from the start and masked the
    // piece: those pieces may be out, as often as they come before it.
    let shown = crate::decode::visible(stream).bytes;
    for f in &found {
        // As a reader sees it: a secret is reported with the escapes or invisible
        // characters it was written with, and masked as shown.
        let secret = crate::decode::visible(f.secret.reveal().as_bytes()).bytes;
        let first = memchr::memmem::find(&shown, &secret).unwrap_or(0);
        for w in secret.windows(PIECE) {
            assert!(
                count(&out, w) <= count(&expected, w) + count(&shown[..first], w),
                "a piece of a secret ({}) the one-shot run masked went out under idle flushes",
                f.rule_id
            );
        }
    }
}

/// The shortest piece of a secret the masker promises never to let out (its MIN_PIECE).
const PIECE: usize = 8;

/// An image config (JSON from a registry or tarball), a registry reference, and a layer.
pub fn image(data: &[u8]) {
    use crate::source::image::{config_fields, parse_registry_ref, walk_layer, Layer};
    let _ = config_fields(data);
    if data.len() <= 512 {
        let _ = parse_registry_ref(&String::from_utf8_lossy(data));
    }
    let layer = Layer {
        digest: format!("sha256:{}", "0".repeat(64)),
        verify: true,
    };
    let mut total = 0usize;
    let _ = walk_layer(
        Box::new(std::io::Cursor::new(data.to_vec())),
        &layer,
        Some(1 << 20),
        &mut |e| {
            if let crate::source::image::LayerEvent::File { data, .. } = e {
                total += data.len();
            }
        },
    );
}

/// `git log -z --raw` output, LFS pointers and the added-lines diff.
pub fn git_log(data: &[u8]) {
    let null = "0".repeat(40);
    for c in crate::source::git::parse_log(data, &null) {
        assert_ne!(c.blob, null, "a deleted file is not a change to scan");
    }
    let _ = crate::source::git::lfs_pointer(data);
    let (new, old) = data.split_at(data.len() / 2);
    let added = crate::source::git::added_lines(new, &[old.to_vec()]);
    assert_eq!(
        added.len(),
        new.split_inclusive(|&c| c == b'\n').count(),
        "one flag per line"
    );
}
