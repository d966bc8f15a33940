//! What the engine needs to know about a rule's pattern before running it: its longest match,
//! the index of its `secret` group, whether a match can run past a line end, whether the
//! secret starts with the provider's literal prefix. Reading them means parsing the pattern;
//! for the embedded rule set `build.rs` does that once, at build time (this file is compiled
//! into it too), so a process that starts for one agent event does not parse 900 patterns.
//!
//! Only `regex_syntax` here: the build script has nothing else of the crate.

use regex_syntax::hir::Hir;

/// The facts of one pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
pub struct Facts {
    /// Longest match in bytes; `None` when unbounded.
    #[serde(default)]
    pub max_len: Option<usize>,
    /// Capture index of the group named `secret`; `None` when there is none.
    #[serde(default)]
    pub group: Option<usize>,
    /// A match can hold a line feed before its last byte.
    pub spans_lines: bool,
    /// The `secret` group itself can hold one (a PEM block), not only the context before it
    /// (a key id's line before the secret on the next): a stream filter must hold the lines
    /// of such a secret, while context already forwarded is still there for the next scan.
    #[serde(default)]
    pub secret_spans_lines: bool,
    /// The secret starts with a literal of 3 bytes or more in every alternative.
    pub fixed_prefix: bool,
    /// The secret's length when every match's is the same (`ghp_` and 36 more): where a
    /// token glued to the letter after it ends (`Engine::confirm_glued`).
    #[serde(default)]
    pub secret_len: Option<usize>,
}

/// `pattern` parsed as the engine compiles it: what `build.rs` reads facts and the engine's
/// start analyses from, and what the engine builds its regexes from. Bytes, not text, with
/// no Unicode classes: secrets sit in invalid UTF-8 too, and ASCII classes are much faster.
pub fn parse(pattern: &str) -> Result<Hir, String> {
    regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .nest_limit(64)
        .build()
        .parse(pattern)
        .map_err(|e| regex_error(&e.to_string()))
}

/// A regex crate's error without the pattern it quotes (`regex parse error:`, the pattern,
/// a caret line, `error: …`): a pattern may be a secret itself (an allow list's literal
/// value), and no message shows one. The column the caret points at is kept.
pub fn regex_error(message: &str) -> String {
    let lines: Vec<&str> = message.lines().collect();
    let Some(what) = lines
        .iter()
        .rev()
        .find_map(|l| l.trim_start().strip_prefix("error: "))
    else {
        // No quoted pattern to leave out (a size limit): the crate's own words.
        return message.lines().next().unwrap_or_default().to_string();
    };
    // One pattern line, then the carets under it, each indented as the crate indents.
    let column = match lines[..] {
        [_, pattern, carets, _] if carets.trim_start().starts_with('^') => {
            let indent = pattern.len() - pattern.trim_start().len();
            carets.find('^').and_then(|c| c.checked_sub(indent))
        }
        _ => None,
    };
    match column {
        Some(c) => format!("regex parse error at column {}: {what}", c + 1),
        None => format!("regex parse error: {what}"),
    }
}

/// Parse `pattern` as the engine compiles it and read its facts.
pub fn of(pattern: &str) -> Result<Facts, String> {
    let hir = parse(pattern)?;
    Ok(Facts {
        max_len: hir.properties().maximum_len(),
        group: secret_group(&hir),
        spans_lines: newline_inside(&hir),
        secret_spans_lines: secret_of(&hir).is_some_and(newline_inside),
        fixed_prefix: secret_has_fixed_prefix(&hir),
        secret_len: secret_of(&hir).and_then(|h| {
            let p = h.properties();
            p.minimum_len().filter(|&n| p.maximum_len() == Some(n))
        }),
    })
}

/// Capture index of the group named `secret` (the numbering the compiled regex uses).
fn secret_group(hir: &Hir) -> Option<usize> {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Capture(c) if c.name.as_deref() == Some("secret") => Some(c.index as usize),
        HirKind::Capture(c) => secret_group(&c.sub),
        HirKind::Repetition(r) => secret_group(&r.sub),
        HirKind::Concat(hs) | HirKind::Alternation(hs) => hs.iter().find_map(secret_group),
        _ => None,
    }
}

