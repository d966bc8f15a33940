//! Whether a generic rule's value is a literal (`Rule::literal`), not code.

use super::Match;

/// How far back from a value its line is read (see [`is_literal`]).
const HEAD: usize = 1024;

/// Whether match `m` is a literal value (see `Rule::literal`): a quoted string with the same
/// quote on both sides, or an unquoted value that is the rest of a `KEY=VALUE` /
/// `key: value` line or of a `--flag=value`, perhaps followed by a comment.
pub(super) fn is_literal(hay: &[u8], m: &Match) -> bool {
    let before = m.start.checked_sub(1).map(|i| hay[i]);
    let after = hay.get(m.end).copied();
    if let Some(q @ (b'"' | b'\'' | b'`')) = before {
        return after == Some(q);
    }
    // The line before the value, read back at most HEAD bytes: reading it whole at every
    // match made a long line of matches (`password: password: …`, one line of minified
    // code) quadratic, a second for 100 KB of tool output. A config line's key is never
    // that long; a head cut short is no config line.
    let from = m.start.saturating_sub(HEAD);
    let (line_start, whole) = match memchr::memrchr(b'\n', &hay[from..m.start]) {
        Some(p) => (from + p + 1, true),
        None => (from, from == 0),
    };
    let head = &hay[line_start..m.start];
    // A value that ends the line (or a comment follows): `token = abc.def(x)` is a call and
    // `key: self.key,` a field, neither ends there. The first byte after the blanks says
    // which, without reading the line to its end.
    let next = hay[m.end..]
        .iter()
        .find(|&&b| b == b'\n' || !b.is_ascii_whitespace())
        .filter(|&&b| b != b'\n');
    // `;` after a space starts an INI comment; right after the value it ends a statement of
    // code (`this.token = refreshTokenOrObject;`).
    let comment = next == Some(&b'#') || (next == Some(&b';') && after != Some(b';'));
    // The word the value ends (`--token=`, `password=`), unless the head was cut inside it.
    let word = match head.iter().rposition(|b| b.is_ascii_whitespace()) {
        Some(p) => Some(&head[p + 1..]),
        None => whole.then_some(head),
    };
    let is_flag = word.is_some_and(flag);
    if (next.is_none() || comment) && ((whole && config_key(head)) || is_flag) {
        return true;
    }
    // A `key=value` pair of a log line (`login user=bob password=… host=db`), or a flag
    // (`--token=… https://…`): the key is a word of its own, the value ends at a space.
    // Keyword arguments in code are followed by `,` or `)` and preceded by `(`.
    let spaced = after.is_none_or(|b| b.is_ascii_whitespace());
    if spaced && (word.is_some_and(logfmt_key) || is_flag) {
        return true;
    }
    // A YAML pair after other words, as a log line or a terminal shows it (`INFO
    // db_password: …`, `$ echo POSTGRES_PASSWORD: …`): the value ends the line, the key is an
    // identifier, not a word of prose (`your password: …`), and the line is no comment
    // (` * requested_token_type: rfc8693#section-2.1`). In code the pair is a field or a
    // type (`private_key: Ed25519PrivateKey | …`, `tokens: u?.tokens ?? 0,`), which goes on.
    let trimmed = head.trim_ascii_end();
    let commented = |line: &[u8]| {
        let line = line.trim_ascii_start();
        [&b"*"[..], b"/", b"#", b"--", b";", b"<!"]
            .iter()
            .any(|c| line.starts_with(c))
    };
    if (next.is_none() || comment)
        && trimmed.len() < head.len()
        && trimmed.ends_with(b":")
        && !commented(head)
    {
        let key = match trimmed.iter().rposition(|b| b.is_ascii_whitespace()) {
            Some(p) => &trimmed[p + 1..],
            None => trimmed,
        };
        if logfmt_key(key) && identifier(&key[..key.len() - 1]) {
            return true;
        }
    }
    // A generated value cut off by code's or a shell's punctuation (`export DB_PASSWORD=…;
    // psql`, `connect(password=…)`, `{password: …, user: x}`): code names a variable there
    // (`this.token = refreshToken;`), but no variable is named like a generated value.
    let punctuated = matches!(after, Some(b';' | b',' | b')' | b']' | b'}'));
    if punctuated && generated(&hay[m.span()]) {
        // The key: the last word, after a call's or an object's opening or a comma.
        let key = trimmed
            .rsplit(|b| b.is_ascii_whitespace() || b"{([,".contains(b))
            .next()
            .unwrap_or_default();
        if logfmt_key(key) || flag(key) {
            return true;
        }
    }
    embedded_line(head, &hay[m.end..]) || xml_text(hay, m.start, m.end)
}

