//! The fuzz corpus, replayed on stable: every committed input under `fuzz/corpus/<target>/`
//! (and any crash kept under `fuzz/artifacts/<target>/`) goes through the same
//! `leakhound::fuzzing` function its cargo-fuzz target calls, so `cargo test` catches a
//! regression of any crash the fuzzer once found, without nightly.

use std::path::{Path, PathBuf};

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

fn replay(target: &str, run: fn(&[u8])) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let corpus = inputs(&root.join("corpus").join(target));
    // A target with no seeds would replay nothing and pass: that is a broken layout.
    assert!(!corpus.is_empty(), "fuzz/corpus/{target}/ has no inputs");
    let all: Vec<PathBuf> = corpus
        .into_iter()
        .chain(inputs(&root.join("artifacts").join(target)))
        .collect();
    let mut failed = Vec::new();
    for p in &all {
        let data = std::fs::read(p).unwrap();
        // Name the input, not its bytes (they may hold a fake credential, and are long).
        if std::panic::catch_unwind(|| run(&data)).is_err() {
            failed.push(p.display().to_string());
        }
    }
    assert!(failed.is_empty(), "{target}: panicked on {failed:?}");
    all.len()
}

#[test]
fn every_target_has_a_corpus_and_a_fuzz_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    for (name, _) in leakhound::fuzzing::TARGETS {
        let src = std::fs::read_to_string(root.join(format!("fuzz_targets/{name}.rs")))
            .unwrap_or_else(|e| panic!("fuzz target {name}: {e}"));
        assert!(
            src.contains(&format!("leakhound::fuzzing::{name}(")),
            "fuzz_targets/{name}.rs must call leakhound::fuzzing::{name}"
        );
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "fuzz/Cargo.toml has no [[bin]] {name}"
        );
    }
}

macro_rules! replay_tests {
    ($($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            assert!(replay(stringify!($name), leakhound::fuzzing::$name) > 0);
        }
    )*};
}

replay_tests!(
    rules_toml,
    config_toml,
    notebook,
    env_dump,
    archive,
    decode,
    engine,
    masker,
    image,
    git_log
);