/// Whether a match can hold a line feed before its last byte, i.e. run on past a line end.
/// (A trailing boundary class such as `[^A-Za-z0-9]` may end a match with a line feed;
/// that match still ends on its line.)
fn newline_inside(hir: &Hir) -> bool {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Literal(l) => {
            l.0.split_last()
                .is_some_and(|(_, init)| init.contains(&b'\n'))
        }
        HirKind::Class(_) | HirKind::Empty | HirKind::Look(_) => false,
        HirKind::Capture(c) => newline_inside(&c.sub),
        HirKind::Repetition(r) => {
            newline_inside(&r.sub) || (r.max != Some(1) && can_match_newline(&r.sub))
        }
        HirKind::Alternation(hs) => hs.iter().any(newline_inside),
        HirKind::Concat(hs) => match hs.split_last() {
            Some((last, init)) => init.iter().any(can_match_newline) || newline_inside(last),
            None => false,
        },
    }
}

/// Whether any string the pattern matches can contain a line feed.
fn can_match_newline(hir: &Hir) -> bool {
    use regex_syntax::hir::{Class, HirKind};
    match hir.kind() {
        HirKind::Literal(l) => l.0.contains(&b'\n'),
        HirKind::Class(Class::Bytes(c)) => c
            .ranges()
            .iter()
            .any(|r| r.start() <= b'\n' && b'\n' <= r.end()),
        HirKind::Class(Class::Unicode(c)) => c
            .ranges()
            .iter()
            .any(|r| r.start() <= '\n' && '\n' <= r.end()),
        HirKind::Capture(c) => can_match_newline(&c.sub),
        HirKind::Repetition(r) => can_match_newline(&r.sub),
        HirKind::Concat(hs) | HirKind::Alternation(hs) => hs.iter().any(can_match_newline),
        HirKind::Empty | HirKind::Look(_) => false,
    }
}

/// Whether the `secret` group of `pattern` starts with a literal of 3 bytes or more in every
/// alternative (`ghp_…`, `(?:AKIA|ASIA)…`): the provider's own prefix, not context.
fn secret_has_fixed_prefix(hir: &regex_syntax::hir::Hir) -> bool {
    use regex_syntax::hir::HirKind;
    fn starts_literal(h: &Hir) -> bool {
        match h.kind() {
            HirKind::Literal(l) => l.0.len() >= 3,
            HirKind::Concat(parts) => {
                // Adjacent literals are separate nodes when a case flag splits them.
                let mut n = 0;
                for p in parts {
                    match p.kind() {
                        HirKind::Literal(l) => n += l.0.len(),
                        _ if n > 0 => break,
                        _ => return starts_literal(p),
                    }
                    if n >= 3 {
                        return true;
                    }
                }
                n >= 3
            }
            HirKind::Alternation(alts) => alts.iter().all(starts_literal),
            HirKind::Capture(c) => starts_literal(&c.sub),
            _ => false,
        }
    }
    secret_of(hir).is_some_and(starts_literal)
}

/// Where the `secret` group sits in every match, when the match's bounds alone say: the
/// pattern is that group between parts of fixed length (`-----BEGIN RSA PRIVATE
/// KEY-----(?P<secret>…)-----END RSA PRIVATE KEY-----`, `\b(?P<secret>…)\b`). Returns the
/// bytes before it and after it. The engine then asks its regex for the match alone, which
/// spares it a second pass over the match for the group; over a long match of a long bounded
/// repetition (a 24,000-state NFA for a private key's body) that pass was most of the cost.
#[allow(dead_code)] // build.rs includes this file and does not call it
pub(crate) fn secret_between_fixed(hir: &Hir) -> Option<(usize, usize)> {
    use regex_syntax::hir::HirKind;
    let is_secret =
        |h: &Hir| matches!(h.kind(), HirKind::Capture(c) if c.name.as_deref() == Some("secret"));
    if is_secret(hir) {
        return Some((0, 0));
    }
    let HirKind::Concat(parts) = hir.kind() else {
        return None;
    };
    let at = parts.iter().position(is_secret)?;
    let fixed = |h: &Hir| {
        let p = h.properties();
        p.minimum_len().filter(|&n| p.maximum_len() == Some(n))
    };
    let before = parts[..at].iter().map(fixed).sum::<Option<usize>>()?;
    let after = parts[at + 1..].iter().map(fixed).sum::<Option<usize>>()?;
    Some((before, after))
}