/// A value that looks generated, not named: twelve bytes or more, with digits, capitals and
/// small letters, the spread and the changes of class of a random string, and not made of
/// words (`Vpzz63FfkCzJr4i0B3`, not `userPassword2`, `DB_PASSWORD_V2` or a type,
/// `CachedX509Token`).
pub(super) fn generated(v: &[u8]) -> bool {
    v.len() >= 12
        && v.iter().any(u8::is_ascii_digit)
        && v.iter().any(u8::is_ascii_uppercase)
        && v.iter().any(u8::is_ascii_lowercase)
        && !v.contains(&b'.')
        && super::shannon_entropy(v) >= 3.5
        && 2 * class_runs(v) >= v.len()
        && !super::words::made_of_words(v)
}

/// A value whose pieces no other text holds: [`generated`], or sixteen letters and digits
/// or more in one case, changing between them often and not made of words (a hex token,
/// an AWS key id). What a masker indexes by its pieces (`Known::add_with_pieces`).
pub fn looks_generated(v: &[u8]) -> bool {
    let one_case = v.len() >= 16
        && v.iter().all(u8::is_ascii_alphanumeric)
        && v.iter().any(u8::is_ascii_digit)
        && (!v.iter().any(u8::is_ascii_uppercase) || !v.iter().any(u8::is_ascii_lowercase))
        && 4 * class_runs(v) >= v.len()
        && !super::words::made_of_words(v);
    one_case || generated(v)
}

/// A run of a value a rule found (a provider's token, a password) whose pieces no other
/// text holds: its class changes at every fourth byte or more often, as a random string's
/// does (`t3Qyfcx3Mw6mpSMAFp5hunTb`, `oAVJRDmcOiAFAqhyro`, `LYbLXUVImZiR`), and it is not
/// made of words (`AuthenticateUser`), a word (`organizations`), nor shaped as an
/// identifier of words the dictionary does not hold (`Or1AuthTokenTtl`).
pub fn varies_like_a_token(v: &[u8]) -> bool {
    4 * class_runs(v) >= v.len() && !super::words::made_of_words(v) && !word_shaped(v)
}

/// Twelve letters and digits or more that change class at least every other byte, as
/// random ones do (`KqTfXbWmRzPaLsDe`), and are not words nor an identifier's parts
/// (`isValidation` changes class three times in twelve).
pub(super) fn random_run(v: &[u8]) -> bool {
    v.len() >= 12
        && v.iter().all(u8::is_ascii_alphanumeric)
        && 2 * class_runs(v) + 2 >= v.len()
        && varies_like_a_token(v)
}

/// A value of random runs between punctuation (a SendGrid key's `SG.….…`, a password's
/// `5bub.mDxClHG/J7L`): it varies as a token does, and no part between its punctuation is a
/// word, as a host's or a path's are (`hooks.slack.com/services/…`, `/v1/organizations/…`).
pub fn punctuated_token(v: &[u8]) -> bool {
    varies_like_a_token(v)
        && !v
            .split(|b| !b.is_ascii_alphanumeric())
            .any(|p| p.len() >= 3 && super::words::is_word(p))
}

/// Whether `v` splits, as an identifier does ([`super::words::each_part`]), into parts of
/// letters of which at most a third are one or two letters long: `Or|1|Auth|Token|Ttl`,
/// where a random string breaks into many short ones (`t|3|Qyfcx|3|Mw|6|mp|SMA|Fp|5|…`).
fn word_shaped(v: &[u8]) -> bool {
    let (mut parts, mut short) = (0, 0);
    // A path's or a host's punctuation parts it as an identifier's `_` does.
    for piece in v.split(|b| !b.is_ascii_alphanumeric()) {
        super::words::each_part(piece, |part| {
            if part.first().is_some_and(u8::is_ascii_alphabetic) {
                parts += 1;
                short += usize::from(part.len() <= 2);
            }
            true
        });
    }
    parts > 0 && 3 * short <= parts
}

/// How many runs of one class (capitals, small letters, digits, the rest) `v` is made of: a
/// random string changes class at most bytes (`V|pzz|63|F|fk|C|z|J|r|4|i|0|B|3`), a name
/// made of words once a word (`C|ached|X|509|T|oken`).
fn class_runs(v: &[u8]) -> usize {
    let class = |b: &u8| match b {
        b'A'..=b'Z' => 0,
        b'a'..=b'z' => 1,
        b'0'..=b'9' => 2,
        _ => 3,
    };
    1 + v
        .windows(2)
        .filter(|w| class(&w[0]) != class(&w[1]))
        .count()
}

