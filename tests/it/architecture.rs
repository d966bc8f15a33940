//! The module graph of `src/`: data flows one way, so no top-level module may reach itself
//! through `crate::` paths, and the finding model and the writers stay below the stages.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module -> the top-level modules its code names through `crate::`.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(&src).unwrap();
            let first = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            let module = first.trim_end_matches(".rs").to_string();
            if module == "lib" || module == "main" {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let deps = g.entry(module.clone()).or_default();
            for name in crate_refs(&text) {
                if name != module {
                    deps.insert(name);
                }
            }
        }
    }
    g
}

/// The top-level modules named by `crate::X` and `use crate::{X, Y::..}` outside comments.
fn crate_refs(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a::X, b}`: each top-level name at depth 0 of the braces.
            let mut depth = 0;
            let mut at_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => at_start = true,
                    c if c.is_whitespace() => {}
                    _ if at_start && depth == 0 => {
                        out.insert(ident(&group[j..]));
                        at_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    // Names that are not modules (`crate::X` is always a module at the top level here, but
    // macros such as `$crate` are not used).
    out.remove("");
    out
}

/// A cycle through `start`, if there is one, as the path of module names.
fn cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        g: &BTreeMap<String, BTreeSet<String>>,
        n: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == n) {
            let mut c = path[at..].to_vec();
            c.push(n.to_string());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for d in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(g, d, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for n in g.keys() {
        if let Some(c) = visit(g, n, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn the_scanner_finds_its_own_module_references() {
    let refs = crate_refs(
        "use crate::model::{Finding, Secret};\n// crate::cli in a comment\n\
         use crate::{engine::Match, rules};\nlet x = crate::decode::views(b);",
    );
    let want: BTreeSet<String> = ["model", "engine", "rules", "decode"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(refs, want);
    // And the cycle finder finds a cycle when there is one.
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(cycle(&g), Some(vec!["a".into(), "b".into(), "a".into()]));
}

#[test]
fn no_module_reaches_itself() {
    let g = graph();
    assert!(g.contains_key("model") && g.contains_key("scan"), "{g:?}");
    if let Some(c) = cycle(&g) {
        panic!("import cycle in src/: {}", c.join(" -> "));
    }
}

#[test]
fn the_model_and_the_writers_stay_below_the_stages() {
    let g = graph();
    let allowed = |m: &str, ok: &[&str]| {
        let extra: Vec<&String> = g[m].iter().filter(|d| !ok.contains(&d.as_str())).collect();
        assert!(extra.is_empty(), "{m} must not depend on {extra:?}");
    };
    // The finding model is built from the engine's matches and the rules; nothing else.
    allowed("model", &["engine", "rules", "decode"]);
    // Writers format findings; they run no stage.
    allowed("report", &["model", "rules"]);
    // Leaves.
    allowed("decode", &[]);
    allowed("rules", &[]);
    allowed("sync", &[]);
    allowed("engine", &["rules"]);
    // One detection step under scan and every masker; the maskers never reach into scan.
    allowed("detect", &["engine", "decode", "model", "rules"]);
    allowed(
        "filter",
        &[
            "detect", "engine", "model", "decode", "source", "sync", "testing",
        ],
    );
}

/// What `docs/architecture.md`'s table of rooms says: module -> the modules it may use
/// (`None`: everything). A cell's modules are its backticked names; `—` is none.
fn table(doc: &str) -> BTreeMap<String, Option<BTreeSet<String>>> {
    let mut out = BTreeMap::new();
    let mut rows = doc
        .lines()
        .skip_while(|l| !l.starts_with("| module | holds | may use |"))
        .skip(2);
    for row in rows.by_ref().take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.trim().trim_matches('|').split(" | ").collect();
        assert_eq!(cells.len(), 3, "a row of three cells: {row}");
        let module = cells[0].trim().trim_matches('`').to_string();
        let may = cells[2].trim();
        let uses = (may != "everything").then(|| {
            may.split('`')
                .skip(1)
                .step_by(2)
                .map(String::from)
                .collect::<BTreeSet<_>>()
        });
        assert!(
            out.insert(module.clone(), uses).is_none(),
            "{module} has two rows"
        );
    }
    out
}

