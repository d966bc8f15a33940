//! Recall and precision on a generated corpus: every planted fake secret is found on its line
//! with its rule, and no decoy (documentation keys, placeholders, hashes, references) is.

use crate::synth;
use crate::util::Sandbox;
use std::collections::BTreeSet;

#[test]
fn every_planted_secret_found_and_no_decoy() {
    let sb = Sandbox::new();
    let mut rng = synth::Rng::new(2024);
    let mut truth = BTreeSet::new();
    for i in 0..60 {
        let (text, t) = synth::text(&mut rng, 20_000 + i * 500, 25 + i % 7);
        let path = format!("tree/d{}/f{i}.py", i % 5);
        sb.write(&path, text);
        for (line, rule, _) in t {
            truth.insert((path.clone(), line as u64, rule.to_string()));
        }
    }
    assert!(truth.len() > 500);
    let r = sb.run(&["scan", "tree", "--format", "jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let found: BTreeSet<_> = r
        .jsonl()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let missed: Vec<_> = truth.difference(&found).take(5).collect();
    let extra: Vec<_> = found.difference(&truth).take(5).collect();
    assert!(missed.is_empty(), "missed {missed:?}");
    assert!(extra.is_empty(), "false positives {extra:?}");
}
