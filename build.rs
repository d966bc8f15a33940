//! Embeds every `signatures/*.toml` file into the binary as the default rule set, and names
//! that set for `--version` and reports: the number of rules and a content hash.
//!
//! Each file is embedded as JSON, each rule with its pattern's facts (`_facts`: longest match,
//! `secret` group, whether it spans lines, whether the secret has a literal prefix) read here
//! by the same code the loader runs for other rules: starting leakhound then parses neither
//! TOML nor patterns, which a process started per agent hook event would otherwise pay for on
//! every event. A pattern this cannot read gets no facts (the loader then names its error);
//! a file that is not TOML fails the build. The keyword automaton and the rules' start
//! offsets and leads are embedded beside them.
use sha2::{Digest, Sha256};
use std::{env, fs, path::Path};

#[path = "src/rules/facts.rs"]
mod facts;

// The engine's keyword automaton, built here for the built-in rules' keywords and embedded, so
// that no start builds it (2-7 ms; an agent hook starts a process per event). The engine uses
// it only when its keyword list is exactly this one, and builds its own otherwise.
#[allow(dead_code)]
#[path = "src/engine/keywords.rs"]
mod keywords;
// Likewise each rule's start offsets and lead (`engine::anchor::of`), looked up by a scan
// rather than analysed at the rule's first hit.
#[allow(dead_code)]
#[path = "src/engine/anchor.rs"]
mod anchor;
#[allow(dead_code)]
#[path = "src/engine/lead.rs"]
mod lead;

/// What the engine's embedded tables need of `text`'s rules: their keywords, in order, as the
/// engine collects them (lowercased), and each rule's pattern analysed as a throughput engine
/// analyses it at its first keyword hit (`engine::anchor::of`: where its matches start, what
/// they hold first), keyed by pattern and keywords, so that a scan looks it up instead.
fn for_the_engine(
    text: &str,
    keywords: &mut Vec<String>,
    analyses: &mut Vec<(u64, anchor::Analysis)>,
) {
    let doc: toml::Value = toml::from_str(text).expect("checked by with_facts");
    let rules = doc.get("rules").and_then(|r| r.as_array());
    for rule in rules.into_iter().flatten() {
        let words = rule.get("keywords").and_then(|k| k.as_array());
        let own: Vec<String> = words
            .into_iter()
            .flatten()
            .filter_map(|k| k.as_str())
            .map(|k| k.to_ascii_lowercase())
            .collect();
        for k in &own {
            if !keywords.contains(k) {
                keywords.push(k.clone());
            }
        }
        // One the build cannot parse is the loader's to name.
        let pattern = rule.get("pattern").and_then(|p| p.as_str());
        let hir = pattern.and_then(|p| facts::parse(p).ok().map(|hir| (p, hir)));
        if let Some((pattern, hir)) = hir {
            analyses.push((anchor::key(pattern, &own), anchor::of(&hir, &own)));
        }
    }
}

