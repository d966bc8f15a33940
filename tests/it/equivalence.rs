//! The keyword prefilter loses nothing: on random input with rule examples planted anywhere
//! (chunk and window edges included), the engine finds exactly what a plain pass of every
//! rule's regex over the whole input finds.

use leakhound::engine::Engine;
use proptest::prelude::*;
use std::sync::OnceLock;

fn engine() -> &'static Engine {
    static E: OnceLock<Engine> = OnceLock::new();
    E.get_or_init(|| {
        Engine::new(
            leakhound::rules::builtin(),
            leakhound::engine::FingerprintKey::ephemeral(),
        )
        .unwrap()
    })
}

fn examples() -> &'static Vec<(usize, Vec<u8>)> {
    static X: OnceLock<Vec<(usize, Vec<u8>)>> = OnceLock::new();
    X.get_or_init(|| {
        engine()
            .rules()
            .iter()
            .enumerate()
            .flat_map(|(i, r)| r.examples.iter().map(move |e| (i, e.as_bytes().to_vec())))
            .collect()
    })
}

/// Noise: mostly printable text with separators, sometimes arbitrary bytes.
fn noise() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => proptest::collection::vec(prop_oneof![
            8 => 0x20u8..0x7f,
            1 => Just(b'\n'),
            1 => Just(b'='),
            1 => Just(b'"'),
        ], 0..300),
        1 => proptest::collection::vec(any::<u8>(), 0..300),
    ]
}

fn input() -> impl Strategy<Value = Vec<u8>> {
    let n = examples().len();
    proptest::collection::vec((noise(), 0..n, any::<bool>()), 1..8).prop_map(|parts| {
        let mut out = Vec::new();
        for (noise, ex, plant) in parts {
            out.extend_from_slice(&noise);
            if plant {
                out.extend_from_slice(&examples()[ex].1);
            }
        }
        out
    })
}

/// Every rule's keyword, once.
fn keywords() -> &'static Vec<Vec<u8>> {
    static K: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    K.get_or_init(|| {
        let mut k: Vec<Vec<u8>> = engine()
            .rules()
            .iter()
            .flat_map(|r| r.keywords.iter().map(|k| k.as_bytes().to_vec()))
            .collect();
        k.sort();
        k.dedup();
        k
    })
}

/// Keywords one after the other with a few bytes between, now and then an example: hits by
/// the dozen, most of which no match can start at (the engine drops their windows as it
/// finds them) and whose windows would have joined the others'.
fn dense_input() -> impl Strategy<Value = Vec<u8>> {
    let (k, n) = (keywords().len(), examples().len());
    let between = proptest::collection::vec(
        prop_oneof![4 => 0x20u8..0x7f, 1 => Just(b'='), 1 => Just(b'\n')],
        0..12,
    );
    proptest::collection::vec((0..k, between, 0..n, 0u8..6), 1..60).prop_map(|parts| {
        let mut out = Vec::new();
        for (kw, between, ex, roll) in parts {
            out.extend_from_slice(&keywords()[kw]);
            out.extend_from_slice(&between);
            if roll == 0 {
                out.extend_from_slice(&examples()[ex].1);
            }
        }
        out
    })
}

/// The engine, whole and in chunks of `chunk` bytes, finds what every rule's regex finds over
/// the whole of `hay`. Tiny chunks put chunk edges through keywords and secrets.
fn agrees_with_reference(hay: &[u8], chunk: usize) -> Result<(), TestCaseError> {
    let e = engine();
    let reference = e.finish(hay, e.reference_candidates(hay));
    prop_assert_eq!(&e.scan(hay), &reference);
    prop_assert_eq!(&e.scan_chunked(hay, chunk), &reference);
    Ok(())
}

