//! Where a rule's matches can start, read from its pattern: for most rules a match begins
//! with one of the rule's keywords (`secret…`, `ghp_…`), or a byte before one
//! (`_pass…`, `xPass…`). Such a rule is confirmed by an anchored search at each keyword hit
//! (less those offsets) instead of an unanchored search over the whole window: the regex
//! then reads from the hit to where the match fails, not the window's kilobyte on both
//! sides, and needs no reverse search to find where a match began.

use regex_syntax::hir::{literal, Class, Hir, HirKind};

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
