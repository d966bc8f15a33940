//! `rules check`: every rule's examples and negatives through the whole engine.

use super::Engine;
use crate::rules::Rule;

/// One failed expectation, naming the rule file, the rule and what went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckFailure {
    pub file: String,
    pub rule: String,
    pub message: String,
}

impl std::fmt::Display for CheckFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: rule {:?}: {}", self.file, self.rule, self.message)
    }
}

/// Check every rule of `engine`: each example must give a finding of its rule, each negative
/// must not, and the prefiltered engine must agree with a plain regex pass on both (which
/// catches a pattern that can match without containing any of its keywords). Only rules for
/// which `which` is true are checked; the others still take part in the engine.
pub fn check(engine: &Engine, which: impl Fn(&Rule) -> bool) -> Vec<CheckFailure> {
    let mut failures = Vec::new();
    for (i, rule) in engine.rules().iter().enumerate().filter(|(_, r)| which(r)) {
        let mut fail = |message: String| {
            failures.push(CheckFailure {
                file: rule.origin.clone(),
                rule: rule.id.clone(),
                message,
            })
        };
        if rule.examples.is_empty() {
            fail("examples: at least one example is required".into());
        }
        let cases = rule
            .examples
            .iter()
            .map(|e| (e, true))
            .chain(rule.negatives.iter().map(|n| (n, false)));
        for (n, (text, expect)) in cases.enumerate() {
            let hay = text.as_bytes();
            let found = engine.scan(hay);
            // An example generated from a converted rule's regex may be what another rule
            // (a built-in one for the same provider) reports: the match is there either way.
            let hit = found.iter().any(|m| m.rule == i)
                || (expect && rule.generated_examples && !found.is_empty());
            let kind = if expect { "examples" } else { "negatives" };
            if hit != expect {
                // A missed example with none of the keywords in it is the keywords' fault,
                // not the pattern's: say so, or the author hunts in the wrong place.
                let lower = text.to_ascii_lowercase();
                let no_keyword = expect
                    && !rule.keywords.is_empty()
                    && !rule
                        .keywords
                        .iter()
                        .any(|k| lower.contains(&k.to_ascii_lowercase()));
                fail(format!(
                    "{kind}[{}]: {}",
                    if expect { n } else { n - rule.examples.len() },
                    if no_keyword {
                        format!(
                            "not found by the engine: none of the keywords ({}) occurs in it",
                            rule.keywords.join(", ")
                        )
                    } else if expect {
                        "not found by the engine".into()
                    } else {
                        "matched, but it is a negative".into()
                    }
                ));
                continue;
            }
            let reference = engine.finish(hay, engine.reference_candidates(hay));
            if reference != found {
                fail(format!(
                    "{kind}: the keyword prefilter and a full regex pass disagree; \
                     does every match contain one of the keywords?"
                ));
            }
        }
    }
    failures
}