/// `hir` with every counted repetition whose upper bound is above `above` left unbounded
/// (`{64,12000}?` made `{64,}?`), and a length below which every match of it is a match of
/// `hir`: one that takes a repetition past its bound takes at least `(bound + 1)` times the
/// shortest of its body. `None` when there is no such repetition (or only ones whose body
/// can be empty, which are kept). Every path of `hir` is one of the result's, in the same
/// order of preference, so a search that finds a match shorter than that length finds
/// `hir`'s first match, and one that finds none finds what `hir` finds. A lazy DFA counts a
/// bound in states, one for each byte: a PEM block's body of up to 12,000 filled its cache,
/// and every key fell back to the PikeVM.
#[allow(dead_code)] // build.rs includes this file and does not call it
pub(crate) fn without_long_bounds(hir: &Hir, above: u32) -> Option<(Hir, usize)> {
    let mut below = usize::MAX;
    let hir = unbound(hir, above, &mut below)?;
    Some((hir, below))
}

fn unbound(hir: &Hir, above: u32, below: &mut usize) -> Option<Hir> {
    use regex_syntax::hir::{Capture, HirKind, Repetition};
    let mut all = |hs: &[Hir]| -> Option<Vec<Hir>> {
        let new: Vec<Option<Hir>> = hs.iter().map(|h| unbound(h, above, below)).collect();
        new.iter().any(Option::is_some).then(|| {
            new.into_iter()
                .zip(hs)
                .map(|(n, h)| n.unwrap_or_else(|| h.clone()))
                .collect()
        })
    };
    match hir.kind() {
        HirKind::Repetition(r) => {
            let sub = unbound(&r.sub, above, below);
            let shortest = r.sub.properties().minimum_len().filter(|&n| n > 0);
            let long = match (r.max, shortest) {
                (Some(max), Some(n)) if max > above => {
                    *below = (*below).min((max as usize + 1).saturating_mul(n));
                    true
                }
                _ => false,
            };
            (long || sub.is_some()).then(|| {
                Hir::repetition(Repetition {
                    min: r.min,
                    max: if long { None } else { r.max },
                    greedy: r.greedy,
                    sub: Box::new(sub.unwrap_or_else(|| (*r.sub).clone())),
                })
            })
        }
        HirKind::Capture(c) => unbound(&c.sub, above, below).map(|sub| {
            Hir::capture(Capture {
                index: c.index,
                name: c.name.clone(),
                sub: Box::new(sub),
            })
        }),
        HirKind::Concat(hs) => all(hs).map(Hir::concat),
        HirKind::Alternation(hs) => all(hs).map(Hir::alternation),
        _ => None,
    }
}

/// The pattern cut around its `secret` group, when that group is one of the parts of the
/// whole pattern's concatenation: what comes before it, the group's body, and what comes
/// after it (each possibly empty).
#[allow(dead_code)] // build.rs includes this file and does not call it
pub(crate) fn around_secret(hir: &Hir) -> Option<[Hir; 3]> {
    use regex_syntax::hir::HirKind;
    let HirKind::Concat(parts) = hir.kind() else {
        return None;
    };
    let at = parts.iter().position(
        |h| matches!(h.kind(), HirKind::Capture(c) if c.name.as_deref() == Some("secret")),
    )?;
    let HirKind::Capture(c) = parts[at].kind() else {
        return None;
    };
    Some([
        Hir::concat(parts[..at].to_vec()),
        (*c.sub).clone(),
        Hir::concat(parts[at + 1..].to_vec()),
    ])
}

