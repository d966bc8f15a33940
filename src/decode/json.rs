//! JSON string escapes (`\n`, `\"`, `\/`, `\u002B`, surrogate pairs), and a walker that finds
//! every string value of a JSON document with its path and raw span — without building the
//! document, so spans stay exact.

use super::{Map, View};

/// Decode the body of a JSON string (between the quotes) at `offset` in the original.
/// Invalid escapes are kept as written.
pub fn unescape(raw: &[u8], offset: usize) -> View {
    let mut v = View {
        bytes: Vec::with_capacity(raw.len()),
        map: Map::default(),
    };
    let mut i = 0;
    while i < raw.len() {
        // The text up to the next backslash, copied whole; one that ends `raw` is text too.
        let bs = memchr::memchr(b'\\', &raw[i..]).map_or(raw.len(), |p| i + p);
        let text = if bs + 1 >= raw.len() { raw.len() } else { bs };
        v.push_copied(&raw[i..text], offset + i);
        i = text;
        if i == raw.len() {
            break;
        }
        let at = offset + i;
        // What the escape decodes to, and how many bytes of `raw` it takes.
        let one = |b: u8| ([b, 0, 0, 0, 0, 0], 1);
        let ((decoded, n), used) = match raw[i + 1] {
            b'n' => (one(b'\n'), 2),
            b't' => (one(b'\t'), 2),
            b'r' => (one(b'\r'), 2),
            b'b' => (one(8), 2),
            b'f' => (one(12), 2),
            b'"' | b'\\' | b'/' => (one(raw[i + 1]), 2),
            b'u' => match hex4(&raw[i + 2..]) {
                Some(hi @ 0xD800..=0xDBFF) => {
                    match (raw.get(i + 6..i + 8), hex4(raw.get(i + 8..).unwrap_or(&[]))) {
                        (Some(b"\\u"), Some(lo @ 0xDC00..=0xDFFF)) => {
                            let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                            (utf8(c), 12)
                        }
                        // A lone high surrogate is kept as written.
                        _ => {
                            let mut kept = [0; 6];
                            kept.copy_from_slice(&raw[i..i + 6]);
                            ((kept, 6), 6)
                        }
                    }
                }
                Some(c) => (utf8(c), 6),
                None => (one(b'\\'), 1),
            },
            _ => (one(b'\\'), 1),
        };
        v.bytes.extend_from_slice(&decoded[..n]);
        for _ in 0..n {
            v.map.push(at);
        }
        i += used;
    }
    v.map.push(offset + raw.len());
    v
}

/// `doc` (valid JSON, its strings `strings` in order) with its strings decoded in place, as
/// [`unescape`] decodes it, but with consecutive items of one array of strings run together:
/// the bytes between them (`", "`) left out. A notebook's multi-line field is such an array,
/// which every reader shows joined, so a secret cut between two of its items is one text here.
/// So is the text of two stream outputs in a row on one stream (a program that flushed
/// mid-line): Jupyter shows them as one text. Returns the view and the strings it leaves
/// out, which lie between such outputs' texts: their keys and the `name` and `output_type`
/// values, `stdout` or `stderr` and `stream`.
pub fn unescape_joining_items(doc: &[u8], strings: &[StringAt]) -> (View, Vec<usize>) {
    let mut joined: Option<View> = None;
    let mut add = |part: View| match &mut joined {
        Some(v) => v.extend(&part),
        None => joined = Some(part),
    };
    let mut skipped = Vec::new();
    let mut from = 0;
    // The last string of a stream output's text so far, and that output's stream name.
    let mut text_end: Option<(usize, &[u8])> = None;
    let mut name: Option<&[u8]> = None;
    for (j, b) in strings.iter().enumerate() {
        let joins = match j.checked_sub(1) {
            Some(i) if next_items(&strings[i].path, &b.path) => Some(i),
            _ => text_end.and_then(|(i, before)| {
                (stream_text(doc, strings, i + 1, j)? == before).then_some(i)
            }),
        };
        if let Some(i) = joins {
            add(unescape(&doc[from..strings[i].end], from));
            skipped.extend(i + 1..j);
            from = b.start;
        }
        if let Some(output) = output_text(&b.path).filter(|_| !is_key(doc, b)) {
            // Read at an output's first text string only: a long output has many.
            if !matches!(b.path.last(), Some(Step::Index(k)) if *k > 0) {
                name = stream_name(doc, strings, j, output);
            }
            text_end = name.map(|n| (j, n));
        }
    }
    add(unescape(&doc[from..], from));
    (joined.unwrap_or_default(), skipped)
}

