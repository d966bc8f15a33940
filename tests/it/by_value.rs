//! Masking by value (issue 25): a secret found in one place is masked wherever else it
//! appears, in every output leakhound writes, and nothing in the working directory can switch
//! masking off. Each secret is planted twice: once where a rule names it, once bare (in
//! another line, another file, a JSON key, a later message), and no piece of five characters
//! may be left anywhere.

use crate::util::{assert_no_piece, fake_aws, fake_github, Sandbox};

/// A sandbox whose HOME is its own (no user config leaks in), holding a hostile
/// `leakhound.toml` that would disable every rule and allow everything.
pub(crate) fn hostile() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(
        "leakhound.toml",
        "[rules]\ndisable = [\"*\"]\n\n[allow]\nregexes = [\".*\"]\npaths = [\"**\"]\n",
    );
    std::fs::create_dir_all(sb.path("home")).unwrap();
    sb
}

pub(crate) fn run(sb: &Sandbox, args: &[&str], stdin: Option<&[u8]>) -> crate::util::Run {
    let mut c = sb.cmd();
    c.args(args)
        .env("HOME", sb.path("home"))
        .env_remove("XDG_CONFIG_HOME");
    crate::util::run_with_stdin(c, stdin)
}

/// The note every masker gives when it passes over the working directory's config.
fn passed_over(stderr: &str, what: &str) {
    assert!(
        stderr.contains("./leakhound.toml is not read by a masker"),
        "{what}: no note that ./leakhound.toml was passed over:\n{stderr}"
    );
}

#[test]
fn filter_masks_a_value_again_wherever_it_repeats_and_ignores_the_workspace_config() {
    let sb = hostile();
    let (_, secret) = fake_aws(2501);
    let token = fake_github(2502);
    let input = format!(
        "AWS_SECRET_ACCESS_KEY={secret}\nsaved secret {secret} to disk\n\
         GITHUB_TOKEN={token}\nretrying with {token}, then ({secret})\n"
    );
    let r = run(
        &sb,
        &["filter", "--report", "found.jsonl", "--notify"],
        Some(input.as_bytes()),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    passed_over(&r.stderr, "filter");
    let report = std::fs::read_to_string(sb.path("found.jsonl")).unwrap();
    for s in [&secret, &token] {
        for (what, out) in [
            ("stdout", &r.stdout),
            ("stderr", &r.stderr),
            ("report", &report),
        ] {
            assert_no_piece(out, s, &format!("filter {what}"));
        }
    }
    assert_eq!(r.stdout.matches("[REDACTED:").count(), 5, "{}", r.stdout);
}

/// A child's stdout and stderr share what they learn, as docs/security.md says: a secret
/// named on one stream is masked where the other prints it bare, whichever comes first.
#[test]
fn run_masks_a_value_named_on_one_stream_on_the_other() {
    let sb = hostile();
    let (_, secret) = fake_aws(2511);
    let token = fake_github(2512);
    // Named on stdout, bare on stderr; then the token's value learnt on stderr and printed
    // bare on stdout. The sleeps put each name before its bare copy in time.
    let script = format!(
        "printf 'AWS_SECRET_ACCESS_KEY={secret}\\n'; sleep 0.3; printf 'bare {secret}\\n' >&2; \
         printf 'GITHUB_TOKEN={token}\\n' >&2; sleep 0.3; printf 'bare {token}\\n'"
    );
    let r = run(&sb, &["run", "--", "sh", "-c", &script], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for (what, out) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
        assert_no_piece(out, &secret, &format!("run {what}"));
        assert_no_piece(out, &token, &format!("run {what}"));
    }
    assert_eq!(r.stdout.matches("[REDACTED:").count(), 2, "{}", r.stdout);
    assert!(r.stderr.matches("[REDACTED:").count() >= 2, "{}", r.stderr);
}

/// The same with no pause between the two writes: the child's named line on one stream is
/// whole before its bare copy on the other begins, and no copy goes out in clear however the
/// two pipes are read. Two reader threads raced here (a third of runs let stdout's copy out).
#[test]
fn run_masks_a_value_named_on_one_stream_at_once_on_the_other() {
    let sb = hostile();
    for i in 0..24 {
        let (_, secret) = fake_aws(2540 + i);
        let (named, bare) = if i % 2 == 0 { ("2", "1") } else { ("1", "2") };
        let script = format!(
            "printf 'AWS_SECRET_ACCESS_KEY={secret}\\n' >&{named}; printf '{secret}\\n' >&{bare}"
        );
        let r = run(&sb, &["run", "--", "sh", "-c", &script], None);
        assert_eq!(r.code, 0, "{}", r.stderr);
        for (what, out) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
            assert_no_piece(out, &secret, &format!("run {what}, round {i}"));
        }
    }
}

/// A value at the end of a line one stream has not ended yet (a prompt, `printf "key=%s"`),
/// held there or forwarded masked at an idle flush, is masked where the other stream prints
/// it bare meanwhile.
#[test]
fn run_masks_a_value_held_in_an_unended_line_on_the_other_stream() {
    let sb = hostile();
    let (_, secret) = fake_aws(2570);
    let token = fake_github(2571);
    for named in [
        format!("aws_secret_access_key={secret}"),
        format!("aws_secret_access_key = \"{secret}\""),
        format!("GH={token}"),
    ] {
        let bare = if named.starts_with("GH") {
            &token[4..]
        } else {
            &secret[..]
        };
        let script =
            format!("printf '{named}'; sleep 0.3; printf '{bare}\\n' >&2; sleep 0.2; echo");
        let r = run(&sb, &["run", "--", "sh", "-c", &script], None);
        assert_eq!(r.code, 0, "{}", r.stderr);
        for (what, out) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
            assert_no_piece(out, bare, &format!("run {what} after {named:?}"));
        }
    }
}

