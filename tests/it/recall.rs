//! Recall and precision on a generated corpus: every planted fake secret is found on its line
//! with its rule, and no decoy is. Decoys are the classic ones (documentation keys,
//! placeholders, hashes, references) and, in each language's files, code that names secrets
//! without holding one (`synth::code_decoy`: `.field("access_token", &self.access_token)`,
//! `AmzSecurityTokenKey = "X-Amz-Security-Token"`, base64 of plain English, templates). Any
//! finding off the truth is a false positive.

use crate::synth;
use crate::util::Sandbox;
use std::collections::BTreeSet;

/// The corpus's languages, by extension: each gets its own code decoys.
const EXTS: [&str; 8] = ["py", "rs", "go", "js", "ts", "java", "yaml", "md"];

#[test]
fn every_planted_secret_found_and_no_decoy() {
    let sb = Sandbox::new();
    let mut rng = synth::Rng::new(2024);
    let mut truth = BTreeSet::new();
    for i in 0..60 {
        let ext = EXTS[i % EXTS.len()];
        let lang = synth::Lang::of(ext);
        let (text, t) = synth::text_in(&mut rng, lang, 20_000 + i * 500, 25 + i % 7);
        let path = format!("tree/d{}/f{i}.{ext}", i % 5);
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
    // Each miss and false positive with its line, so the shape is plain in the failure.
    let shown = |(path, line, rule): &(String, u64, String)| {
        let text = std::fs::read_to_string(sb.path(path)).unwrap();
        let shown = text.lines().nth(*line as usize - 1).unwrap_or("").trim();
        format!("{path}:{line} {rule}: {shown}")
    };
    let missed: Vec<String> = truth.difference(&found).map(shown).collect();
    assert!(
        missed.is_empty(),
        "{} missed:\n{}",
        missed.len(),
        missed.join("\n")
    );
    let extra: Vec<String> = found.difference(&truth).map(shown).collect();
    assert!(
        extra.is_empty(),
        "{} false positives:\n{}",
        extra.len(),
        extra.join("\n")
    );
}

/// The code decoys hold the shapes that were false alarms on real third-party source
/// (issue 12), each language its own, with identifiers that vary.
#[test]
fn code_decoys_cover_the_shapes_seen_on_real_code() {
    use synth::Lang;
    let mut rng = synth::Rng::new(7);
    let shapes: [(Lang, &[&str]); 7] = [
        (
            Lang::Rust,
            &[
                "formatter.field(\"",
                ".field(\"",
                ".clone(),",
                "use crate::",
                ") -> Result<",
                "_internal(input, seed, &",
                "KeyType::",
            ],
        ),
        (
            Lang::Python,
            &[
                "Token):",
                "'TKToken', 'TKToken",
                "backend: \"Backend\", private_key: \"_",
                "(self, realm, uri, user, passwd, is_authenticated=False):",
                "self.password_handler = HTTPPasswordMgr(pm)",
                " = base64.b64encode(random_bytes[",
                "_endpoint_auth: ",
                "\"token\": \"ya29.",
            ],
        ),
        (
            Lang::Go,
            &[
                "AmzSecurityTokenKey = \"X-Amz-Security-Token\"",
                "amzSecurityTokenKey = v4Internal.AmzSecurityTokenKey",
                "string `json:\"",
            ],
        ),
        (
            Lang::Js,
            &[": this.", ": options.", "\": \"dGhpcyBpcyBhIHRva2Vu\""],
        ),
        (Lang::Ts, &["private readonly ", "?: ", "import { "]),
        (
            Lang::Java,
            &[
                "private final ",
                "Base64.getEncoder()",
                "case ",
                "return \"",
            ],
        ),
        (Lang::Config, &["_token: @", "...\"", "\": \""]),
    ];
    for (lang, want) in shapes {
        let lines: Vec<String> = (0..3000)
            .map(|_| synth::code_decoy(&mut rng, lang))
            .collect();
        for w in want {
            assert!(
                lines.iter().any(|l| l.contains(w)),
                "{lang:?}: no decoy holds {w:?}"
            );
        }
        let distinct: BTreeSet<&String> = lines.iter().collect();
        assert!(distinct.len() > 500, "{lang:?}: identifiers vary");
        assert!(lines.iter().all(|l| !l.contains('\n')), "one line each");
    }
    assert_eq!(synth::base64(b"this is a token"), "dGhpcyBpcyBhIHRva2Vu");
}

/// The corpus generator plants some values with a placeholder word in their random body (so
/// recall figures see what the placeholder filter drops), and changes nothing else: the same
/// seed gives the same text but for those values, which keep their length and format.
#[test]
fn the_generator_plants_values_holding_placeholder_words() {
    let (mut plain_rng, mut worded_rng) = (synth::Rng::new(2025), synth::Rng::new(2025));
    let mut worded = 0;
    for i in 0..30 {
        let lang = synth::Lang::of(EXTS[i % EXTS.len()]);
        let (plain, p) = synth::text_in_words(&mut plain_rng, lang, 20_000, 25, false);
        let (text, t) = synth::text_in_words(&mut worded_rng, lang, 20_000, 25, true);
        assert_eq!(plain.len(), text.len());
        assert_eq!(p.len(), t.len());
        for ((line, rule, before), (line2, rule2, after)) in p.iter().zip(&t) {
            assert_eq!((line, rule, before.len()), (line2, rule2, after.len()));
            if before != after {
                let lower = after.to_ascii_lowercase();
                assert!(
                    synth::PLACEHOLDER_WORDS.iter().any(|w| lower.contains(w)),
                    "{rule}: changed without a placeholder word"
                );
                worded += 1;
            }
        }
    }
    assert!(worded >= 20, "{worded} values with a placeholder word");
}
