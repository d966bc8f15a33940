//! Whether a generic rule's value is a literal (`Rule::literal`), not code.

use super::Match;

/// Whether match `m` is a literal value (see `Rule::literal`): a quoted string with the same
/// quote on both sides, or an unquoted value that is the rest of a `KEY=VALUE` /
/// `key: value` line or of a `--flag=value`, perhaps followed by a comment.
pub(super) fn is_literal(hay: &[u8], m: &Match) -> bool {
    let before = m.start.checked_sub(1).map(|i| hay[i]);
    let after = hay.get(m.end).copied();
    if let Some(q @ (b'"' | b'\'' | b'`')) = before {
        return after == Some(q);
    }
    let line_start = memchr::memrchr(b'\n', &hay[..m.start]).map_or(0, |p| p + 1);
    let head = &hay[line_start..m.start];
    // A value that ends the line (or a comment follows): `token = abc.def(x)` is a call and
    // `key: self.key,` a field, neither ends there.
    let line_end = memchr::memchr(b'\n', &hay[m.end..]).map_or(hay.len(), |p| m.end + p);
    let rest = hay[m.end..line_end].trim_ascii();
    // `;` after a space starts an INI comment; right after the value it ends a statement of
    // code (`this.token = refreshTokenOrObject;`).
    let comment = rest.starts_with(b"#") || (rest.starts_with(b";") && after != Some(b';'));
    if (rest.is_empty() || comment) && (config_key(head) || flag(head)) {
        return true;
    }
    // A `key=value` pair of a log line (`login user=bob password=… host=db`), or a flag
    // (`--token=… https://…`): the key is a word of its own, the value ends at a space.
    // Keyword arguments in code are followed by `,` or `)` and preceded by `(`.
    let spaced = after.is_none_or(|b| b.is_ascii_whitespace());
    if spaced && (logfmt_key(head) || flag(head)) {
        return true;
    }
    embedded_line(head, &hay[m.end..]) || xml_text(hay, m.start, m.end)
}

/// A `KEY=VALUE` line inside a string literal: an env or INI file held in JSON or code
/// (`{"config.ini": "TOKEN=…\nDEBUG=1"}`). The embedded line starts after the opening quote
/// or an escaped line end and ends at the next escaped line end or the closing quote.
fn embedded_line(head: &[u8], rest: &[u8]) -> bool {
    let after_escape = head.windows(2).rposition(|w| w == b"\\n").map(|p| p + 2);
    let after_quote = head
        .iter()
        .rposition(|&b| b == b'"' || b == b'\'')
        .map(|p| p + 1);
    let Some(cut) = after_escape.max(after_quote) else {
        return false;
    };
    let ends = rest.starts_with(b"\\n")
        || rest.starts_with(b"\\r")
        || after_quote.is_some_and(|q| rest.first() == Some(&head[q - 1]));
    ends && config_key(&head[cut..])
}

/// The text of an XML element on one line: `<apiToken>VALUE</apiToken>`.
fn xml_text(hay: &[u8], start: usize, end: usize) -> bool {
    start > 0 && hay[start - 1] == b'>' && hay[end..].starts_with(b"</")
}

/// `head` ends with a `key=` (or `key:`) that is a word of its own: `… password=`.
fn logfmt_key(head: &[u8]) -> bool {
    let last = head
        .rsplit(|b| b.is_ascii_whitespace())
        .next()
        .unwrap_or(head);
    let Some((&sign, key)) = last.split_last() else {
        return false;
    };
    matches!(sign, b'=' | b':')
        && !key.is_empty()
        && key
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(b))
}

/// `head` is what precedes a value on a config line: indentation, a YAML `- `, `export` and
/// the like, a key, an assignment sign.
fn config_key(head: &[u8]) -> bool {
    let mut s = head.trim_ascii_start();
    if let Some(r) = s.strip_prefix(b"- ") {
        s = r.trim_ascii_start();
    }
    for word in ["export ", "declare -x ", "set ", "setx ", "env ", "arg "] {
        if s.len() > word.len() && s[..word.len()].eq_ignore_ascii_case(word.as_bytes()) {
            s = s[word.len()..].trim_ascii_start();
            break;
        }
    }
    let key = s
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || b"_.-[]\"'".contains(b))
        .count();
    key > 0 && matches!(s[key..].trim_ascii(), b"=" | b":" | b":=" | b"=>")
}