/// A `KEY=VALUE` line inside a string literal: an env or INI file held in JSON or code
/// (`{"config.ini": "TOKEN=…\nDEBUG=1"}`). The embedded line starts after the opening quote
/// or an escaped line end and ends at the next escaped line end, the closing quote, or a line
/// end of the string decoded (a hook's and a proxy's view of a JSON document: the first line
/// of `cat .env`'s output sits on the document's line).
fn embedded_line(head: &[u8], rest: &[u8]) -> bool {
    // What follows first: most values end otherwise, and then the head need not be read.
    let line_end = rest.starts_with(b"\\n")
        || rest.starts_with(b"\\r")
        || matches!(rest.first(), Some(b'\n' | b'\r'));
    if !line_end && !matches!(rest.first(), Some(b'"' | b'\'')) {
        return false;
    }
    let after_escape = head.windows(2).rposition(|w| w == b"\\n").map(|p| p + 2);
    let after_quote = head
        .iter()
        .rposition(|&b| b == b'"' || b == b'\'')
        .map(|p| p + 1);
    let Some(cut) = after_escape.max(after_quote) else {
        return false;
    };
    let ends = line_end || after_quote.is_some_and(|q| rest.first() == Some(&head[q - 1]));
    ends && config_key(&head[cut..])
}

/// The text of an XML element on one line: `<apiToken>VALUE</apiToken>`.
fn xml_text(hay: &[u8], start: usize, end: usize) -> bool {
    start > 0 && hay[start - 1] == b'>' && hay[end..].starts_with(b"</")
}

/// The last word before a value is a `key=` (or `key:`): `… password=`.
fn logfmt_key(last: &[u8]) -> bool {
    let Some((&sign, key)) = last.split_last() else {
        return false;
    };
    matches!(sign, b'=' | b':')
        && !key.is_empty()
        && key
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(b))
}