/// `text` (a signature file) as JSON: its rules, each with its `_facts` and, unless it names
/// its own, the validator `links` give it; and its validators (`[[validators]]`), apart, so
/// that loading the rules never parses a validator (a hook never uses one). Each rule's
/// examples and long strings are apart too (see [`Texts`]).
fn with_facts(
    text: &str,
    links: &std::collections::HashMap<String, (String, String)>,
) -> Option<(String, Option<String>, String, Vec<Texts>)> {
    let mut doc: toml::Value = toml::from_str(text).ok()?;
    // Each rule's examples and negatives, apart (`[[examples], [negatives]]` per rule, in
    // order): the rules are embedded with empty lists, and a process that checks no rule (a
    // hook) does not parse 4,000 strings it never reads.
    let mut examples = Vec::new();
    let mut texts = Vec::new();
    let table = doc.as_table_mut()?;
    let validators = table
        .remove("validators")
        .map(|v| {
            let mut t = toml::map::Map::new();
            t.insert("validators".into(), v);
            serde_json::to_string(&t)
        })
        .transpose()
        .ok()?;
    // A file may hold only validators, and then no rules.
    let Some(rules) = table.get_mut("rules") else {
        return Some((
            serde_json::to_string(&doc).ok()?,
            validators,
            "[]".into(),
            texts,
        ));
    };
    for rule in rules.as_array_mut()? {
        let table = rule.as_table_mut()?;
        let mut pair = Vec::new();
        for key in ["examples", "negatives"] {
            let taken = table.remove(key);
            pair.push(taken.unwrap_or(toml::Value::Array(Vec::new())));
            table.insert(key.into(), toml::Value::Array(Vec::new()));
        }
        examples.push(toml::Value::Array(pair));
        if !table.contains_key("validator") {
            let id = table.get("id").and_then(|i| i.as_str()).unwrap_or_default();
            if let Some((name, part)) = links.get(id) {
                let mut v = toml::map::Map::new();
                v.insert("name".into(), toml::Value::String(name.clone()));
                v.insert("part".into(), toml::Value::String(part.clone()));
                table.insert("validator".into(), toml::Value::Table(v));
            }
        }
        // Left empty in the JSON, whose reader requires a name and a pattern.
        let mut take = |key: &str| match table.insert(key.into(), "".into()) {
            Some(toml::Value::String(s)) => Some(s),
            _ => None,
        };
        let (name, pattern) = (take("name")?, take("pattern")?);
        let description = match table.remove("description") {
            None => None,
            Some(toml::Value::String(s)) => Some(s),
            Some(_) => return None,
        };
        texts.push(Texts {
            name,
            pattern,
            description,
        });
    }
    let mut json = serde_json::to_value(&doc).ok()?;
    let rules = json.get_mut("rules")?.as_array_mut()?;
    for (rule, texts) in rules.iter_mut().zip(&texts) {
        let Ok(f) = facts::of(&texts.pattern) else {
            continue;
        };
        // A sequence in the order of `Facts`' fields, which serde reads as it reads a map,
        // and faster: the keys were a fifth of the rules' JSON.
        let facts = serde_json::json!([
            f.max_len,
            f.group,
            f.spans_lines,
            f.secret_spans_lines,
            f.fixed_prefix,
            f.secret_len
        ]);
        rule.as_object_mut()?.insert("_facts".into(), facts);
    }
    Some((
        serde_json::to_string(&json).ok()?,
        validators,
        serde_json::to_string(&examples).ok()?,
        texts,
    ))
}

/// A rule's long strings, embedded as Rust string literals beside its JSON: reading them out
/// of JSON (where each backslash of a pattern is an escape) was most of what loading the
/// built-in rules cost, at every start of a process.
struct Texts {
    name: String,
    pattern: String,
    description: Option<String>,
}

/// Which validator checks which rule, as `rules::attach_validators` links them: each
/// `[[validators]]` table's `rules` as the `secret` part, its `with` table's parts, a later
/// table winning.
fn validator_links(
    texts: &[String],
    links: &mut std::collections::HashMap<String, (String, String)>,
) {
    for text in texts {
        let Ok(doc) = toml::from_str::<toml::Value>(text) else {
            continue;
        };
        let specs = doc.get("validators").and_then(|v| v.as_array());
        for spec in specs.into_iter().flatten() {
            let name = spec
                .get("name")
                .and_then(|n| n.as_str())
                .unwrap_or_default();
            let ids = spec.get("rules").and_then(|r| r.as_array());
            for id in ids.into_iter().flatten().filter_map(|i| i.as_str()) {
                links.insert(id.into(), (name.into(), "secret".into()));
            }
            // A BTreeMap in `HttpSpec`: parts in sorted order.
            let mut with: Vec<(&String, &toml::Value)> = spec
                .get("with")
                .and_then(|w| w.as_table())
                .map(|t| t.iter().collect())
                .unwrap_or_default();
            with.sort_by_key(|(part, _)| *part);
            for (part, id) in with {
                if let Some(id) = id.as_str() {
                    links.insert(id.into(), (name.into(), part.clone()));
                }
            }
        }
    }
}

