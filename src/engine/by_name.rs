//! What a `by_name` rule (`Rule::by_name`) still drops. Such a rule takes a literal for the
//! name it is assigned to, whatever its shape; the value must still be one someone wrote down
//! as a credential, not a label, a piece of code, a setting or a stand-in.

/// Whether `secret`, found after `key` (its name and assignment sign, with the opening quote
/// when there is one), is not a credential's value. `password`: the rule's name is a
/// password's, where short, weak and numeric values are what people choose.
pub(super) fn not_a_value(key: &[u8], secret: &[u8], password: bool) -> bool {
    let quoted = matches!(key.last(), Some(b'"' | b'\'' | b'`'));
    // A label's translation (`"lockRoomPassword": "hasło"`, `"LABEL_PASSWORD": "Senha:"`).
    if !secret.is_ascii() || secret.ends_with(b":") {
        return true;
    }
    // Code and comments, unquoted: `Token::ILLEGAL,`, `password = CharField()`,
    // `secret_key_base: @secret_key_base`, `PASSWORD=###set it here###`.
    if !quoted
        && (secret.iter().any(|b| b"(){}[],;".contains(b))
            || memchr::memmem::find(secret, b"::").is_some()
            || matches!(secret[0], b':' | b'@' | b'#' | b'&' | b'*'))
    {
        return true;
    }
    // Templates (`%DB.USER%`, `#{NAME}#`) and format strings (`%v`).
    if (secret.len() > 2 && secret[0] == secret[secret.len() - 1] && b"%#".contains(&secret[0]))
        || [b"%s", b"%v", b"%d"]
            .iter()
            .any(|f| memchr::memmem::find(secret, *f).is_some())
    {
        return true;
    }
    if counting(secret) || names_itself(secret) {
        return true;
    }
    if password {
        // A digest (`{SHA}e982…`, a column of hashes) is not what a person chose, and a
        // capitalised word alone is a form's label in some language (`"Password": "Senha"`).
        // Labels sit in maps (`"noPassword": "…"`, `'Password' => '…'`), not in assignments.
        let map = key
            .iter()
            .rev()
            .find(|b| !b" \t\"'`".contains(b))
            .is_some_and(|b| matches!(b, b':' | b'>'));
        let capitalised = map
            && secret[0].is_ascii_uppercase()
            && secret.len() > 2
            && secret[1..].iter().all(u8::is_ascii_lowercase);
        return (secret.len() >= 16 && secret.iter().all(u8::is_ascii_hexdigit)) || capitalised;
    }
    // Under a token's, a secret's or a key's name: a number is a code or an id (`token:
    // '415572'`); an unquoted constant names another value (`oauth_token: GHTOKEN`); a
    // `service:Action` pair is a permission (`secretsmanager:RotateSecret`); a short run of
    // letters and a count is a stand-in (`abc123`, `bar456`: counting letters or digits).
    let digits = secret.iter().all(u8::is_ascii_digit);
    let constant = !quoted
        && (secret.iter().all(u8::is_ascii_uppercase)
            || (secret.contains(&b'_')
                && secret
                    .iter()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')));
    let action = secret.contains(&b':')
        && secret
            .split(|&b| b == b':')
            .all(|p| !p.is_empty() && p.iter().all(|b| b.is_ascii_alphabetic() || *b == b'-'));
    let letters = secret.iter().take_while(|b| b.is_ascii_lowercase()).count();
    let (head, tail) = secret.split_at(letters);
    let stand_in = secret.len() < 8
        && !head.is_empty()
        && !tail.is_empty()
        && tail.iter().all(u8::is_ascii_digit)
        && (counting(tail) || (head.len() >= 3 && head.windows(2).all(|w| w[1] == w[0] + 1)));
    digits || constant || action || stand_in
}

/// A run of counting digits (`1234`, `123456`, `654321`): a keyboard's default, not a value.
fn counting(s: &[u8]) -> bool {
    s.len() >= 3
        && s.iter().all(u8::is_ascii_digit)
        && (s.windows(2).all(|w| w[1] == w[0] + 1) || s.windows(2).all(|w| w[0] == w[1] + 1))
}

/// A value that says what it stands for (`my_secret`, `pass_2`, `this_is_not_a_secret`,
/// `testpwd1`): the credential's own word, or a test's, inside a short value (a long one may
/// carry a label before its key material: `hexsecret:<hex>`).
fn names_itself(s: &[u8]) -> bool {
    if s.len() > 24 {
        return false;
    }
    const WORDS: &[&[u8]] = &[
        b"secret", b"token", b"pass", b"pwd", b"test", b"dummy", b"fake",
    ];
    let lower = s.to_ascii_lowercase();
    WORDS
        .iter()
        .any(|w| memchr::memmem::find(&lower, w).is_some())
}

#[cfg(test)]
mod tests {
    use super::not_a_value;

    #[test]
    fn values_written_down_are_kept() {
        // Fake values, of the shapes a by-name rule is for.
        for (key, value, password) in [
            ("password = '", "pymvv2w", true),
            ("password: ", "484216", true),
            ("PASSWD_VALUE=\"", "ZRSJKQHB", true),
            ("Key = ", "6d1f932cdfdfd464ac51da3caa29cc20", false),
            (
                "client_secret = \"",
                "f71f79c1-bd0d-48cf-b72c-bc39762a24f4",
                false,
            ),
            ("api_token: '", "owc51393vq", false),
            ("consumer_secret: '", "qdv730", false),
            ("Key = ", "74D25F73292314861B8565034B407232", false),
            (
                "Ctrl.hexsecret = ",
                "hexsecret:8ca636bdfaa5749334c52a19fd1ef777a7",
                false,
            ),
            ("Password = \"", "Pymvvwow", true),
        ] {
            assert!(
                !not_a_value(key.as_bytes(), value.as_bytes(), password),
                "{key}{value}"
            );
        }
    }

    #[test]
    fn labels_code_and_stand_ins_are_dropped() {
        for (key, value, password) in [
            ("\"lockRoomPassword\": \"", "hasło", true),
            ("\"password\": \"", "Adgangskode:", true),
            ("\"LABEL_PASSWORD\": \"", "Senha", true),
            ("Token: ", ":ILLEGAL,", false),
            ("password = ", "CharField()", true),
            ("secret_key_base: ", "@secret_key_base", false),
            ("token: \"", "%DB.USER%", false),
            ("password: ", "123456", true),
            ("password = \"", "pass_2", true),
            ("secret: '", "my_secret", false),
            ("token: '", "415572", false),
            ("oauth_token: ", "GHTOKEN", false),
            ("\"RotateSecret\": \"", "secretsmanager:RotateSecret", false),
            ("clientSecret: \"", "bar123", false),
            ("password = \"", "8ca636bdfaa5749334c52a19fd1ef777", true),
        ] {
            assert!(
                not_a_value(key.as_bytes(), value.as_bytes(), password),
                "{key}{value}"
            );
        }
    }
}