/// A name as code and environments write one, not a word of prose: with `_`, `.` or `-` in
/// it, or in capitals (`db_password`, `POSTGRES_PASSWORD`, `PASSWORD`).
fn identifier(key: &[u8]) -> bool {
    key.iter().any(|b| b"_.-".contains(b))
        || (key.iter().any(u8::is_ascii_uppercase) && !key.iter().any(u8::is_ascii_lowercase))
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

/// The last word before a value is a command-line flag and its `=`: `curl --token=`, `-p=`.
fn flag(last: &[u8]) -> bool {
    last.starts_with(b"-") && last.ends_with(b"=") && last.len() > 2
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `secret`, where it first stands in `line`, is a literal there.
    fn lit(line: &str, secret: &str) -> bool {
        let start = line.find(secret).unwrap();
        is_literal(line.as_bytes(), &Match::at(start, secret.len(), start))
    }

    #[test]
    fn random_runs_of_letters_not_identifiers() {
        for v in ["KqTfXbWmRzPaLsDe", "bWmRzPaLsDeKqTfX7"] {
            assert!(random_run(v.as_bytes()), "{v}");
        }
        for v in [
            "isValidation",
            "getElementById",
            "AuthenticateUser",
            "refreshTokenV2",
        ] {
            assert!(!random_run(v.as_bytes()), "{v}");
        }
    }

    #[test]
    fn literals_in_code_and_config() {
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
        // Code's punctuation after a value: a variable, unless the value looks generated.
        for (line, value) in [
            ("connect(host, password=userPassword)", "userPassword"),
            ("f(password=dbPassword2, x)", "dbPassword2"),
            ("this.token = refreshTokenV2;", "refreshTokenV2"),
            ("f(token: CachedX509Token)", "CachedX509Token"),
            (
                "{password: config.dbPassword1, user: x}",
                "config.dbPassword1",
            ),
            (
                "export DB_PASSWORD=PROD_DB_PASSWORD_2; psql",
                "PROD_DB_PASSWORD_2",
            ),
        ] {
            assert!(!lit(line, value), "{line}");
        }
        for line in [
            "connect(host, password=q8Vz3LmT0pWx9RkJ)",
            "f(password=q8Vz3LmT0pWx9RkJ, x)",
            "export DB_PASSWORD=q8Vz3LmT0pWx9RkJ; psql",
            "API_KEY=q8Vz3LmT0pWx9RkJ; ./deploy",
            "{password: q8Vz3LmT0pWx9RkJ, user: x}",
            "DB_PASSWORD=q8Vz3LmT0pWx9RkJ]",
            "INFO db_password: q8Vz3LmT0pWx9RkJ, retrying",
        ] {
            assert!(lit(line, "q8Vz3LmT0pWx9RkJ"), "{line}");
        }
        // A YAML pair after other words, as a log line or an echo shows it: with a name's
        // shape, not prose's.
        for line in [
            "again POSTGRES_PASSWORD: q8Vz3LmT0pWx9RkJ",
            "$ echo POSTGRES_PASSWORD: q8Vz3LmT0pWx9RkJ",
            "INFO postgres_password: q8Vz3LmT0pWx9RkJ",
        ] {
            assert!(lit(line, "q8Vz3LmT0pWx9RkJ"), "{line}");
        }
        for line in [
            "your password: q8Vz3LmT0pWx9RkJ",
            " * the exchange's requested_token_type: q8Vz3LmT0pWx9RkJ",
            "    private_key: q8Vz3LmT0pWx9RkJ | Other",
        ] {
            assert!(!lit(line, "q8Vz3LmT0pWx9RkJ"), "{line}");
        }
        assert!(lit("curl --token=q8Vz3LmT0pWx9RkJ", "q8Vz3LmT0pWx9RkJ"));
        assert!(!lit("token = \"q8Vz3LmT0pWx9RkJ'", "q8Vz3LmT0pWx9RkJ"));
        assert!(!lit(
            "    or1_token: self.or1_token.clone(),",
            "self.or1_token.clone"
        ));
        assert!(!lit("password = base64.b64encode(x)", "base64.b64encode"));
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

    /// Only the last `HEAD` bytes before a value are read: what they hold decides as the
    /// whole line did, and a head cut short is no config line.
    #[test]
    fn a_long_line_is_read_back_a_bounded_way() {
        let lit = |line: &str| lit(line, "q8Vz3LmT0pWx9RkJ");
        let long = "user=bob ".repeat(HEAD / 4);
        assert!(lit(&format!("{long}password=q8Vz3LmT0pWx9RkJ host=db")));
        assert!(lit(&format!("{long}curl --token=q8Vz3LmT0pWx9RkJ")));
        assert!(!lit(&format!("{long}f(password=q8Vz3LmT0pWx9RkJ x)")));
        assert!(lit(&format!("{long}\nTOKEN=q8Vz3LmT0pWx9RkJ")));
        assert!(lit(&format!(
            "{long}\"config\": \"TOKEN=q8Vz3LmT0pWx9RkJ\\nX=1\""
        )));
        // A key this far from its line's start is not a config line's key...
        let far = format!("{}TOKEN =q8Vz3LmT0pWx9RkJ", " ".repeat(HEAD));
        assert!(!lit(&far));
        // ...and it was one when the head was read whole.
        assert!(lit(&far[HEAD - 8..]));
        // A word cut at the window is not a key: `aaaa…password=` is not `password=`.
        let word = format!("{}password=q8Vz3LmT0pWx9RkJ", "a".repeat(2 * HEAD));
        assert!(!lit(&word));
        assert!(lit(&word[2 * HEAD - 4..]));
    }

    /// The values a masker finds by their pieces: random tokens in any case, hex, an AWS key
    /// id; not names made of words, with a number or not, nor a version.
    #[test]
    fn token_runs_and_identifiers() {
        for v in [
            "t3Qyfcx3Mw6mpSMAFp5hunTb",
            "oAVJRDmcOiAFAqhyroONmxwuMNIRChPTpo",
            "LYbLXUVImZiR",
            "163617709589-5317941038960-t3Qyfcx3Mw6mpSMAFp5hunTb",
            "SG.axxc4ftEH2zitxIH8gXGd0.R0EQ7MUijPEvM2c47IgwyXKcra511AjFj",
            "5bub.mDxClHG/J7L",
        ] {
            assert!(varies_like_a_token(v.as_bytes()), "{v}");
        }
        for v in [
            "Or1AuthTokenTtl",
            "McpCachedTokenLen",
            "AuthenticateUser",
            "organizations",
            "OpsItemFilterKeyAutomationId",
            "federation_rules",
            "/v1/organizations/federation_rules",
        ] {
            assert!(!varies_like_a_token(v.as_bytes()), "{v}");
        }
    }

    #[test]
    fn punctuated_tokens_and_paths() {
        for v in [
            "SG.axxc4ftEH2zitxIH8gXGd0.R0EQ7MUijPEvM2c47IgwyXKcra511AjFj",
            "5bub.mDxClHG/J7L",
        ] {
            assert!(punctuated_token(v.as_bytes()), "{v}");
        }
        for v in [
            "hooks.slack.com/services/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",
            "/v1/organizations/federation_rules",
            "api.slack.com/reference/messaging/blocks",
        ] {
            assert!(!punctuated_token(v.as_bytes()), "{v}");
        }
    }

    #[test]
    fn generated_values_and_names() {
        for v in [
            "wJa1rXUtnFEMI/K7MDENG+bPxRfiCYz9k3Lq8vTd",
            "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",
            "3f9c0e1b2a7d4c8e9f0a1b2c3d4e5f60",
            "AKIAPYVCNWV7X76FQ2LD",
        ] {
            assert!(looks_generated(v.as_bytes()), "{v}");
        }
        for v in [
            "CachedTokenPath",
            "OauthCachedTokenHash",
            "options-636",
            "HTTP2SERVERCONFIG3",
            "userPassword2",
            "v1.2.3-beta.4",
            "abcdefabcdefabcdef",
        ] {
            assert!(!looks_generated(v.as_bytes()), "{v}");
        }
    }
}