/// The body of the group named `secret`.
fn secret_of(h: &Hir) -> Option<&Hir> {
    use regex_syntax::hir::HirKind;
    match h.kind() {
        HirKind::Capture(c) if c.name.as_deref() == Some("secret") => Some(&c.sub),
        HirKind::Capture(c) => secret_of(&c.sub),
        HirKind::Concat(v) | HirKind::Alternation(v) => v.iter().find_map(secret_of),
        HirKind::Repetition(r) => secret_of(&r.sub),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::secret_between_fixed;

    #[test]
    fn a_secret_between_fixed_parts_is_read_from_the_bounds() {
        let of = |p: &str| secret_between_fixed(&super::parse(p).unwrap());
        assert_eq!(
            of(r"-----BEGIN X-----(?P<secret>[A-Z]{4,90})-----END X-----"),
            Some((17, 15))
        );
        assert_eq!(of(r"\b(?P<secret>AKIA[A-Z2-7]{16})\b"), Some((0, 0)));
        assert_eq!(of(r"(?P<secret>[a-f0-9]{32})"), Some((0, 0)));
        assert_eq!(of(r"(?i:token)[ =]{1,3}(?P<secret>[a-z]{8})"), None);
        assert_eq!(
            of(r"\b(?P<secret>ghp_[A-Za-z0-9]{36})(?:[^A-Za-z0-9]|$)"),
            None
        );
        assert_eq!(of(r"key=(?:(?P<secret>[a-z]{8})|[0-9]{8})"), None);
        assert_eq!(of(r"(?:key=)?x(?P<other>y)"), None);
    }
    #[test]
    fn the_embedded_facts_are_what_parsing_says() {
        let rules = crate::rules::builtin();
        assert!(rules.len() > 800);
        for r in &rules {
            assert_eq!(r.facts, Some(super::of(&r.pattern).unwrap()), "{}", r.id);
        }
        let f = super::of(r"\b(?P<secret>ghp_[A-Za-z0-9]{36})\b").unwrap();
        assert_eq!(
            (f.max_len, f.group, f.fixed_prefix, f.spans_lines),
            (Some(40), Some(1), true, false)
        );
        let f = super::of(r"key[\s\S]{0,9}(?P<secret>[a-z]{4})").unwrap();
        assert!(f.spans_lines && !f.fixed_prefix && !f.secret_spans_lines);
        let f = super::of(r"(?P<secret>-----BEGIN[\s\S]{0,90}-----END)").unwrap();
        assert!(f.spans_lines && f.secret_spans_lines);
    }

    /// Past the length it vouches for, the unbounded pattern's match may be one the bounded
    /// pattern cannot make (a bounded part took more, a variable part beside it less); below
    /// it, its match is the bounded pattern's first, groups and all. Every start of every
    /// string of up to 10 bytes over each pattern's letters, anchored and not, as the engine
    /// searches.
    #[test]
    fn an_unbounded_match_below_its_length_is_the_bounded_one() {
        use regex_automata::{meta::Regex, util::captures::Captures, Anchored, Input};
        let cases = [
            (r"a{0,3}(?P<secret>b{2,5})c", b"abc"),
            (r"x(?P<secret>[a-c]{1,5}?)y", b"axy"),
            (r"(?:k|kk)=(?P<secret>[ab]{2,6})\b", b"k=a"),
            (r"(?:ab{1,6}){1,2}c", b"abc"),
        ];
        let groups = |c: &Captures| {
            (0..c.group_len())
                .map(|g| c.get_group(g))
                .collect::<Vec<_>>()
        };
        for (p, letters) in cases {
            let hir = super::parse(p).unwrap();
            let (unbounded, below) = super::without_long_bounds(&hir, 4).unwrap();
            let (bounded, unbounded) = (
                Regex::builder().build_from_hir(&hir).unwrap(),
                Regex::builder().build_from_hir(&unbounded).unwrap(),
            );
            let (mut want, mut got) = (bounded.create_captures(), unbounded.create_captures());
            let (mut below_seen, mut past_seen) = (0, 0);
            for n in 0..=10u32 {
                for i in 0..3usize.pow(n) {
                    let hay: Vec<u8> = (0..n).map(|k| letters[i / 3usize.pow(k) % 3]).collect();
                    let starts =
                        (0..=hay.len()).flat_map(|at| [(at, Anchored::Yes), (at, Anchored::No)]);
                    for (at, anchored) in starts {
                        let input = Input::new(&hay).range(at..).anchored(anchored);
                        bounded.search_captures(&input, &mut want);
                        unbounded.search_captures(&input, &mut got);
                        match got.get_match() {
                            Some(m) if m.len() >= below => past_seen += 1,
                            _ => {
                                assert_eq!(groups(&got), groups(&want), "{p} at {at} of {hay:?}");
                                below_seen += usize::from(got.is_match());
                            }
                        }
                    }
                }
            }
            assert!(
                below_seen > 100 && past_seen > 10,
                "{p}: {below_seen} {past_seen}"
            );
        }
        assert!(super::without_long_bounds(&super::parse("a{2,4}b*").unwrap(), 4).is_none());
    }
}
