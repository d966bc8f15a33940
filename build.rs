//! Embeds every `signatures/*.toml` file into the binary as the default rule set, and names
//! that set for `--version` and reports: the number of rules and a content hash.
//!
//! Each file is embedded as JSON, each rule with its pattern's facts (`_facts`: longest match,
//! `secret` group, whether it spans lines, whether the secret has a literal prefix) read here
//! by the same code the loader runs for other rules: starting leakhound then parses neither
//! TOML nor patterns, which a process started per agent hook event would otherwise pay for on
//! every event. A pattern this cannot read gets no facts (the loader then names its error);
//! a file that is not TOML fails the build.
use sha2::{Digest, Sha256};
use std::{env, fs, path::Path};

#[path = "src/rules/facts.rs"]
mod facts;

/// `text` (a signature file) as JSON, each rule with its `_facts`.
fn with_facts(text: &str) -> Option<String> {
    let mut doc: toml::Value = toml::from_str(text).ok()?;
    // A file may hold only validators (`[[validators]]`), and then no rules.
    let rules = match doc.get_mut("rules") {
        Some(r) => r.as_array_mut()?,
        None => return serde_json::to_string(&doc).ok(),
    };
    for rule in rules {
        let table = rule.as_table_mut()?;
        let Some(Ok(f)) = table.get("pattern").and_then(|p| p.as_str()).map(facts::of) else {
            continue;
        };
        let mut t = toml::map::Map::new();
        if let Some(n) = f.max_len {
            t.insert("max_len".into(), toml::Value::Integer(n as i64));
        }
        if let Some(g) = f.group {
            t.insert("group".into(), toml::Value::Integer(g as i64));
        }
        t.insert("spans_lines".into(), toml::Value::Boolean(f.spans_lines));
        t.insert(
            "secret_spans_lines".into(),
            toml::Value::Boolean(f.secret_spans_lines),
        );
        t.insert("fixed_prefix".into(), toml::Value::Boolean(f.fixed_prefix));
        table.insert("_facts".into(), toml::Value::Table(t));
    }
    serde_json::to_string(&doc).ok()
}

fn main() {
    let dir = Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap()).join("signatures");
    println!("cargo:rerun-if-changed={}", dir.display());
    println!("cargo:rerun-if-changed=src/rules/facts.rs");
    let mut files: Vec<_> = fs::read_dir(&dir)
        .expect("signatures/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut out = String::from("pub(crate) static EMBEDDED: &[(&str, &str)] = &[\n");
    let mut hash = Sha256::new();
    let mut rules = 0;
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().unwrap().to_string_lossy();
        let text = fs::read_to_string(f).expect("a signature file is UTF-8");
        let json = with_facts(&text).unwrap_or_else(|| {
            panic!("signatures/{name}: not a rule file the build can read (see `leakhound rules check`)")
        });
        out.push_str(&format!("    ({name:?}, {json:?}),\n"));
        // Lengths first, so no two different sets of files hash the same stream.
        for part in [name.as_bytes(), text.as_bytes()] {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part);
        }
        // Counted without a TOML parser (a build script should stay small); the loader is the
        // judge, and a test checks that this count agrees with `rules list`.
        rules += text
            .lines()
            .filter(|l| l.trim_start().starts_with("[[rules]]"))
            .count();
    }
    out.push_str("];\n");
    fs::write(
        Path::new(&env::var("OUT_DIR").unwrap()).join("signatures.rs"),
        out,
    )
    .unwrap();
    let id: String = hash.finalize()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("cargo:rustc-env=LEAKHOUND_RULESET={id}");
    println!("cargo:rustc-env=LEAKHOUND_RULE_COUNT={rules}");
}