/// Where an output's text string is: `[.., "outputs", o, "text"]` or one item of it; the
/// path up to the output (`[.., "outputs", o]`).
fn output_text(path: &[Step]) -> Option<&[Step]> {
    let path = match path.split_last()? {
        (Step::Index(_), rest) => rest,
        _ => path,
    };
    match path {
        [outer @ .., Step::Key(o), Step::Index(_), Step::Key(t)]
            if o == "outputs" && t == "text" =>
        {
            Some(&path[..outer.len() + 2])
        }
        _ => None,
    }
}

/// The stream name (`stdout` or `stderr`) of the output at `output`, read from its `name`
/// string among `strings` before `j`, the output's text's first string.
fn stream_name<'d>(
    doc: &'d [u8],
    strings: &[StringAt],
    j: usize,
    output: &[Step],
) -> Option<&'d [u8]> {
    let name = strings[..j]
        .iter()
        .rev()
        .take_while(|s| s.path.starts_with(output))
        .find(|s| {
            s.path.len() == output.len() + 1 && s.path.last() == Some(&Step::Key("name".into()))
        })?;
    let value = &doc[name.start..name.end];
    (value == b"stdout" || value == b"stderr").then_some(value)
}

/// Whether `strings[from..j]` are only the fields of one stream output before its text (its
/// keys, its `name` and `output_type`), and `strings[j]` that output's first text string,
/// the output right after the one whose text string `strings[from - 1]` is: its stream's name.
fn stream_text<'d>(doc: &'d [u8], strings: &[StringAt], from: usize, j: usize) -> Option<&'d [u8]> {
    if is_key(doc, &strings[j]) {
        return None;
    }
    let first = match strings[j].path.last()? {
        Step::Index(0) => true,
        Step::Key(_) => true,
        Step::Index(_) => false,
    };
    let before = output_text(&strings[from - 1].path)?;
    let output = output_text(&strings[j].path)?;
    let (Some((Step::Index(o), up)), Some((Step::Index(p), up2))) =
        (before.split_last(), output.split_last())
    else {
        return None;
    };
    if !first || up != up2 || *p != o + 1 {
        return None;
    }
    let fields = strings[from..j]
        .iter()
        .all(|s| is_stream_field(&strings[j].path, &s.path));
    fields
        .then(|| stream_name(doc, strings, j, output))
        .flatten()
}

/// Whether `field` is a key, or the `name` or `output_type` value, of the output whose text
/// string `text` is.
fn is_stream_field(text: &[Step], field: &[Step]) -> bool {
    let Some(output) = output_text(text) else {
        return false;
    };
    match field.strip_prefix(output) {
        Some([Step::Key(k)]) => matches!(k.as_str(), "name" | "output_type" | "text"),
        _ => false,
    }
}

/// Whether string `s` of `doc` is an object's key: a colon follows its closing quote.
fn is_key(doc: &[u8], s: &StringAt) -> bool {
    doc.get(s.end + 1..)
        .and_then(|rest| rest.iter().find(|b| !b.is_ascii_whitespace()))
        == Some(&b':')
}

/// Whether `b` is the array item right after `a`.
fn next_items(a: &[Step], b: &[Step]) -> bool {
    match (a.split_last(), b.split_last()) {
        (Some((Step::Index(i), pa)), Some((Step::Index(j), pb))) => *j == i + 1 && pa == pb,
        _ => false,
    }
}

fn hex4(b: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(b.get(..4)?).ok()?;
    u32::from_str_radix(s, 16).ok()
}

/// Code point `c` as UTF-8 (U+FFFD if it is none), and its length.
fn utf8(c: u32) -> ([u8; 6], usize) {
    let mut out = [0; 6];
    let n = char::from_u32(c)
        .unwrap_or(char::REPLACEMENT_CHARACTER)
        .encode_utf8(&mut out)
        .len();
    (out, n)
}

