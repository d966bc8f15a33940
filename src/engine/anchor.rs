//! Where a rule's matches can start, read from its pattern: for most rules a match begins
//! with one of the rule's keywords (`secret…`, `ghp_…`), or a byte before one
//! (`_pass…`, `xPass…`). Such a rule is confirmed by an anchored search at each keyword hit
//! (less those offsets) instead of an unanchored search over the whole window: the regex
//! then reads from the hit to where the match fails, not the window's kilobyte on both
//! sides, and needs no reverse search to find where a match began.

use super::lead::Lead;
use regex_syntax::hir::{literal, Class, Hir, HirKind};

/// The first word of the table [`to_bytes`] writes: "LHA1".
const MAGIC: u32 = u32::from_le_bytes(*b"LHA1");
/// No start offsets proven, in the table.
const NO_STARTS: u32 = u32::MAX;

/// What a pattern's analysis gives ([`of`]): its matches' start offsets and their lead.
pub(super) type Analysis = (Option<Box<[usize]>>, Option<Lead>);

/// [`starts`] and, where they are known, the [`Lead`]: the analysis a throughput engine
/// makes of each rule the first time one of its keywords is hit. `keywords` lowercase.
pub(super) fn of(hir: &Hir, keywords: &[String]) -> Analysis {
    let starts = starts(hir, keywords);
    let lead = starts.as_ref().and_then(|_| Lead::of(hir));
    (starts, lead)
}

/// A pattern and its keywords (lowercase) as one number: the key of `build.rs`'s table of
/// analyses ([`to_bytes`]). FNV-1a over the pattern and each keyword, each after its length.
pub(super) fn key(pattern: &str, keywords: &[String]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in (bytes.len() as u64).to_le_bytes().iter().chain(bytes) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(pattern.as_bytes());
    for k in keywords {
        eat(k.as_bytes());
    }
    h
}

/// The analyses of the built-in rules, for `build.rs` to embed (little-endian words): a
/// header ([`MAGIC`], the count), one `(key low, key high, word offset)` per entry sorted by
/// key, then each entry's start offsets (their count first, [`NO_STARTS`] for none) and lead
/// sets (their count first, eight words each). Computing them took a scan of real code some
/// 0.2 s of CPU over the ~350 rules it hit.
#[allow(dead_code)] // build.rs and the tests only
pub(super) fn to_bytes(mut entries: Vec<(u64, Analysis)>) -> Vec<u8> {
    entries.sort_by_key(|e| e.0);
    entries.dedup_by_key(|e| e.0);
    let mut index = vec![MAGIC, entries.len() as u32];
    let mut data: Vec<u32> = Vec::new();
    let base = 2 + 3 * entries.len();
    for (key, (starts, lead)) in &entries {
        index.extend([*key as u32, (*key >> 32) as u32, (base + data.len()) as u32]);
        match starts {
            Some(s) => {
                data.push(s.len() as u32);
                data.extend(s.iter().map(|&d| d as u32));
            }
            None => data.push(NO_STARTS),
        }
        let sets = lead.as_ref().map_or(&[][..], Lead::sets);
        data.push(sets.len() as u32);
        for set in sets {
            data.extend(set.iter().flat_map(|w| [*w as u32, (*w >> 32) as u32]));
        }
    }
    index.extend(data);
    index.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The analysis [`to_bytes`] wrote into `blob` (4-aligned) for `key`; `None` when the table
/// has no such entry (an operator's rule, a built-in one whose keywords were changed), is
/// malformed, or the target is big-endian: the caller then analyses the pattern itself.
pub(super) fn embedded(blob: &'static [u8], key: u64) -> Option<Analysis> {
    if cfg!(target_endian = "big") {
        return None;
    }
    // SAFETY: every bit pattern is a valid u32; only an aligned blob is read.
    let (pre, words, _) = unsafe { blob.align_to::<u32>() };
    if !pre.is_empty() || words.len() < 2 || words[0] != MAGIC {
        return None;
    }
    let n = words[1] as usize;
    let index = words.get(2..2 + 3 * n)?;
    let at = |i: usize| u64::from(index[3 * i]) | u64::from(index[3 * i + 1]) << 32;
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        match at(mid).cmp(&key) {
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
            std::cmp::Ordering::Equal => {
                let mut w = words.get(index[3 * mid + 2] as usize..)?.iter().copied();
                let starts = match w.next()? {
                    NO_STARTS => None,
                    c => Some(
                        (0..c)
                            .map(|_| w.next().map(|d| d as usize))
                            .collect::<Option<_>>()?,
                    ),
                };
                let sets = (0..w.next()?)
                    .map(|_| {
                        let mut set = [0u64; 4];
                        for s in &mut set {
                            *s = u64::from(w.next()?) | u64::from(w.next()?) << 32;
                        }
                        Some(set)
                    })
                    .collect::<Option<Vec<_>>>()?;
                return Some((starts, Lead::from_sets(sets)));
            }
        }
    }
    None
}