/// Where the code and the table disagree, one line each.
fn disagreements(
    code: &BTreeMap<String, BTreeSet<String>>,
    table: &BTreeMap<String, Option<BTreeSet<String>>>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (m, uses) in code {
        match table.get(m) {
            None => out.push(format!("src/{m} has no row in the table")),
            Some(None) => {}
            Some(Some(may)) => {
                for u in uses.difference(may) {
                    out.push(format!("{m} uses {u}, which its row does not list"));
                }
                for u in may.difference(uses) {
                    out.push(format!("{m}'s row lists {u}, which it does not use"));
                }
            }
        }
    }
    for m in table.keys().filter(|m| !code.contains_key(*m)) {
        out.push(format!(
            "the table has a row for {m}, which is no module of src/"
        ));
    }
    out
}

#[test]
fn the_table_reader_and_the_comparison_can_fail() {
    let doc = "x\n| module | holds | may use |\n|---|---|---|\n\
               | `a` | one | `b` (only for tests), `c` |\n| `b` | two | — |\n\
               | `cli` | all | everything |\n\nafter\n| not | a | row |\n";
    let t = table(doc);
    assert_eq!(t.len(), 3);
    assert_eq!(
        t["a"],
        Some(BTreeSet::from(["b".to_string(), "c".to_string()]))
    );
    assert_eq!(t["b"], Some(BTreeSet::new()));
    assert_eq!(t["cli"], None);
    let mut code = BTreeMap::new();
    code.insert(
        "a".to_string(),
        BTreeSet::from(["b".to_string(), "d".to_string()]),
    );
    code.insert("b".to_string(), BTreeSet::new());
    code.insert("e".to_string(), BTreeSet::new());
    let d = disagreements(&code, &t);
    assert_eq!(
        d,
        [
            "a uses d, which its row does not list",
            "a's row lists c, which it does not use",
            "src/e has no row in the table",
            "the table has a row for cli, which is no module of src/",
        ]
    );
}

/// The whole table of rooms is the module graph, edge for edge: a new `use crate::X` needs its
/// row changed, and a row cannot promise an edge the code does not have.
#[test]
fn the_architecture_page_is_the_module_graph() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let t = table(&doc);
    assert!(t.len() >= 15, "the table was read: {t:?}");
    let d = disagreements(&graph(), &t);
    assert!(
        d.is_empty(),
        "docs/architecture.md and src/ disagree:\n{}",
        d.join("\n")
    );
}

/// `respond` runs hooks and built-in actions without naming a provider: the actions, their
/// IAM calls and the operator's credential variables are the validators' (`validate::Action`,
/// `Validator::actions`, `Validator::operator_credential_vars`), as the rest of AWS is.
#[test]
fn respond_names_no_provider() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/respond");
    let mut files = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap().to_lowercase();
        files += 1;
        for name in ["aws", "iam", "sts", "bedrock"] {
            let hits: Vec<&str> = text
                .lines()
                .filter(|l| {
                    l.match_indices(name).any(|(i, _)| {
                        // A word of its own, not a piece of one (`iam` in `diameter`).
                        let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
                        !word(l[..i].chars().next_back())
                            && !word(l[i + name.len()..].chars().next())
                    })
                })
                .collect();
            assert!(hits.is_empty(), "{} names {name}: {hits:?}", p.display());
        }
    }
    assert!(files >= 1, "read {}", dir.display());
}

/// The flags are resolved once: `cli::main` hands each command's clap struct to
/// `cli/settings.rs`, and the command's body gets the settings value back. So no file of
/// `cli/` but the clap definition, the resolution and the dispatch names the clap definition.
#[test]
fn only_the_settings_read_the_flags() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli");
    let mut files = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".rs") || ["args.rs", "settings.rs", "mod.rs"].contains(&&*name) {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(&p).unwrap();
        let hits: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//") && l.contains("args::"))
            .collect();
        assert!(
            hits.is_empty(),
            "cli/{name} reads clap structs; take a value of cli/settings.rs instead: {hits:?}"
        );
    }
    assert!(files >= 5, "read {}", dir.display());
}