#[test]
fn run_masks_a_value_again_in_the_same_stream() {
    let sb = hostile();
    let (_, secret) = fake_aws(2503);
    let script = format!(
        "printf 'aws_secret_access_key = {secret}\\n'; printf 'echo: {secret}\\n'; \
         printf 'no line end: {secret}'"
    );
    let r = run(&sb, &["run", "--", "sh", "-c", &script], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    passed_over(&r.stderr, "run");
    assert_no_piece(&r.stdout, &secret, "run stdout");
    assert_eq!(r.stdout.matches("[REDACTED:").count(), 3, "{}", r.stdout);
}

/// A secret named once is masked where it is repeated encoded as programs write it: in a
/// URL, in a JSON string with `/` escaped, and as base64 of it alone; by `filter`, by a hook
/// and in a scan report's contexts.
#[test]
fn a_value_is_masked_where_it_is_repeated_encoded() {
    use base64::Engine as _;
    let sb = hostile();
    let (_, s) = fake_aws(2513);
    // With the two bytes that encodings change.
    let secret = format!("{}/{}+{}", &s[..10], &s[11..20], &s[21..]);
    let percent = secret.replace('/', "%2F").replace('+', "%2B");
    let escaped = secret.replace('/', "\\/");
    let b64 = base64::engine::general_purpose::STANDARD.encode(&secret);
    let text = format!(
        "AWS_SECRET_ACCESS_KEY={secret}\nurl: https://h/?k={percent}&x=1\n\
         json: {{\"s\":\"{escaped}\"}}\ndata: {b64}\n"
    );
    let leaks = |out: &str, what: &str| {
        assert_no_piece(out, &secret, what);
        assert_no_piece(out, &b64[..b64.len() - 4], what);
    };
    let r = run(&sb, &["filter"], Some(text.as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    leaks(&r.stdout, "filter");
    assert_eq!(r.stdout.matches("[REDACTED:").count(), 4, "{}", r.stdout);

    let event = serde_json::json!({
        "session_id": "s", "transcript_path": "/t", "cwd": "/", "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": "env"},
        "tool_response": {"stdout": text, "stderr": "", "interrupted": false, "isImage": false},
    });
    let r = run(&sb, &["hook", "claude"], Some(event.to_string().as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("updatedToolOutput"), "{}", r.stdout);
    leaks(&r.stdout, "hook");

    // In a report, the context of another finding on the line holds the encoded copies (a
    // scan of a tree reads its config: a sandbox without the hostile one).
    let sb = Sandbox::new();
    let token = fake_github(2514);
    sb.write(
        "a.txt",
        format!(
            "AWS_SECRET_ACCESS_KEY={secret}\n\
             url {percent} json \"{escaped}\" data {b64} token {token}\n"
        ),
    );
    let r = sb.run(&["scan", "a.txt", "--format", "json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.contains(" data "), "no context: {}", r.stdout);
    leaks(&r.stdout, "scan report");
}

/// A password in a YAML pair after other words, as a log line or an echo shows it, is
/// masked, and so is the same value later bare.
#[test]
fn a_password_pair_after_other_words_is_masked() {
    let sb = hostile();
    let (_, s) = fake_aws(2515);
    let password = format!("{}x7", &s[..12]);
    for line in [
        format!("again POSTGRES_PASSWORD: {password}"),
        format!("$ echo POSTGRES_PASSWORD: {password}"),
        format!("INFO postgres_password: {password}"),
    ] {
        let text = format!("{line}\nconnected as {password}\n");
        let r = run(&sb, &["filter"], Some(text.as_bytes()));
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_no_piece(&r.stdout, &password, &line);
        assert_eq!(r.stdout.matches("[REDACTED:").count(), 2, "{}", r.stdout);
    }
}

/// A generated password cut off by a shell's or code's punctuation (`;`, `,`, `)`, `]`, `}`)
/// or followed by the next field of a form body (`&user=`) is masked, and the repeat of it
/// too: code names a variable there, but none is named like a generated value.
#[test]
fn a_generated_password_before_punctuation_or_a_form_field_is_masked() {
    let sb = hostile();
    let (_, s) = fake_aws(2516);
    let password: String = s
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(14)
        .chain("Q7x".chars())
        .collect();
    for line in [
        format!("export DB_PASSWORD={password}; psql"),
        format!("API_KEY={password}; ./deploy"),
        format!("connect(host='h', password={password})"),
        format!("{{password: {password}, user: x}}"),
        format!("DB_PASSWORD={password}]"),
        format!("password={password}&user=x"),
    ] {
        let text = format!("{line}\nconnected as {password}\n");
        let r = run(&sb, &["filter"], Some(text.as_bytes()));
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_no_piece(&r.stdout, &password, &line);
        assert_eq!(r.stdout.matches("[REDACTED:").count(), 2, "{}", r.stdout);
    }
    // A variable there is code, and stays.
    let code = "connect(host, password=userPassword2)\nthis.token = refreshTokenV2;\n";
    let r = run(&sb, &["filter"], Some(code.as_bytes()));
    assert_eq!(r.stdout, code);
}

/// A generated password told in a sentence (`your password: …, keep it`, `Your password is
/// ….`) is masked where it is first printed, and its repeat too. A report leaves prose's values
/// out (too often words), a masker does not leave a random string.
#[test]
fn a_generated_password_told_in_prose_is_masked_at_first_sight() {
    let sb = hostile();
    let (_, s) = fake_aws(2517);
    let password: String = s
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(13)
        .chain("k4Z".chars())
        .collect();
    for line in [
        format!("your password: {password} ok"),
        format!("the password: {password} was set"),
        format!("Your password is {password}."),
        format!("Temporary password is: {password}"),
        format!("The new password was set to '{password}', change it"),
    ] {
        let text = format!("{line}\nlogged in as {password}\n");
        let r = run(&sb, &["filter"], Some(text.as_bytes()));
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_no_piece(&r.stdout, &password, &line);
        assert_eq!(r.stdout.matches("[REDACTED:").count(), 2, "{}", r.stdout);
    }
    // Prose that goes on in words is left as it is.
    let prose = "Your password is incorrect.\nthe password: required field\n";
    let r = run(&sb, &["filter"], Some(prose.as_bytes()));
    assert_eq!(r.stdout, prose);
}

/// `cat .env` through a hook and a notebook: the first line of a JSON string is a config
/// line of its own (`DB_PASSWORD=…` at the string's start, the document's line before it),
/// masked as `filter` masks it.
#[test]
fn the_first_line_of_a_json_string_is_a_config_line() {
    let sb = hostile();
    let (_, s) = fake_aws(2518);
    let password: String = s
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(18)
        .collect();
    let env = format!("DB_PASSWORD={password}\nDB_HOST=db\n");
    let event = serde_json::json!({
        "session_id": "s", "transcript_path": "/t", "cwd": "/", "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": "cat .env"},
        "tool_response": {"stdout": env, "stderr": "", "interrupted": false, "isImage": false}
    });
    let r = run(&sb, &["hook", "claude"], Some(event.to_string().as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("updatedToolOutput"),
        "not masked: {}",
        r.stdout
    );
    assert_no_piece(&r.stdout, &password, "hook answer");
    let notebook = serde_json::json!({
        "cells": [{"cell_type": "code", "execution_count": 1, "metadata": {},
                   "source": ["!cat .env"],
                   "outputs": [{"output_type": "stream", "name": "stdout",
                                "text": [format!("DB_PASSWORD={password}\n"), "DB_HOST=db\n"]}]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5
    });
    sb.write("nb.ipynb", notebook.to_string());
    let r = run(
        &sb,
        &["redact-notebook", "nb.ipynb", "-o", "out.ipynb"],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = std::fs::read_to_string(sb.path("out.ipynb")).unwrap();
    assert_no_piece(&out, &password, "redact-notebook");
    assert!(out.contains("DB_PASSWORD=[REDACTED"), "{out}");
}

/// A password holding what ends a value elsewhere: `&r=` (a query string's pairs to a
/// report, Django's alphabet to a masker) and a bracket (`(`, `)`), unquoted, are masked
/// whole at first sight.
#[test]
fn a_password_with_an_ampersand_pair_or_a_bracket_is_masked_whole() {
    let sb = hostile();
    let (_, s) = fake_aws(2519);
    let a: String = s
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(20)
        .collect();
    let b: String = s
        .chars()
        .rev()
        .filter(char::is_ascii_alphanumeric)
        .take(13)
        .collect();
    for value in [
        format!("{}&r={}", &a[..8], &b[..8]),
        format!("{a}({b}"),
        format!("{a}){b}"),
    ] {
        for line in [
            format!("POSTGRES_PASSWORD={value}"),
            format!("  secret_key: {value}"),
            format!("\"password\": \"{value}\""),
        ] {
            let r = run(&sb, &["filter"], Some(format!("{line}\n").as_bytes()));
            assert_eq!(r.code, 0, "{}", r.stderr);
            for piece in [&a[..8], &b[..8]] {
                assert!(!r.stdout.contains(piece), "{line} -> {}", r.stdout);
            }
        }
    }
    // Code's punctuation after a value still ends it, outside the marker.
    let code = format!("connect(host='h', password={a})\n");
    let r = run(&sb, &["filter"], Some(code.as_bytes()));
    assert_eq!(
        r.stdout,
        "connect(host='h', password=[REDACTED:generic.password])\n"
    );
}

/// A known value spelt a byte at a time (hex, every byte escaped as `\u0061` or `\x61`) is
/// masked where it repeats so; a random password of letters alone under a prose name
/// (`Initial admin password:`) at first sight; and a private key longer than 12,000 bytes
/// (an RSA-16384 key is ~12.7 KB).
#[test]
fn a_known_value_spelt_byte_by_byte_and_long_keys_are_masked() {
    let sb = hostile();
    let token: String = fake_aws(2522).1.replace(['/', '+'], "q");
    let hex: String = token.bytes().map(|b| format!("{b:02x}")).collect();
    let u: String = token.bytes().map(|b| format!("\\u{b:04x}")).collect();
    let x: String = token.bytes().map(|b| format!("\\x{b:02x}")).collect();
    let text = format!("API_TOKEN={token}\nhex: {hex}\nesc: {u}\nx: {x}\n");
    let r = run(&sb, &["filter"], Some(text.as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    for form in [&hex, &u, &x] {
        assert!(!r.stdout.contains(&form[..24]), "{}", r.stdout);
    }
    assert_eq!(r.stdout.matches("[REDACTED:").count(), 4, "{}", r.stdout);

    let letters: String = token
        .chars()
        .filter(char::is_ascii_alphabetic)
        .take(16)
        .collect();
    let line = format!("Initial admin password: {letters}\n");
    let r = run(&sb, &["filter"], Some(line.as_bytes()));
    assert_no_piece(&r.stdout, &letters, &line);

    // 14,000 bytes of body in lines of 64, from the fake secret's bytes: found by the
    // engine every masker uses. (Through `filter` it is masked too, but a stream holds a key
    // line by line, which a debug build takes a minute over.)
    let body: String = token.repeat(350).chars().take(14_000).collect();
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    // A scan reads its workspace's config: a sandbox without the hostile one.
    let sb = Sandbox::new();
    sb.write(
        "key.pem",
        format!(
            "-----BEGIN RSA PRIVATE KEY-----\n{}\n-----END RSA PRIVATE KEY-----\n",
            lines.join("\n")
        ),
    );
    let r = sb.run(&["scan", "key.pem", "--format", "jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.contains("private-key.rsa"), "{}", r.stdout);
}

/// Shapes a shell trace, a CLI or `curl -v` prints a credential in, each masked at first
/// sight (a run of its own): a password as the next argument of its flag, htpasswd's batch
/// mode, an `Authorization` header with no scheme, a session cookie, a key in a query string,
/// a .NET appSettings entry, and an AWS key pair in `aws iam create-access-key --output text`.
#[test]
fn credentials_in_commands_headers_and_cli_output_are_masked_at_first_sight() {
    let sb = hostile();
    let (key_id, aws) = fake_aws(2520);
    let p: String = aws
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(16)
        .collect();
    let t = fake_aws(2521).1.replace(['/', '+'], "x");
    for (line, secret) in [
        (format!("+ docker login -u bob -p {p} registry.acme.io"), &p),
        (
            format!("+ mytool login --user bob --password {p} --host x"),
            &p,
        ),
        (format!("+ redis-cli -h cache -a {p} ping"), &p),
        (format!("+ sshpass -p {p} ssh root@host"), &p),
        (format!("htpasswd -b -c .htpasswd admin {p}"), &p),
        (format!("> Authorization: {t}"), &t),
        (format!("< Set-Cookie: sessionid={t}; Path=/; HttpOnly"), &t),
        (
            format!("GET https://api.acme.io/v1/items?api_key={p}&limit=10"),
            &p,
        ),
        (format!("<add key=\"DbPassword\" value=\"{p}\" />"), &p),
        (
            format!("ACCESSKEY\t{key_id}\t2026-12-07T21:40:11+00:00\t{aws}\tActive\tci"),
            &aws,
        ),
        (format!("||  SecretAccessKey |  {aws}  ||"), &aws),
        (format!("+ redis-cli -h cache -p 6379 -a {p} ping"), &p),
        (format!("+ mytool deploy --token {t} --env prod"), &t),
        (format!("+ mytool --api-key {p} --db-password {t}"), &t),
        (format!("+ mytool --api-key {p} --db-password {t}"), &p),
    ] {
        let r = run(&sb, &["filter"], Some(format!("{line}\n").as_bytes()));
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_no_piece(&r.stdout, secret, &line);
    }
}

/// A base64 block that decodes to an assignment keeps its own name when it is itself a
/// value (`{"data": "<base64 of password=…>"}`): the outer name put before the decoded text
/// hid `password=` from the rules, so the block was found on a bare line only.
#[test]
fn base64_of_an_assignment_is_found_wherever_the_block_stands() {
    use base64::Engine as _;
    let sb = hostile();
    let (_, s) = fake_aws(2517);
    let password: String = s
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .take(18)
        .collect();
    let block = base64::engine::general_purpose::STANDARD.encode(format!("password={password}"));
    for line in [
        block.clone(),
        format!("[\"{block}\"]"),
        format!("{{\"data\": \"{block}\"}}"),
        format!("k: \"{block}\""),
        format!("x={block}"),
    ] {
        let r = run(&sb, &["filter"], Some(format!("{line}\n").as_bytes()));
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            r.stdout.contains("[REDACTED:generic.password]"),
            "{line}: {}",
            r.stdout
        );
        sb.write("data.json", format!("{line}\n"));
        sb.write("plain.toml", "");
        let args = [
            "scan",
            "--config",
            "plain.toml",
            "--format",
            "jsonl",
            "data.json",
        ];
        let r = run(&sb, &args, None);
        assert_eq!(r.code, 1, "{line}: {}", r.stderr);
        assert!(
            r.stdout.contains("generic.password"),
            "{line}: {}",
            r.stdout
        );
    }
}

/// A value repeated with an invisible character inside it (NUL, a zero-width space, a soft
/// hyphen, a BOM, backspace, DEL: nothing a reader or a model is shown apart from the token)
/// is masked as the value is, in a stream and in a hook's JSON (`\u200b` escaped).
#[test]
fn a_value_with_an_invisible_character_inside_is_masked() {
    let sb = hostile();
    let token = fake_github(2517);
    let (a, b) = token.split_at(14);
    for sep in [
        "\0",
        "\u{200b}",
        "\u{ad}",
        "\u{feff}",
        "\u{8}",
        "\u{7f}",
        "\u{200b}\u{200b}",
    ] {
        let text = format!("token {token}\nagain {a}{sep}{b}\n");
        let r = run(&sb, &["filter"], Some(text.as_bytes()));
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(
            r.stdout.matches("[REDACTED:").count(),
            2,
            "{sep:?}: {}",
            r.stdout
        );
        assert!(!r.stdout.contains(b), "{sep:?}: {}", r.stdout);
    }
    let event = serde_json::json!({
        "session_id": "s", "transcript_path": "/t", "cwd": "/", "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": "./show"},
        "tool_response": {"stdout": format!("token {token}\nagain {a}\u{200b}{b}\nand {a}\u{0}{b}"),
                          "stderr": "", "interrupted": false, "isImage": false}
    });
    let r = run(&sb, &["hook", "claude"], Some(event.to_string().as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains(b), "{}", r.stdout);
    assert_eq!(r.stdout.matches("[REDACTED:").count(), 3, "{}", r.stdout);
}

/// The pieces of a provider's token whose body is not random-looking as a whole (a Slack
/// token's digits and dashes, a Hugging Face token of letters only), and of a random
/// password a rule found by its name, printed alone after the value was masked, are masked
/// as a generated value's are. The format's prefix (`xoxb-`, `hf_`) and a name's words are
/// no piece of one.
#[test]
fn a_piece_of_a_token_or_password_found_by_its_format_or_name_is_masked() {
    let sb = hostile();
    let mut r = crate::synth::Rng::new(2532);
    let letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let slack = format!(
        "xoxb-{}-{}-{}",
        r.chars(crate::synth::DIGITS, 12),
        r.chars(crate::synth::DIGITS, 13),
        r.chars(crate::synth::ALNUM, 24)
    );
    let hf = format!("hf_{}", r.chars(letters, 34));
    // Letters only, as random passwords often are: no digit to look generated by.
    let password: String = r
        .chars(&letters[26..], 7)
        .chars()
        .zip(r.chars(&letters[..26], 7).chars())
        .flat_map(|(a, b)| [a, b])
        .collect();
    // With punctuation inside: a piece across it is a piece too.
    let sendgrid = format!(
        "SG.{}.{}",
        r.chars(crate::synth::B64URL, 22),
        r.chars(crate::synth::B64URL, 43)
    );
    let dotted = format!(
        "{}.{}/{}",
        r.chars(crate::synth::ALNUM, 5),
        r.chars(crate::synth::ALNUM, 7),
        r.chars(crate::synth::ALNUM, 4)
    );
    let named = format!(
        "SLACK_BOT_TOKEN={slack}\nHF_TOKEN={hf}\nPOSTGRES_PASSWORD: {password}\n\
         SENDGRID_API_KEY={sendgrid}\npassword={dotted}\n"
    );
    let pieces = [
        &slack[5..],
        &slack[32..],
        &hf[3..],
        &password[..12],
        &sendgrid[16..35],
        &dotted[1..15],
    ];
    let later = format!(
        "body {}\ntail {}\nhf body {}\npiece {}\nacross {}\nand {}\nxoxb-token and hf_token stay\n",
        pieces[0], pieces[1], pieces[2], pieces[3], pieces[4], pieces[5]
    );
    let out = run(&sb, &["filter"], Some(format!("{named}{later}").as_bytes()));
    assert_eq!(out.code, 0, "{}", out.stderr);
    for p in pieces {
        for w in p.as_bytes().windows(10) {
            let w = std::str::from_utf8(w).unwrap();
            assert!(
                !out.stdout.contains(w),
                "a piece of {p:?} went out:\n{}",
                out.stdout
            );
        }
    }
    assert!(
        out.stdout.contains("xoxb-token and hf_token stay"),
        "{}",
        out.stdout
    );
}

/// A report's context masks a known value repeated with an invisible character inside it,
/// written as an escape, as it masks the value bare: a reader sees the token there.
#[test]
fn a_report_context_masks_a_known_value_with_an_escaped_invisible_character() {
    let sb = hostile();
    // A token whose part before the escape holds no digit: a context's random-run mask
    // passes over such a run, so only the known value can mask it.
    let token = (2600..)
        .map(fake_github)
        .find(|t| !t[..20].bytes().any(|b| b.is_ascii_digit()))
        .unwrap();
    let (key_id, secret) = fake_aws(2591);
    sb.write("a.env", format!("GITHUB_TOKEN={token}\n"));
    sb.write(
        "b.txt",
        format!(
            "aws_access_key_id={key_id} aws_secret_access_key={secret} zw={}\\u200b{}\n",
            &token[..20],
            &token[20..]
        ),
    );
    for format in ["json", "sarif", "human"] {
        let r = run(&sb, &["scan", ".", "--format", format], None);
        assert_eq!(r.code, 1, "{format}: {}", r.stderr);
        assert!(r.stdout.contains("b.txt"), "{format}: {}", r.stdout);
        assert_no_piece(&r.stdout, &token, &format!("scan --format {format}"));
    }
}

/// A URL's password found percent-encoded is masked where it is printed decoded: the same
/// secret, as the program that read the URL prints it.
#[test]
fn a_percent_encoded_password_is_masked_where_it_is_printed_decoded() {
    let sb = hostile();
    let mut r = crate::synth::Rng::new(2580);
    let password = format!(
        "{}!{}@{}",
        r.chars(crate::synth::ALNUM, 10),
        r.chars(crate::synth::ALNUM, 8),
        r.chars(crate::synth::ALNUM, 6)
    );
    let encoded = password.replace('!', "%21").replace('@', "%40");
    let text = format!(
        "DATABASE_URL=postgres://app:{encoded}@db.internal:5432/orders\nconnecting with {password}\n"
    );
    let out = run(&sb, &["filter"], Some(text.as_bytes()));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_no_piece(&out.stdout, &password, "filter");
}

/// A token printed for the first time with an invisible character inside it, raw or as the
/// escape a program prints (Python's `json.dumps` writes a zero-width space as `\u200b`), is
/// masked whole: a reader sees the token, so the rules must too. Beyond NUL and the
/// zero-width space, every character Unicode calls default-ignorable counts (a grapheme
/// joiner, a variation selector, a tag).
#[test]
fn a_token_with_an_escaped_or_ignorable_character_inside_is_masked_at_first_sight() {
    let sb = hostile();
    let token = fake_github(2530);
    let (key_id, secret) = fake_aws(2531);
    let (a, b) = token.split_at(12);
    let (c, d) = secret.split_at(12);
    for sep in [
        r"\u200b",
        r"\u00AD",
        r"\ufeff",
        r"\u0000",
        r"\u{200b}",
        r"\xad",
        r"\udb40\udc41",
        "\u{34f}",
        "\u{fe0f}",
        "\u{e0041}",
        r"\b",
        r"\0",
        r"\xe2\x80\x8b",
        r"\x{200b}",
        r"\u001b[0m",
        "%E2%80%8B",
    ] {
        let text = format!(
            "{{\"github_token\": \"{a}{sep}{b}\", \"aws_access_key_id\": \"{key_id}\", \"aws_secret_access_key\": \"{c}{sep}{d}\"}}\n"
        );
        let r = run(&sb, &["filter"], Some(text.as_bytes()));
        assert_eq!(r.code, 0, "{}", r.stderr);
        for clear in [b, d, &key_id] {
            assert!(!r.stdout.contains(clear), "{sep:?}: {}", r.stdout);
        }
        let event = serde_json::json!({
            "session_id": "s", "transcript_path": "/t", "cwd": "/", "hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": "./show"},
            "tool_response": {"stdout": text, "stderr": "", "interrupted": false, "isImage": false}
        });
        let r = run(&sb, &["hook", "claude"], Some(event.to_string().as_bytes()));
        assert_eq!(r.code, 0, "{}", r.stderr);
        for clear in [b, d, &key_id] {
            assert!(!r.stdout.contains(clear), "{sep:?}: {}", r.stdout);
        }
        assert!(r.stdout.contains("[REDACTED:"), "{sep:?}: {}", r.stdout);
    }
}

/// A piece of a known value printed alone (the first half of an AWS secret, a GitHub
/// token's body without `ghp_`, a key id's middle) is masked by the maskers as the value is:
/// no ten-character piece of it goes out. A PEM header or a URL's scheme, which every key or
/// URL shares, is no piece of a secret and stays.
#[test]
fn a_piece_of_a_known_value_printed_alone_is_masked() {
    let sb = hostile();
    let (key_id, secret) = fake_aws(2518);
    let token = fake_github(2519);
    let named = format!(
        "export AWS_ACCESS_KEY_ID={key_id}\nexport AWS_SECRET_ACCESS_KEY={secret}\ntoken {token}\n"
    );
    let pieces = [&secret[..20], &secret[20..], &token[4..], &key_id[5..17]];
    let later = format!(
        "first half {}\nsecond half {}\nbody {}\nmiddle {}\n-----BEGIN RSA PRIVATE KEY----- https://example.com\n",
        pieces[0], pieces[1], pieces[2], pieces[3]
    );
    let check = |out: &str, what: &str| {
        for p in pieces {
            for w in p.as_bytes().windows(10) {
                let w = std::str::from_utf8(w).unwrap();
                assert!(
                    !out.contains(w),
                    "{what}: a piece of {p:?} went out:\n{out}"
                );
            }
        }
        assert!(
            out.contains("-----BEGIN RSA PRIVATE KEY----- https://example.com"),
            "{what}: {out}"
        );
    };
    let r = run(&sb, &["filter"], Some(format!("{named}{later}").as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    check(&r.stdout, "filter");
    sb.write("show.sh", format!("printf '%s' '{named}{later}'\n"));
    let r = run(&sb, &["run", "--", "sh", "show.sh"], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    check(&r.stdout, "run");
    let event = serde_json::json!({
        "session_id": "s", "transcript_path": "/t", "cwd": "/", "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": "./show"},
        "tool_response": {"stdout": format!("{named}{later}"), "stderr": "", "interrupted": false, "isImage": false}
    });
    let r = run(&sb, &["hook", "claude"], Some(event.to_string().as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    check(&r.stdout, "hook");
}

#[test]
fn a_hook_masks_what_the_tool_input_named_in_the_output_and_in_keys() {
    let sb = hostile();
    let (_, secret) = fake_aws(2504);
    let token = fake_github(2505);
    // The command names the secret; the output repeats it bare, and as a JSON key.
    let event = serde_json::json!({
        "session_id": "s", "transcript_path": "/t", "cwd": "/", "hook_event_name": "PostToolUse",
        "tool_name": "Bash", "tool_use_id": "t1",
        "tool_input": {"command": format!("export AWS_SECRET_ACCESS_KEY={secret}; ./deploy")},
        "tool_response": {
            "stdout": format!("deployed with {secret}\n"),
            "stderr": "",
            "interrupted": false,
            "isImage": false,
            "byKey": {(token.clone()): "GITHUB_TOKEN value", (secret.clone()): 1},
        }
    });
    let r = run(
        &sb,
        &["hook", "claude", "--audit-log", "audit.jsonl"],
        Some(event.to_string().as_bytes()),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    passed_over(&r.stderr, "hook");
    let answer: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let out = &answer["hookSpecificOutput"]["updatedToolOutput"];
    assert!(out.is_object(), "not masked: {}", r.stdout);
    let audit = std::fs::read_to_string(sb.path("audit.jsonl")).unwrap_or_default();
    for s in [&secret, &token] {
        assert_no_piece(&r.stdout, s, "hook answer");
        assert_no_piece(&r.stderr, s, "hook stderr");
        assert_no_piece(&audit, s, "hook audit log");
    }
    assert_eq!(out["interrupted"], serde_json::json!(false));
    assert_eq!(out["byKey"].as_object().unwrap().len(), 2, "{out}");
}

#[test]
fn scrub_and_redact_notebook_mask_a_value_across_lines_cells_and_keys() {
    let sb = hostile();
    let (_, secret) = fake_aws(2506);
    let transcript = format!(
        "{{\"type\":\"user\",\"text\":\"aws_secret_access_key = {secret}\"}}\n\
         {{\"type\":\"tool\",\"text\":\"ok\",\"{secret}\":true}}\n\
         {{\"type\":\"tool\",\"text\":\"it printed {secret} again\"}}\n"
    );
    let t = sb.write("session.jsonl", &transcript);
    let r = run(&sb, &["scrub", "--force", t.to_str().unwrap()], None);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    passed_over(&r.stderr, "scrub");
    let after = std::fs::read_to_string(&t).unwrap();
    assert_no_piece(&after, &secret, "scrubbed transcript");
    assert_no_piece(&r.stdout, &secret, "scrub stdout");
    for line in after.lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }

    let nb = serde_json::json!({"cells": [
        {"cell_type": "code", "source": [format!("aws_secret_access_key = '{secret}'\n")],
         "outputs": [], "metadata": {}, "execution_count": 1},
        {"cell_type": "code", "source": ["print(key)\n"], "metadata": {(secret.clone()): 1},
         "outputs": [{"output_type": "stream", "name": "stdout", "text": [format!("{secret}\n")]}],
         "execution_count": 2},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
    let p = sb.write("analysis.ipynb", nb.to_string());
    let r = run(&sb, &["redact-notebook", p.to_str().unwrap()], None);
    assert!(r.code <= 1, "{}", r.stderr);
    passed_over(&r.stderr, "redact-notebook");
    assert_no_piece(&r.stdout, &secret, "redacted notebook");
    serde_json::from_str::<serde_json::Value>(&r.stdout).unwrap();
}

#[test]
fn an_mcp_proxy_masks_a_value_the_client_sent_when_the_server_echoes_it() {
    crate::util::require_tool("python3");
    let sb = hostile();
    let (_, secret) = fake_aws(2507);
    // A server that answers each request with what it was sent, bare and as a key.
    let server = sb.write(
        "echo_server.py",
        "import json, sys\n\
         for line in sys.stdin:\n\
         \x20   m = json.loads(line)\n\
         \x20   v = m['params']['arguments']['note']\n\
         \x20   r = {'jsonrpc': '2.0', 'id': m['id'], 'result': {'content': [{'type': 'text', \
         'text': 'stored: ' + v.split('=')[-1]}], 'meta': {v.split('=')[-1]: True}}}\n\
         \x20   print(json.dumps(r), flush=True)\n",
    );
    let request = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "store", "arguments": {"note": format!("AWS_SECRET_ACCESS_KEY={secret}")}}});
    let r = run(
        &sb,
        &["mcp-proxy", "--", "python3", server.to_str().unwrap()],
        Some(format!("{request}\n").as_bytes()),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    passed_over(&r.stderr, "mcp-proxy");
    assert!(r.stdout.contains("stored: [REDACTED:"), "{}", r.stdout);
    assert_no_piece(&r.stdout, &secret, "mcp-proxy to the client");
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(v["id"], serde_json::json!(1));
}

#[test]
fn a_report_masks_a_secret_from_another_file_in_every_context_and_format() {
    let sb = Sandbox::new();
    let (_, secret) = fake_aws(2508);
    let token = fake_github(2509);
    sb.write("deploy/.env", format!("AWS_SECRET_ACCESS_KEY={secret}\n"));
    // The token is the finding here; its line also holds the AWS secret, bare, where no
    // rule takes it for one, and an unnamed generated value.
    sb.write(
        "notes/setup.md",
        format!("GITHUB_TOKEN={token} (old aws: {secret}; ref 9fQ2xLm7Rt4Kw8Zp3Vb6Nc)\n"),
    );
    for format in ["human", "json", "jsonl", "sarif"] {
        let r = sb.run(&["scan", ".", "--format", format]);
        assert_eq!(r.code, 1, "{format}: {}", r.stderr);
        for s in [&secret, &token, &"9fQ2xLm7Rt4Kw8Zp3Vb6Nc".to_string()] {
            assert_no_piece(&r.stdout, s, &format!("scan --format {format}"));
        }
    }
}

#[test]
fn a_config_that_masks_less_is_named_when_given_explicitly() {
    let sb = hostile();
    let (_, secret) = fake_aws(2510);
    sb.write("weak.toml", "[rules]\ndisable = [\"aws.*\"]\n");
    let input = format!("AWS_SECRET_ACCESS_KEY={secret}\n");
    let r = run(
        &sb,
        &["filter", "--config", "weak.toml"],
        Some(input.as_bytes()),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("weak.toml makes masking weaker")
            && r.stderr.contains("built-in rule(s) disabled (aws."),
        "{}",
        r.stderr
    );
    // The user's own config is read from its place, and named the same way.
    std::fs::create_dir_all(sb.path("home/.config/leakhound")).unwrap();
    std::fs::copy(
        sb.path("weak.toml"),
        sb.path("home/.config/leakhound/leakhound.toml"),
    )
    .unwrap();
    let r = run(&sb, &["filter"], Some(input.as_bytes()));
    assert!(
        r.stderr
            .contains(".config/leakhound/leakhound.toml makes masking weaker"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_complete_last_line_is_not_a_cut_off_tail() {
    let sb = Sandbox::new();
    let token = fake_github(2511);
    let r = sb.run_stdin(
        &["filter"],
        Some(format!("GITHUB_TOKEN={token}\n").as_bytes()),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "GITHUB_TOKEN=[REDACTED:github.pat]\n");
}

#[test]
fn a_token_whose_checksum_fails_is_masked_and_reported_low() {
    let sb = Sandbox::new();
    let good = fake_github(2512);
    // The same shape with its last character changed: the checksum no longer holds.
    let last = good.chars().last().unwrap();
    let bad = format!(
        "{}{}",
        &good[..good.len() - 1],
        if last == 'a' { 'b' } else { 'a' }
    );
    let r = sb.run_stdin(
        &["filter", "--report", "found.jsonl"],
        Some(format!("token {bad} end\n").as_bytes()),
    );
    assert_eq!(
        r.stdout, "token [REDACTED:github.pat] end\n",
        "{}",
        r.stderr
    );
    let report = std::fs::read_to_string(sb.path("found.jsonl")).unwrap();
    assert!(report.contains("\"confidence\":\"low\""), "{report}");
    // A report at the default level does not count it.
    sb.write("t.txt", format!("token {bad} end\n"));
    let r = sb.run(&["scan", "t.txt"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
}

#[test]
fn a_private_key_at_the_end_of_a_stream_loses_nothing_after_it() {
    let sb = Sandbox::new();
    let body: String = (0..8)
        .map(|i| {
            format!(
                "{}\n",
                crate::synth::Rng::new(2513 + i).chars(crate::synth::B64, 64)
            )
        })
        .collect();
    let input = format!(
        "key follows\n-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----\ndone.\n"
    );
    let r = sb.run_stdin(&["filter"], Some(input.as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("key follows\n"), "{}", r.stdout);
    assert!(r.stdout.ends_with("\ndone.\n"), "{}", r.stdout);
    for line in body.lines() {
        assert_no_piece(&r.stdout, line, "a masked private key");
    }
}

/// A provider token glued to the letter before or after it (two writes with no separator
/// between, `tokenghp_…`, `ghp_…xyz`) is masked by the maskers, and left out of reports,
/// where a token inside a longer word is usually not one.
#[test]
fn a_token_glued_to_a_letter_is_masked_by_a_masker_not_reported() {
    let sb = Sandbox::new();
    let (key_id, _) = fake_aws(2511);
    let token = fake_github(2512);
    let input = format!("x{key_id} and token{token}\nid9{key_id}\n");
    let r = sb.run_stdin(&["filter"], Some(input.as_bytes()));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_no_piece(&r.stdout, &key_id, "filter");
    assert_no_piece(&r.stdout, &token, "filter");
    assert_eq!(
        r.stdout,
        "x[REDACTED:aws.access-key-id] and token[REDACTED:github.pat]\nid9[REDACTED:aws.access-key-id]\n"
    );
    sb.write("glued.txt", &input);
    let r = sb.run(&["scan", "glued.txt", "--format", "jsonl"]);
    assert_eq!(r.code, 0, "reported: {}", r.stdout);
    // Glued to the letters after it, each at first sight (a run of its own): masked with
    // them, for they may be the token's own.
    for (line, rule) in [
        (format!("{token}xyz done"), "github.pat"),
        (format!("x{token}Q7 done"), "github.pat"),
        (format!("{key_id}Q7abc done"), "aws.access-key-id"),
    ] {
        let r = sb.run_stdin(&["filter"], Some(format!("{line}\n").as_bytes()));
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_no_piece(&r.stdout, &token, &line);
        assert_no_piece(&r.stdout, &key_id, &line);
        let masked = format!("[REDACTED:{rule}] done\n");
        assert!(r.stdout.ends_with(&masked), "{line}: {}", r.stdout);
        sb.write("glued.txt", &line);
        let r = sb.run(&["scan", "glued.txt", "--format", "jsonl"]);
        assert_eq!(r.code, 0, "reported: {}", r.stdout);
    }
}

/// A `run` child's background job that writes after the parent exited (issue 25, #6): its
/// token, split over two writes with a pause between, is masked whole, and a token cut off
/// when the job ends is masked, never released (as a piece of the value it already printed
/// whole, under that value's rule).
#[test]
fn run_masks_what_a_background_job_writes_after_the_parent_exits() {
    let sb = Sandbox::new();
    let (key_id, _) = fake_aws(2513);
    let (head, tail) = key_id.split_at(10);
    let script = format!(
        "(sleep 0.3; printf 'late {head}'; sleep 0.5; printf '{tail} done\\n'; \
         printf 'cut {}') & echo parent done; exit 0",
        &key_id[..12]
    );
    let r = sb.run(&["run", "--", "sh", "-c", &script]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_no_piece(&r.stdout, &key_id, "run stdout");
    assert_eq!(
        r.stdout,
        "parent done\nlate [REDACTED:aws.access-key-id] done\ncut [REDACTED:aws.access-key-id]",
        "{}",
        r.stderr
    );
}