fn main() {
    // Every start of the binary applies its ~44,000 relative relocations (pointers in static
    // tables) before `main`: with them packed (DT_RELR, glibc 2.36+, binutils 2.38+) the
    // loader reads a few KB instead of a 1 MB table, which an agent hook, one process per
    // event, pays every time (benches/RESULTS.md, "Hook start-up"). The binary keeps its
    // position independence (ASLR); only the table's encoding changes.
    if env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu")
        && env::var_os("LEAKHOUND_NO_RELR").is_none()
    {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    println!("cargo:rerun-if-env-changed=LEAKHOUND_NO_RELR");
    let dir = Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap()).join("signatures");
    println!("cargo:rerun-if-changed={}", dir.display());
    println!("cargo:rerun-if-changed=src/rules/facts.rs");
    println!("cargo:rerun-if-changed=src/engine/keywords.rs");
    println!("cargo:rerun-if-changed=src/engine/anchor.rs");
    println!("cargo:rerun-if-changed=src/engine/lead.rs");
    let mut files: Vec<_> = fs::read_dir(&dir)
        .expect("signatures/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let texts: Vec<String> = files
        .iter()
        .map(|f| fs::read_to_string(f).expect("a signature file is UTF-8"))
        .collect();
    let mut links = Default::default();
    validator_links(&texts, &mut links);
    let mut out = String::from("pub(crate) static EMBEDDED: &[(&str, &str, &[Texts])] = &[\n");
    let mut specs = String::from("pub(crate) static EMBEDDED_VALIDATORS: &[(&str, &str)] = &[\n");
    let mut samples = String::from("pub(crate) static EMBEDDED_EXAMPLES: &[&str] = &[\n");
    let mut hash = Sha256::new();
    let mut rules = 0;
    let mut keywords = Vec::new();
    let mut analyses = Vec::new();
    for (f, text) in files.iter().zip(&texts) {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().unwrap().to_string_lossy();
        let (json, validators, examples, strings) = with_facts(text, &links).unwrap_or_else(|| {
            panic!("signatures/{name}: not a rule file the build can read (see `leakhound rules check`)")
        });
        out.push_str(&format!("    ({name:?}, {json:?}, &[\n"));
        for t in strings {
            let (n, p, d) = (t.name, t.pattern, t.description);
            out.push_str(&format!("        ({n:?}, {p:?}, {d:?}),\n"));
        }
        out.push_str("    ]),\n");
        samples.push_str(&format!("    {examples:?},\n"));
        if let Some(v) = validators {
            specs.push_str(&format!("    ({name:?}, {v:?}),\n"));
        }
        for_the_engine(text, &mut keywords, &mut analyses);
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
    specs.push_str("];\n");
    samples.push_str("];\n");
    out.push_str(&specs);
    out.push_str(&samples);
    let out_dir = env::var("OUT_DIR").unwrap();
    fs::write(Path::new(&out_dir).join("signatures.rs"), out).unwrap();
    // No automaton (too large for 32-bit state ids) is an empty file: the engine builds one.
    let dfa = keywords::Keywords::new(&keywords).map(|k| k.to_bytes(&keywords));
    fs::write(
        Path::new(&out_dir).join("keywords.bin"),
        dfa.unwrap_or_default(),
    )
    .unwrap();
    fs::write(
        Path::new(&out_dir).join("anchors.bin"),
        anchor::to_bytes(analyses),
    )
    .unwrap();
    let id: String = hash.finalize()[..6]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("cargo:rustc-env=LEAKHOUND_RULESET={id}");
    println!("cargo:rustc-env=LEAKHOUND_RULE_COUNT={rules}");
}