/// The most bytes a match may start before the keyword it holds, and the most distinct such
/// offsets, for the anchored search to be worth it.
const MAX_BACK: usize = 4;
const MAX_OFFSETS: usize = 3;

/// The offsets `d` (ascending) such that every match of `hir` starts `d` bytes before the
/// start of an occurrence of one of `keywords` (lowercase; matched ASCII case-insensitively,
/// as the keyword automaton does); `None` when no such small set is proven.
pub(super) fn starts(hir: &Hir, keywords: &[String]) -> Option<Box<[usize]>> {
    let prefixes = literal::Extractor::new()
        .kind(literal::ExtractKind::Prefix)
        // Enough to spell out `[a-z0-9]Pass` or `key"]=`; beyond it literals are cut
        // short (still prefixes of every match) or the set becomes infinite (no proof).
        .limit_class(64)
        .limit_total(4096)
        .extract(&fold_case(hir));
    let mut offsets: Vec<usize> = Vec::new();
    for lit in prefixes.literals()? {
        let s = lit.as_bytes();
        // The first offset at which the prefix holds a keyword: the hit the match is found
        // from. A prefix too short to hold one proves nothing.
        let d = (0..=MAX_BACK.min(s.len())).find(|&d| {
            keywords.iter().any(|k| {
                s.len() - d >= k.len() && s[d..d + k.len()].eq_ignore_ascii_case(k.as_bytes())
            })
        })?;
        if !offsets.contains(&d) {
            offsets.push(d);
        }
    }
    if offsets.is_empty() || offsets.len() > MAX_OFFSETS {
        return None;
    }
    offsets.sort_unstable();
    Some(offsets.into_boxed_slice())
}

/// `hir` with each class that is one ASCII letter in both cases (what `(?i)` makes of a
/// letter) replaced by the lowercase letter, so that a case-insensitive keyword is one
/// prefix rather than 2^n; the comparison with the keywords ignores case again.
fn fold_case(hir: &Hir) -> Hir {
    match hir.kind() {
        HirKind::Class(Class::Bytes(c)) => {
            let r = c
                .ranges()
                .iter()
                .map(|r| (u32::from(r.start()), u32::from(r.end())));
            one_letter(r).map_or_else(|| hir.clone(), |b| Hir::literal([b]))
        }
        HirKind::Class(Class::Unicode(c)) => {
            let r = c
                .ranges()
                .iter()
                .map(|r| (u32::from(r.start()), u32::from(r.end())));
            one_letter(r).map_or_else(|| hir.clone(), |b| Hir::literal([b]))
        }
        HirKind::Empty | HirKind::Literal(_) | HirKind::Look(_) => hir.clone(),
        HirKind::Repetition(r) => Hir::repetition(regex_syntax::hir::Repetition {
            sub: Box::new(fold_case(&r.sub)),
            ..r.clone()
        }),
        HirKind::Capture(c) => Hir::capture(regex_syntax::hir::Capture {
            sub: Box::new(fold_case(&c.sub)),
            ..c.clone()
        }),
        HirKind::Concat(hs) => Hir::concat(hs.iter().map(fold_case).collect()),
        HirKind::Alternation(hs) => Hir::alternation(hs.iter().map(fold_case).collect()),
    }
}

