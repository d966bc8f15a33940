//! Editing a JSON settings file as text: a parse that keeps every value's byte span, and edits
//! that splice new members in or take old ones out without touching any other byte. A user's
//! settings file keeps its indentation, key order, number spelling and comments-free layout;
//! re-serialising it through `serde_json` would reformat all of it.

/// A value and where it is in the text.
#[derive(Debug, Clone)]
pub struct Node {
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

#[derive(Debug, Clone)]
pub enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    /// A string, number, `true`, `false` or `null`.
    Scalar,
}

/// One `"key": value` of an object; `start` is where its key's quote is.
#[derive(Debug, Clone)]
pub struct Member {
    pub key: String,
    pub start: usize,
    pub value: Node,
}

impl Node {
    pub fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn items(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The member named `key`; of duplicates, the last, which is the one the agents read
    /// (`JSON.parse` and serde both keep the last): hooks written into an earlier duplicate
    /// would never run while `agents status` said installed.
    pub fn get(&self, key: &str) -> Option<&Member> {
        self.members()?.iter().rev().find(|m| m.key == key)
    }

    /// The children's spans: members from key to value end, items whole.
    fn child_spans(&self) -> Vec<(usize, usize)> {
        match &self.kind {
            Kind::Object(m) => m.iter().map(|m| (m.start, m.value.end)).collect(),
            Kind::Array(a) => a.iter().map(|n| (n.start, n.end)).collect(),
            Kind::Scalar => Vec::new(),
        }
    }
}

/// Parse `text`, which `serde_json` has already accepted, into spans. `None` if it is not
/// JSON after all (the caller checks with `serde_json` first, for its error message).
pub fn parse(text: &str) -> Option<Node> {
    let b = text.as_bytes();
    let mut at = skip_ws(b, 0);
    let node = value(text, &mut at, 0)?;
    (skip_ws(b, at) == b.len()).then_some(node)
}

/// Nesting deeper than this is refused (a settings file is a few levels deep; a hostile one
/// must not overflow the stack).
const MAX_DEPTH: usize = 128;

fn value(text: &str, at: &mut usize, depth: usize) -> Option<Node> {
    let b = text.as_bytes();
    if depth > MAX_DEPTH {
        return None;
    }
    let start = *at;
    match *b.get(start)? {
        b'{' => {
            *at += 1;
            let mut members = Vec::new();
            *at = skip_ws(b, *at);
            if b.get(*at) == Some(&b'}') {
                *at += 1;
            } else {
                loop {
                    *at = skip_ws(b, *at);
                    let kstart = *at;
                    string(b, at)?;
                    let key: String = serde_json::from_str(&text[kstart..*at]).ok()?;
                    *at = skip_ws(b, *at);
                    (b.get(*at) == Some(&b':')).then_some(())?;
                    *at = skip_ws(b, *at + 1);
                    let v = value(text, at, depth + 1)?;
                    members.push(Member {
                        key,
                        start: kstart,
                        value: v,
                    });
                    *at = skip_ws(b, *at);
                    match b.get(*at)? {
                        b',' => *at += 1,
                        b'}' => {
                            *at += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
            }
            Some(Node {
                start,
                end: *at,
                kind: Kind::Object(members),
            })
        }
        b'[' => {
            *at += 1;
            let mut items = Vec::new();
            *at = skip_ws(b, *at);
            if b.get(*at) == Some(&b']') {
                *at += 1;
            } else {
                loop {
                    *at = skip_ws(b, *at);
                    items.push(value(text, at, depth + 1)?);
                    *at = skip_ws(b, *at);
                    match b.get(*at)? {
                        b',' => *at += 1,
                        b']' => {
                            *at += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
            }
            Some(Node {
                start,
                end: *at,
                kind: Kind::Array(items),
            })
        }
        b'"' => {
            string(b, at)?;
            Some(Node {
                start,
                end: *at,
                kind: Kind::Scalar,
            })
        }
        _ => {
            while *at < b.len()
                && !matches!(b[*at], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                *at += 1;
            }
            (*at > start).then_some(Node {
                start,
                end: *at,
                kind: Kind::Scalar,
            })
        }
    }
}

fn string(b: &[u8], at: &mut usize) -> Option<()> {
    (b.get(*at) == Some(&b'"')).then_some(())?;
    *at += 1;
    loop {
        match *b.get(*at)? {
            b'\\' => *at += 2,
            b'"' => {
                *at += 1;
                return Some(());
            }
            _ => *at += 1,
        }
    }
}

fn skip_ws(b: &[u8], mut at: usize) -> usize {
    while at < b.len() && matches!(b[at], b' ' | b'\t' | b'\n' | b'\r') {
        at += 1;
    }
    at
}

/// How the file is laid out, so what is inserted looks like what is there.
#[derive(Debug, Clone)]
pub struct Style {
    /// One level of indentation; empty for a file written on one line.
    pub unit: String,
    pub newline: &'static str,
    /// Between a key and its value (`": "` or `":"`), without the colon's quote.
    pub colon: String,
}

impl Style {
    pub fn of(text: &str) -> Style {
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let multiline = text.trim_end().contains('\n');
        // The first indented line is one level deep in a pretty-printed file.
        let unit = if multiline {
            text.lines()
                .map(|l| {
                    let n = l.len() - l.trim_start_matches([' ', '\t']).len();
                    (&l[..n], l.len() > n)
                })
                .find(|(ws, content)| !ws.is_empty() && *content)
                .map_or("  ".to_string(), |(ws, _)| ws.to_string())
        } else {
            String::new()
        };
        let colon = parse(text)
            .and_then(|root| {
                let m = root.members()?.first()?;
                let key_end = m.start + serde_json::to_string(&m.key).ok()?.len();
                // Only trust it when the key was written without escapes we re-spelled.
                let between = text.get(key_end..m.value.start)?;
                (between.trim() == ":").then(|| between.to_string())
            })
            .unwrap_or_else(|| if multiline { ": " } else { ":" }.to_string());
        Style {
            unit,
            newline,
            colon,
        }
    }

    fn multiline(&self) -> bool {
        !self.unit.is_empty()
    }

    /// `v` written in this style, its lines after the first indented by `indent`.
    pub fn render(&self, v: &serde_json::Value, indent: &str) -> String {
        if !self.multiline() {
            return serde_json::to_string(v).unwrap_or_default();
        }
        let mut out = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(self.unit.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
        if serde::Serialize::serialize(v, &mut ser).is_err() {
            return String::new();
        }
        let text = String::from_utf8(out).unwrap_or_default();
        let mut s = String::new();
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                s.push_str(self.newline);
                s.push_str(indent);
            }
            s.push_str(line);
        }
        s
    }

    /// `"key": value`, the value rendered at `indent`.
    pub fn member(&self, key: &str, v: &serde_json::Value, indent: &str) -> String {
        format!(
            "{}{}{}",
            serde_json::to_string(key).unwrap_or_default(),
            self.colon,
            self.render(v, indent)
        )
    }
}

/// The whitespace a line starts with, for the line holding byte `at`.
fn line_indent(text: &str, at: usize) -> &str {
    let line_start = text[..at].rfind('\n').map_or(0, |p| p + 1);
    let line = &text[line_start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// Whether byte `at` is the first non-blank of its line.
fn starts_line(text: &str, at: usize) -> bool {
    let line_start = text[..at].rfind('\n').map_or(0, |p| p + 1);
    text[line_start..at].trim().is_empty()
}

/// `text` with a child added at the end of `node` (an object or array): `child` renders it
/// given the indentation of its first line. It is separated and indented as the children
/// already there are.
pub fn append(text: &str, node: &Node, style: &Style, child: impl Fn(&str) -> String) -> String {
    let spans = node.child_spans();
    let open = node.start + 1;
    let close = node.end - 1;
    let mut out = String::with_capacity(text.len() + 256);
    match spans.last() {
        None => {
            if style.multiline() {
                let outer = line_indent(text, node.start).to_string();
                let inner = format!("{outer}{}", style.unit);
                out.push_str(&text[..open]);
                out.push_str(style.newline);
                out.push_str(&inner);
                out.push_str(&child(&inner));
                out.push_str(style.newline);
                out.push_str(&outer);
                out.push_str(&text[close..]);
            } else {
                out.push_str(&text[..open]);
                out.push_str(&child(""));
                out.push_str(&text[close..]);
            }
        }
        Some(&(last_start, last_end)) => {
            // Separate the new child as the existing ones are separated.
            let (sep, indent) = if starts_line(text, last_start) && style.multiline() {
                let ind = line_indent(text, last_start).to_string();
                (format!("{}{ind}", style.newline), ind)
            } else if spans.len() >= 2 {
                let between = &text[spans[spans.len() - 2].1..last_start];
                let after_comma = between.split_once(',').map_or("", |(_, a)| a);
                (after_comma.to_string(), String::new())
            } else {
                (text[open..last_start].to_string(), String::new())
            };
            out.push_str(&text[..last_end]);
            out.push(',');
            out.push_str(&sep);
            out.push_str(&child(&indent));
            out.push_str(&text[last_end..]);
        }
    }
    out
}

/// The text of `node` (an object or array) keeping only the children for which `keep` gives
/// `Some(text)` (their text, possibly rewritten). Separators and the whitespace before the
/// first and after the last child are the ones already there, so removing what [`append`]
/// added gives back the text it was given.
pub fn retain(text: &str, node: &Node, keep: &[Option<String>]) -> String {
    let spans = node.child_spans();
    let kept: Vec<(usize, &String)> = keep
        .iter()
        .enumerate()
        .filter_map(|(i, k)| k.as_ref().map(|t| (i, t)))
        .collect();
    if kept.is_empty() {
        // Empty: `[]` or `{}`.
        return format!(
            "{}{}",
            &text[node.start..node.start + 1],
            &text[node.end - 1..node.end]
        );
    }
    let mut out = String::new();
    out.push_str(&text[node.start..spans[0].0]);
    for (j, &(i, t)) in kept.iter().enumerate() {
        if j > 0 {
            out.push_str(&text[spans[i - 1].1..spans[i].0]);
        }
        out.push_str(t);
    }
    out.push_str(&text[spans[spans.len() - 1].1..node.end]);
    out
}

/// `text` with `node`'s span replaced by `with`.
pub fn replace(text: &str, node: &Node, with: &str) -> String {
    format!("{}{with}{}", &text[..node.start], &text[node.end..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const DOC: &str =
        "{\n  \"a\": 1.50,\n  \"hooks\": {\n    \"E\": [\n      {\"x\": 1}\n    ]\n  }\n}\n";

    #[test]
    fn spans_are_exact() {
        let root = parse(DOC).unwrap();
        let hooks = &root.get("hooks").unwrap().value;
        assert!(DOC[hooks.start..hooks.end].starts_with('{'));
        let e = &hooks.get("E").unwrap().value;
        assert_eq!(
            &DOC[e.items().unwrap()[0].start..e.items().unwrap()[0].end],
            "{\"x\": 1}"
        );
        assert!(parse("{\"a\": }").is_none());
        assert!(parse("[1, 2").is_none());
    }

    #[test]
    fn of_duplicate_keys_the_last_is_the_one_read() {
        let doc = r#"{"hooks": {"A": 1}, "x": 2, "hooks": {"B": 3}}"#;
        let root = parse(doc).unwrap();
        let hooks = &root.get("hooks").unwrap().value;
        assert_eq!(&doc[hooks.start..hooks.end], r#"{"B": 3}"#);
    }

    #[test]
    fn append_then_retain_gives_the_text_back() {
        let style = Style::of(DOC);
        assert_eq!(style.unit, "  ");
        let root = parse(DOC).unwrap();
        let e = &root.get("hooks").unwrap().value.get("E").unwrap().value;
        let added = append(DOC, e, &style, |ind| style.render(&json!({"y": [2]}), ind));
        assert!(
            added.contains("{\"x\": 1},\n      {\n        \"y\": ["),
            "{added}"
        );
        serde_json::from_str::<serde_json::Value>(&added).unwrap();
        let root2 = parse(&added).unwrap();
        let e2 = &root2.get("hooks").unwrap().value.get("E").unwrap().value;
        let kept = retain(&added, e2, &[Some("{\"x\": 1}".into()), None]);
        assert_eq!(replace(&added, e2, &kept), DOC);
    }

    #[test]
    fn an_empty_container_and_a_one_line_file() {
        let doc = "{\"a\":[]}";
        let style = Style::of(doc);
        assert_eq!(style.unit, "");
        let root = parse(doc).unwrap();
        let a = &root.get("a").unwrap().value;
        let added = append(doc, a, &style, |ind| style.render(&json!(1), ind));
        assert_eq!(added, "{\"a\":[1]}");
        let added = append(doc, &root, &style, |ind| style.member("b", &json!(2), ind));
        assert_eq!(added, "{\"a\":[],\"b\":2}");
    }
}
