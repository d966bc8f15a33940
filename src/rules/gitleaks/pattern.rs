//! What a gitleaks rule's regex says, read through `regex-syntax`: its secret group named
//! `secret`, the literal prefixes that become its keywords, and an example it matches (a
//! converted rule must find one, as every leakhound rule finds its examples).

use regex_syntax::hir::{Class, Hir, HirKind};

pub(super) fn parse(pattern: &str) -> Result<Hir, String> {
    regex_syntax::ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .nest_limit(64)
        .build()
        .parse(pattern)
        .map_err(|e| crate::rules::regex_error(&e.to_string()))
}

/// `regex` with its secret group named `secret`: group `n` (gitleaks' `secretGroup`), else the
/// first group, else the whole match (gitleaks takes the first non-empty group, which is the
/// first group unless groups are alternatives).
pub(super) fn secret_pattern(regex: &str, n: usize) -> Result<String, String> {
    let groups = capture_groups(regex);
    if n > groups.len() {
        return Err(format!(
            "secretGroup {n}, but the regex has {} capture group(s)",
            groups.len()
        ));
    }
    let n = if n == 0 { 1 } else { n };
    let Some(&(open, name_end)) = groups.get(n - 1) else {
        return Ok(format!("(?P<secret>{regex})"));
    };
    // Insert or replace the group's name.
    let mut out = String::with_capacity(regex.len() + 12);
    out.push_str(&regex[..=open]);
    out.push_str("?P<secret>");
    out.push_str(&regex[name_end..]);
    Ok(out)
}