/// The lowercase letter, when a class's ranges (as code points) are exactly one ASCII letter
/// in both cases: `[Aa]`, as `(?i)a` is parsed.
fn one_letter(mut ranges: impl Iterator<Item = (u32, u32)>) -> Option<u8> {
    let (upper, lower) = (ranges.next()?, ranges.next()?);
    if ranges.next().is_some() || upper.0 != upper.1 || lower.0 != lower.1 {
        return None;
    }
    let u = u8::try_from(upper.0).ok().filter(u8::is_ascii_uppercase)?;
    (u32::from(u.to_ascii_lowercase()) == lower.0).then(|| u.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::starts;

    /// The analysis `build.rs` embedded for each built-in rule is the one the engine would
    /// make itself, every built-in rule has one, and another keyword list finds none.
    #[test]
    fn the_embedded_analyses_are_the_engines_own() {
        let blob = &super::super::EMBEDDED_ANCHORS.0;
        let mut proven = 0;
        for r in crate::rules::builtin() {
            let keywords: Vec<String> = r.keywords.iter().map(|k| k.to_ascii_lowercase()).collect();
            let hir = super::super::parse(&r.pattern).unwrap();
            let (starts, lead) = super::of(&hir, &keywords);
            let key = super::key(&r.pattern, &keywords);
            let (e_starts, e_lead) = super::embedded(blob, key)
                .unwrap_or_else(|| panic!("{}: not in the embedded table", r.id));
            assert_eq!(e_starts, starts, "{}", r.id);
            let sets = |l: &Option<super::Lead>| l.as_ref().map(|l| l.sets().to_vec());
            assert_eq!(sets(&e_lead), sets(&lead), "{}", r.id);
            proven += usize::from(starts.is_some());
            let mut more = keywords.clone();
            more.push("zq-one-more".into());
            assert!(super::embedded(blob, super::key(&r.pattern, &more)).is_none());
        }
        assert!(proven > 500, "{proven}");
        assert!(super::embedded(b"LHA1", 0).is_none());
    }

    fn of(pattern: &str, keywords: &[&str]) -> Option<Vec<usize>> {
        let hir = super::super::parse(pattern).unwrap();
        let kw: Vec<String> = keywords.iter().map(|k| k.to_string()).collect();
        starts(&hir, &kw).map(|b| b.to_vec())
    }

    #[test]
    fn offsets_are_proven_or_refused() {
        // A case-insensitive name, then anything: matches start at the keyword.
        assert_eq!(
            of(r"(?i:secret)[\w\-]{0,16}=(?P<secret>\w+)", &["secret"]),
            Some(vec![0])
        );
        // A byte before the keyword in one alternative.
        assert_eq!(
            of(
                r"(?:(?i:password)|[_.](?i:pass))=(?P<secret>\w+)",
                &["password", "pass"]
            ),
            Some(vec![0, 1])
        );
        // The keyword is the key's start with the sign after it: `key=` is found from `key`.
        assert_eq!(
            of(
                r"(?i:key)[ ]?(?:=|:)(?P<secret>\w+)",
                &["key=", "key =", "key:", "key :"]
            ),
            Some(vec![0])
        );
        // A match that can start anywhere before the keyword proves nothing.
        assert_eq!(of(r"[a-z]{0,8}ghp_(?P<secret>\w{36})", &["ghp_"]), None);
        // Nor one whose keyword is in the middle, far from its start.
        assert_eq!(of(r"aws_(?P<secret>\w{40})", &["secret"]), None);
        // Nor an empty prefix (an optional keyword).
        assert_eq!(of(r"(?:ghp_)?(?P<secret>\w{36})", &["ghp_"]), None);
    }
}
