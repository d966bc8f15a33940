//! Generate a benchmark corpus: a tree of real-looking source files with planted fake
//! credentials, and `truth.jsonl` listing each one (path, line, rule). Every line not in the
//! truth is clean, decoys included: the classic ones (documentation keys, placeholders,
//! hashes, references) and, in Python, Rust, Go, JS/TS and Java files, code that names
//! secrets without holding one (`synth::code_decoy`); a finding on any of them is a false
//! alarm.
//!
//!     cargo run --release --example gen-corpus -- OUT_DIR [SIZE_MB=300] [SEED=1]
//!
//! One prefixed provider value in six holds a placeholder word (`sample`, `xxxx`, `redacted`...)
//! in its random body, as random values do now and then (`synth::with_placeholder_word`), so
//! recall counts what the placeholder filter drops.
//!
//! The corpus is generated, never committed. Every credential in it is random.

#[path = "synth.rs"]
mod synth;

use std::io::Write;
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first().map(PathBuf::from) else {
        eprintln!("usage: gen-corpus OUT_DIR [SIZE_MB] [SEED]");
        std::process::exit(2);
    };
    let size_mb: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(300);
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let files = out.join("tree");
    std::fs::create_dir_all(&files).expect("create output directory");
    let mut rng = synth::Rng::new(seed);
    let mut truth =
        std::io::BufWriter::new(std::fs::File::create(out.join("truth.jsonl")).unwrap());
    let exts = [
        "py", "js", "go", "yaml", "ts", "rb", "env", "md", "rs", "java",
    ];
    let budget = size_mb << 20;
    let (mut written, mut n, mut planted) = (0usize, 0usize, 0usize);
    while written < budget {
        let dir = format!("pkg{:03}/mod{:02}", n / 400, (n / 20) % 20);
        std::fs::create_dir_all(files.join(&dir)).unwrap();
        let ext = exts[rng.below(exts.len())];
        let rel = format!("{dir}/file{n:06}.{ext}");
        // File sizes skewed small, as in real trees: most a few KB, some up to ~200 KB.
        let size = 1024
            + rng.below(8 << 10)
            + if rng.below(10) == 0 {
                rng.below(200 << 10)
            } else {
                0
            };
        // About one file in eight holds a secret.
        let every = if rng.below(8) == 0 {
            40 + rng.below(200)
        } else {
            0
        };
        let (text, truths) =
            synth::text_in_words(&mut rng, synth::Lang::of(ext), size, every, true);
        std::fs::write(files.join(&rel), &text).unwrap();
        for (line, rule, _) in truths {
            writeln!(
                truth,
                "{{\"path\":\"{rel}\",\"line\":{line},\"rule\":\"{rule}\"}}"
            )
            .unwrap();
            planted += 1;
        }
        written += text.len();
        n += 1;
    }
    eprintln!(
        "{n} files, {} MB, {planted} planted secrets in {}",
        written >> 20,
        out.display()
    );
}