/// One step of a path into a JSON document.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// A string value: its path and the raw span of its body (between the quotes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringAt {
    pub path: Vec<Step>,
    pub start: usize,
    pub end: usize,
}

/// Every string value in `doc` (not object keys), or `None` if it is not valid JSON.
/// Nesting is limited, so a hostile document cannot exhaust the stack.
pub fn strings(doc: &[u8]) -> Option<Vec<StringAt>> {
    walk(doc, false)
}

/// Every string in `doc`, object keys too (a key's path ends in its own name), in the order
/// they appear, or `None` if it is not valid JSON. What a masker masks: a secret can be a key.
pub fn strings_and_keys(doc: &[u8]) -> Option<Vec<StringAt>> {
    walk(doc, true)
}

fn walk(doc: &[u8], keys: bool) -> Option<Vec<StringAt>> {
    let mut w = Walker {
        b: doc,
        i: 0,
        path: Vec::new(),
        out: Vec::new(),
        keys,
    };
    w.ws();
    w.value(0)?;
    w.ws();
    (w.i == doc.len()).then_some(w.out)
}

const MAX_DEPTH: usize = 256;

struct Walker<'a> {
    b: &'a [u8],
    i: usize,
    path: Vec<Step>,
    out: Vec<StringAt>,
    /// Whether object keys are listed too.
    keys: bool,
}

impl Walker<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\n' | b'\r' | b'\t') {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.ws();
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    /// A string's body span; `self.i` ends after the closing quote.
    fn string(&mut self) -> Option<(usize, usize)> {
        self.eat(b'"')?;
        let start = self.i;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'"' => {
                    self.i += 1;
                    return Some((start, self.i - 1));
                }
                b'\\' => self.i += 2,
                _ => self.i += 1,
            }
        }
        None
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        match *self.b.get(self.i)? {
            b'"' => {
                let (start, end) = self.string()?;
                self.out.push(StringAt {
                    path: self.path.clone(),
                    start,
                    end,
                });
            }
            b'{' => {
                self.i += 1;
                if self.eat(b'}').is_none() {
                    loop {
                        let (ks, ke) = self.string()?;
                        let key = unescape(&self.b[ks..ke], ks).bytes;
                        self.eat(b':')?;
                        self.path
                            .push(Step::Key(String::from_utf8_lossy(&key).into_owned()));
                        if self.keys {
                            self.out.push(StringAt {
                                path: self.path.clone(),
                                start: ks,
                                end: ke,
                            });
                        }
                        self.value(depth + 1)?;
                        self.path.pop();
                        if self.eat(b',').is_none() {
                            self.eat(b'}')?;
                            break;
                        }
                    }
                }
            }
            b'[' => {
                self.i += 1;
                if self.eat(b']').is_none() {
                    let mut n = 0;
                    loop {
                        self.path.push(Step::Index(n));
                        self.value(depth + 1)?;
                        self.path.pop();
                        n += 1;
                        if self.eat(b',').is_none() {
                            self.eat(b']')?;
                            break;
                        }
                    }
                }
            }
            _ => {
                // Numbers, true, false, null: a run of their characters.
                let start = self.i;
                while self.i < self.b.len()
                    && matches!(self.b[self.i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E' | b'a'..=b'z')
                {
                    self.i += 1;
                }
                if self.i == start {
                    return None;
                }
            }
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescape_maps_back() {
        let raw = br#"a\nb\u002Bc\/d\ud83d\ude00e"#;
        let v = unescape(raw, 10);
        assert_eq!(v.bytes, "a\nb+c/d\u{1F600}e".as_bytes());
        assert_eq!(v.original(2, 3), (13, 14)); // "b"
        assert_eq!(v.original(3, 4), (14, 20)); // "\u002B"
        assert_eq!(v.map.last().unwrap(), 10 + raw.len());
    }

    #[test]
    fn walker_paths_and_spans() {
        let doc = br#"{"a": ["x", {"b": "yz"}], "n": 1.5, "t": true}"#;
        let s = strings(doc).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(&doc[s[1].start..s[1].end], b"yz");
        assert_eq!(
            s[1].path,
            vec![Step::Key("a".into()), Step::Index(1), Step::Key("b".into())]
        );
        assert!(strings(b"{\"a\": ").is_none());
        assert!(strings(&[b'['; 10_000]).is_none());
    }
}