/// `head` ends with a command-line flag and its `=`: `curl --token=`, `-p=`.
fn flag(head: &[u8]) -> bool {
    let last = head
        .rsplit(|b| b.is_ascii_whitespace())
        .next()
        .unwrap_or(head);
    last.starts_with(b"-") && last.ends_with(b"=") && last.len() > 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_in_code_and_config() {
        let lit = |line: &str, secret: &str| {
            let start = line.find(secret).unwrap();
            let m = Match {
                start,
                end: start + secret.len(),
                rule: 0,
                match_start: 0,
                match_end: start + secret.len(),
            };
            is_literal(line.as_bytes(), &m)
        };
        assert!(lit("token = \"q8Vz3LmT0pWx9RkJ\"", "q8Vz3LmT0pWx9RkJ"));
        assert!(lit(
            "  password: q8Vz3LmT0pWx9RkJ # prod",
            "q8Vz3LmT0pWx9RkJ"
        ));
        assert!(lit("export API_TOKEN=q8Vz3LmT0pWx9RkJ", "q8Vz3LmT0pWx9RkJ"));
        assert!(lit("- DB_PASSWORD=q8Vz3LmT0pWx9RkJ", "q8Vz3LmT0pWx9RkJ"));
        assert!(lit(
            "curl --token=q8Vz3LmT0pWx9RkJ https://x",
            "q8Vz3LmT0pWx9RkJ"
        ));
        assert!(lit(
            "login user=bob password=q8Vz3LmT0pWx9RkJ host=db",
            "q8Vz3LmT0pWx9RkJ"
        ));
        assert!(!lit(
            "connect(host, password=q8Vz3LmT0pWx9RkJ)",
            "q8Vz3LmT0pWx9RkJ"
        ));
        assert!(!lit("f(password=q8Vz3LmT0pWx9RkJ, x)", "q8Vz3LmT0pWx9RkJ"));
        assert!(lit("curl --token=q8Vz3LmT0pWx9RkJ", "q8Vz3LmT0pWx9RkJ"));
        assert!(!lit("token = \"q8Vz3LmT0pWx9RkJ'", "q8Vz3LmT0pWx9RkJ"));
        assert!(!lit(
            "    or1_token: self.or1_token.clone(),",
            "self.or1_token.clone"
        ));
        assert!(!lit("password = base64.b64encode(x)", "base64.b64encode"));
        assert!(!lit("this.token = q8Vz3LmT0pWx9RkJ;", "q8Vz3LmT0pWx9RkJ"));
        assert!(lit(
            "password = q8Vz3LmT0pWx9RkJ ; prod",
            "q8Vz3LmT0pWx9RkJ"
        ));
        assert!(!lit(
            "def f(password, tokenizer_name_x)",
            "tokenizer_name_x"
        ));
        // A .env line in a JSON string, and an XML element's text.
        assert!(lit(
            r#"{"config.ini": "API_TOKEN=q8Vz3LmT0pWx9RkJ\nDEBUG=1"}"#,
            "q8Vz3LmT0pWx9RkJ"
        ));
        assert!(lit(
            r#"env = "API_TOKEN=q8Vz3LmT0pWx9RkJ""#,
            "q8Vz3LmT0pWx9RkJ"
        ));
        assert!(!lit(
            r#"f("token=" + q8Vz3LmT0pWx9RkJ)"#,
            "q8Vz3LmT0pWx9RkJ"
        ));
        assert!(lit(
            "<apiToken>q8Vz3LmT0pWx9RkJ</apiToken>",
            "q8Vz3LmT0pWx9RkJ"
        ));
        assert!(!lit(
            "<apiToken>q8Vz3LmT0pWx9RkJ(x)</apiToken>",
            "q8Vz3LmT0pWx9RkJ"
        ));
    }
}