/// Names with no value after them by the thousand (`secret_9.name(x)`, a scan's most common
/// keyword hit) make the engine walk a rule's DFA before its regex, once the rule has been
/// searched often: what it finds, while that happens and after, is still what every rule's
/// regex finds over the whole input.
#[test]
fn a_rule_searched_at_thousands_of_starts_finds_the_same() {
    // A fresh engine: its rules have been searched nowhere yet.
    let e = Engine::new(
        leakhound::rules::builtin(),
        leakhound::engine::FingerprintKey::ephemeral(),
    )
    .unwrap();
    let mut hay = Vec::new();
    for (i, (_, ex)) in examples().iter().cycle().take(4000).enumerate() {
        hay.extend_from_slice(format!("secret_{i}.name(x) token, api_key: x\n").as_bytes());
        if i % 7 == 0 {
            hay.extend_from_slice(ex);
            hay.push(b'\n');
        }
    }
    let reference = e.finish(&hay, e.reference_candidates(&hay));
    assert!(reference.len() > 100, "{}", reference.len());
    assert_eq!(e.scan(&hay), reference, "the scan that built the walks");
    assert_eq!(e.scan(&hay), reference, "a scan with them");
    assert_eq!(e.scan_chunked(&hay, 4096), reference, "in chunks");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn dense_keyword_hits_change_nothing(hay in dense_input(), chunk in 16usize..512) {
        agrees_with_reference(&hay, chunk)?;
    }

    #[test]
    fn prefiltered_equals_reference(hay in input(), chunk in 16usize..512) {
        agrees_with_reference(&hay, chunk)?;
    }

    #[test]
    fn planted_example_found_at_its_exact_offset(
        before in proptest::collection::vec(0x20u8..0x7f, 0..2000),
        after in proptest::collection::vec(0x20u8..0x7f, 0..200),
        which in 0usize..1000,
        chunk in 8usize..4096,
    ) {
        let e = engine();
        let (rule, ex) = &examples()[which % examples().len()];
        let alone: Vec<_> = e.scan(ex).into_iter().filter(|m| m.rule == *rule).collect();
        prop_assert!(!alone.is_empty());
        let mut hay = before.clone();
        hay.push(b'\n');
        let at = hay.len();
        hay.extend_from_slice(ex);
        hay.push(b'\n');
        hay.extend_from_slice(&after);
        let found = e.scan_chunked(&hay, chunk);
        for m in &alone {
            prop_assert!(
                found.iter().any(|f| f.rule == *rule && f.start == m.start + at && f.end == m.end + at),
                "rule {} example not found at {}", e.rules()[*rule].id, at + m.start
            );
        }
    }

    #[test]
    fn findings_on_random_bytes_are_where_the_matches_are(
        bytes in proptest::collection::vec(any::<u8>(), 0..4096),
        planted in input(),
        at in any::<proptest::sample::Index>(),
    ) {
        // Arbitrary bytes with rule examples spliced in somewhere, so there are findings
        // to check (random bytes alone almost never hold one).
        let mut hay = bytes.clone();
        let cut = at.index(hay.len() + 1);
        hay.splice(cut..cut, planted.iter().copied());
        let e = engine();
        let m = e.scan(&hay);
        for x in &m {
            prop_assert!(x.start <= x.end && x.end <= hay.len(), "span {}..{}", x.start, x.end);
            prop_assert!(x.rule < e.rules().len());
        }
        let prov = leakhound::model::Provenance::Stream { name: "x".into() };
        let f = leakhound::model::findings(e.rules(), &hay, &m, &prov, e.fingerprint_key());
        prop_assert_eq!(f.len(), m.len());
        for x in &f {
            // The finding's secret is the bytes at its span, on the line its offset is on.
            let at_span = String::from_utf8_lossy(&hay[x.start..x.end]).into_owned();
            prop_assert_eq!(x.secret.reveal(), at_span);
            let line = 1 + hay[..x.start].iter().filter(|&&b| b == b'\n').count();
            prop_assert_eq!(x.line, line);
            prop_assert!(x.end_line >= x.line && x.column >= 1);
            // A context is one line of text: no newline or other control character.
            for shown in [x.context.render(false), x.context.render(true)] {
                prop_assert!(
                    !shown.chars().any(|c| c.is_control() && c != '\t'),
                    "control character in {:?}", shown
                );
            }
        }
    }
}

proptest! {
    // Each case starts the binary: fewer cases.
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_on_stdin_exit_0_or_1_without_a_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..8192),
        planted in input(),
    ) {
        let mut hay = bytes;
        hay.extend_from_slice(&planted);
        let sb = crate::util::Sandbox::new();
        let r = sb.run_stdin(&["scan", "-", "--format", "jsonl"], Some(&hay));
        // A death by signal is code -1 here, so this excludes it too.
        prop_assert!(r.code == 0 || r.code == 1, "exit {}: {}", r.code, r.stderr);
        prop_assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
        prop_assert_eq!(r.code == 1, !r.jsonl().is_empty());
    }
}

#[test]
fn secret_across_the_default_chunk_edge() {
    let e = engine();
    let gh = crate::util::fake_github(42);
    for shift in [0usize, 1, 5, 20, 39] {
        let edge = 8 << 20;
        let mut hay = vec![b'.'; edge - shift];
        hay.extend_from_slice(b" ");
        hay.extend_from_slice(gh.as_bytes());
        hay.extend(std::iter::repeat_n(b'.', 100));
        let found = e.scan(&hay);
        assert_eq!(found.len(), 1, "shift {shift}");
        assert_eq!(found[0].start, edge - shift + 1);
    }
}