/// Each capture group of `regex`, in order: the offset of its `(` and the offset where its
/// body starts (after `?P<name>` / `?<name>` for a named group).
fn capture_groups(regex: &str) -> Vec<(usize, usize)> {
    let b = regex.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut in_class = false;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                i += 2;
                continue;
            }
            b'[' if !in_class => {
                in_class = true;
                // `[]…]` and `[^]…]`: a `]` first is a literal.
                i += 1;
                if b.get(i) == Some(&b'^') {
                    i += 1;
                }
                if b.get(i) == Some(&b']') {
                    i += 1;
                }
                continue;
            }
            b'[' if in_class && b.get(i + 1) == Some(&b':') => {
                // `[:alpha:]` inside a class.
                if let Some(end) = regex[i..].find(":]") {
                    i += end + 2;
                    continue;
                }
            }
            b']' if in_class => in_class = false,
            b'(' if !in_class => {
                if b.get(i + 1) != Some(&b'?') {
                    out.push((i, i + 1));
                } else {
                    let rest = &regex[i + 2..];
                    let name_start = if rest.starts_with("P<") {
                        Some(i + 4)
                    } else if rest.starts_with('<')
                        && !rest.starts_with("<=")
                        && !rest.starts_with("<!")
                    {
                        Some(i + 3)
                    } else {
                        None
                    };
                    if let Some(s) = name_start {
                        if let Some(close) = regex[s..].find('>') {
                            out.push((i, s + close + 1));
                        }
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Keywords for a regex that names none: the literals every match starts with, when each is
/// 3 bytes or more (`ghp_`, `xoxb-`, `acme_token` under `(?i)`).
pub(super) fn literal_keywords(hir: &Hir) -> Option<Vec<String>> {
    let (lits, _) = prefixes(hir)?;
    let mut out: Vec<String> = lits
        .iter()
        .map(|l| String::from_utf8_lossy(l).to_ascii_lowercase())
        .collect();
    out.sort();
    out.dedup();
    (!out.is_empty() && out.iter().all(|k| k.len() >= 3)).then_some(out)
}

/// The literals every match of `h` starts with, lowercased, and whether they are the whole of
/// what `h` matches (so a literal after it extends them). `None` past 64 alternatives.
fn prefixes(h: &Hir) -> Option<(Vec<Vec<u8>>, bool)> {
    Some(match h.kind() {
        HirKind::Empty | HirKind::Look(_) => (vec![Vec::new()], true),
        HirKind::Literal(l) => (vec![l.0.to_ascii_lowercase().to_vec()], true),
        // `[aA]`, as `(?i)` writes a letter: one letter of a keyword.
        HirKind::Class(Class::Bytes(c)) => {
            let members: Vec<u8> = c.iter().flat_map(|r| r.start()..=r.end()).collect();
            match members.as_slice() {
                [a, b] if a.eq_ignore_ascii_case(b) => (vec![vec![a.to_ascii_lowercase()]], true),
                [a] => (vec![vec![a.to_ascii_lowercase()]], true),
                _ => (vec![Vec::new()], false),
            }
        }
        HirKind::Class(Class::Unicode(_)) => (vec![Vec::new()], false),
        HirKind::Capture(c) => prefixes(&c.sub)?,
        HirKind::Repetition(r) if r.min == 0 => (vec![Vec::new()], false),
        HirKind::Repetition(r) => (prefixes(&r.sub)?.0, false),
        HirKind::Concat(parts) => {
            let mut acc = vec![Vec::new()];
            let mut whole = true;
            for p in parts {
                let (next, complete) = prefixes(p)?;
                acc = acc
                    .iter()
                    .flat_map(|a| next.iter().map(move |n| [a.as_slice(), n].concat()))
                    .collect();
                if acc.len() > 64 {
                    return None;
                }
                if !complete {
                    whole = false;
                    break;
                }
            }
            (acc, whole)
        }
        HirKind::Alternation(alts) => {
            let mut all = Vec::new();
            let mut whole = true;
            for a in alts {
                let (l, c) = prefixes(a)?;
                all.extend(l);
                whole &= c;
            }
            if all.len() > 64 {
                return None;
            }
            (all, whole)
        }
    })
}

/// A string `hir` matches, for the rule check: literals as written, classes by a pseudo-random
/// printable member, the least repetition outside the secret and about 24 inside it (so an
/// entropy threshold passes), the first alternative.
pub(super) fn example(hir: &Hir) -> Option<String> {
    let mut out = Vec::new();
    let mut seed = 0x9e37_79b9_u32;
    generate(hir, false, &mut seed, &mut out)?;
    String::from_utf8(out).ok()
}

fn generate(hir: &Hir, secret: bool, seed: &mut u32, out: &mut Vec<u8>) -> Option<()> {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => {}
        HirKind::Literal(l) => out.extend_from_slice(&l.0),
        HirKind::Class(c) => {
            let members: Vec<u8> = match c {
                Class::Bytes(b) => b
                    .iter()
                    .flat_map(|r| r.start()..=r.end())
                    .filter(|b| b.is_ascii_graphic() || *b == b' ')
                    .collect(),
                Class::Unicode(u) => u
                    .iter()
                    .flat_map(|r| r.start()..=r.end())
                    .filter(char::is_ascii)
                    .map(|c| c as u8)
                    .filter(|b| b.is_ascii_graphic() || *b == b' ')
                    .collect(),
            };
            // Letters and digits first: symbols in an example are quotes and brackets that
            // could end the match early.
            let alnum: Vec<u8> = members
                .iter()
                .copied()
                .filter(u8::is_ascii_alphanumeric)
                .collect();
            let pool = if alnum.is_empty() { &members } else { &alnum };
            if pool.is_empty() {
                return None;
            }
            *seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            out.push(pool[(*seed >> 16) as usize % pool.len()]);
        }
        HirKind::Repetition(r) => {
            let min = r.min as usize;
            let n = if secret {
                let want = min.max(24);
                r.max.map_or(want, |m| want.min(m as usize))
            } else {
                min
            };
            for _ in 0..n.min(4096) {
                generate(&r.sub, secret, seed, out)?;
            }
        }
        HirKind::Capture(c) => {
            let inner = secret || c.name.as_deref() == Some("secret");
            generate(&c.sub, inner, seed, out)?;
        }
        HirKind::Concat(parts) => {
            for p in parts {
                generate(p, secret, seed, out)?;
            }
        }
        HirKind::Alternation(alts) => generate(alts.first()?, secret, seed, out)?,
    }
    Some(())
}
