//! Issue 27's shapes beyond assignments: private keys embedded in source strings, provider
//! tokens whose random body holds a placeholder word, HTTP `Basic`/`Bearer` values wherever
//! they stand, passwords in URLs, and the false alarms the issue lists (Kubernetes Secret data
//! that decodes to a placeholder, demo passwords in database URLs in docs and tests). Every
//! credential is made at test time: keys by `openssl`, tokens by the corpus generator.

use crate::synth;
use crate::util::{assert_no_piece, require_tool, Sandbox};
use base64::Engine as _;
use std::collections::BTreeSet;

/// (path, line, rule, confidence) of each finding of `scan PATH --min-confidence low`.
fn findings(sb: &Sandbox, path: &str) -> BTreeSet<(String, u64, String, String)> {
    let r = sb.run(&["scan", path, "--min-confidence", "low", "--format", "jsonl"]);
    assert!(r.code == 0 || r.code == 1, "{}", r.stderr);
    r.jsonl()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["rule"].as_str().unwrap().to_string(),
                f["confidence"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// An RSA key in the traditional PEM form, made now.
fn rsa_key(sb: &Sandbox) -> Vec<String> {
    require_tool("openssl");
    let out = sb.path("k.pem");
    let ok = std::process::Command::new("openssl")
        .args(["genrsa", "-traditional", "-out"])
        .arg(&out)
        .arg("1024")
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "openssl genrsa failed");
    let pem = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    assert!(
        pem.starts_with("-----BEGIN RSA PRIVATE KEY-----"),
        "traditional PEM"
    );
    pem.lines().map(str::to_string).collect()
}

/// A private key embedded in code as one string per line (joined by `+`, by a `\`
/// continuation, by adjacency), in a triple-quoted string and in a Java text block: found on
/// the line it begins, and `filter` prints no piece of its body.
#[test]
fn private_keys_embedded_in_source_strings_are_found_and_masked() {
    let sb = Sandbox::new();
    let lines = rsa_key(&sb);
    // Each line as `{pad}{q}LINE\n{q}`, joined by `sep`.
    let quoted = |pad: &str, q: &str, sep: &str| {
        lines
            .iter()
            .map(|l| format!("{pad}{q}{l}\\n{q}"))
            .collect::<Vec<_>>()
            .join(sep)
    };
    let indented = |pad: &str| {
        lines
            .iter()
            .map(|l| format!("{pad}{l}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // (file, text, the line the key begins on)
    let forms = [
        (
            "src/Keys.java",
            format!(
                "class Keys {{\n  static final String KEY =\n{};\n}}\n",
                quoted("    ", "\"", " +\n")
            ),
            3,
        ),
        (
            "src/Keys.kt",
            format!("val key =\n{}\n", quoted("    ", "\"", " +\n")),
            2,
        ),
        (
            "src/keys.js",
            format!("const key =\n{};\n", quoted("  ", "'", " +\n")),
            2,
        ),
        (
            "src/keys.go",
            format!("var key =\n{}\n", quoted("\t", "\"", " +\n")),
            2,
        ),
        (
            "src/keys.c",
            format!(
                "static const char *key =\n{};\n",
                quoted("    ", "\"", " \\\n")
            ),
            2,
        ),
        (
            "src/keys.py",
            format!("KEY = (\n{}\n)\n", quoted("    ", "'", "\n")),
            2,
        ),
        (
            "src/keys_doc.py",
            format!("KEY = \"\"\"\n{}\n\"\"\"\n", indented("    ")),
            2,
        ),
        (
            "src/Block.java",
            format!(
                "class Block {{\n  String k = \"\"\"\n{}\n      \"\"\";\n}}\n",
                indented("      ")
            ),
            3,
        ),
    ];
    for (path, text, _) in &forms {
        sb.write(path, text);
    }
    let found = findings(&sb, "src");
    for (path, text, line) in &forms {
        assert!(
            found.contains(&(
                path.to_string(),
                *line,
                "private-key.rsa".into(),
                "medium".into()
            )),
            "{path}: key not found on line {line}: {found:?}\n{text}"
        );
        let r = sb.run_stdin(&["filter"], Some(text.as_bytes()));
        assert_eq!(r.code, 0, "{}", r.stderr);
        // The body lines (not the BEGIN/END markers) must not pass.
        for body in &lines[1..lines.len() - 1] {
            assert_no_piece(&r.stdout, &body[..body.len().min(48)], path);
        }
    }
    assert_eq!(found.len(), forms.len(), "one finding per key: {found:?}");
}

/// A prefixed token whose random body holds a placeholder word by chance is reported, as the
/// corpus generator plants them (`synth::with_placeholder_word`); a body that is the word or
/// filler, or a stand-in's marker, is not.
#[test]
fn a_prefixed_token_holding_a_placeholder_word_is_reported_but_a_placeholder_is_not() {
    let sb = Sandbox::new();
    let mut rng = synth::Rng::new(2727);
    let mut truth = BTreeSet::new();
    let mut worded = 0;
    for i in 0..12 {
        let (text, t) = synth::text_in_words(&mut rng, synth::Lang::Other, 20_000, 9, true);
        let path = format!("tree/f{i}.txt");
        for (line, rule, secret) in t {
            let lower = secret.to_ascii_lowercase();
            if synth::PLACEHOLDER_WORDS.iter().any(|w| lower.contains(w)) {
                worded += 1;
                truth.insert((path.clone(), line as u64, rule.to_string()));
            }
        }
        sb.write(&path, text);
    }
    assert!(worded >= 20, "only {worded} values hold a placeholder word");
    let found: BTreeSet<_> = findings(&sb, "tree")
        .into_iter()
        .map(|(p, l, r, _)| (p, l, r))
        .collect();
    let missed: Vec<_> = truth.difference(&found).collect();
    assert!(
        missed.is_empty(),
        "{} of {worded} missed: {missed:?}",
        missed.len()
    );

    let mut r = synth::Rng::new(7);
    let body = r.chars(synth::ALNUM, 30);
    let placeholders = [
        format!("stripe.api_key = 'sk_live_{}'", "x".repeat(24)),
        format!("token = 'ghp_YOUR_TOKEN_HERE_{}'", "X".repeat(21)),
        format!("k = 'sk_live_{}'", "redacted".repeat(3)),
        "k = 'sk_test_PLACEHOLDERkey12345'".to_string(),
        "k = 'sk_live_example1234567890abcdefghij'".to_string(),
        format!("k = 'glpat-{}'", "sample".repeat(3)),
        // A marker in capitals inside a random body: AWS's documented session tokens.
        format!("k = 'sk_live_{}EXAMPLE{}'", &body[..12], &body[12..]),
    ];
    sb.write("ph/a.py", placeholders.join("\n") + "\n");
    assert_eq!(
        findings(&sb, "ph"),
        BTreeSet::new(),
        "placeholders reported"
    );
    // The same body without a word is a token: the negatives above fail for their words.
    sb.write("ph2/a.py", format!("k = 'sk_live_{body}'\n"));
    assert_eq!(findings(&sb, "ph2").len(), 1);
}

/// `Basic <base64 of user:password>` and `Bearer <token>` where no `Authorization:` name
/// precedes them (a Postman collection's header value, a test's assertion, a YAML list): found,
/// at `low` when the decoded password is weak or the file is a test's, else `medium`.
#[test]
fn basic_and_bearer_values_are_found_wherever_they_stand() {
    let sb = Sandbox::new();
    let mut r = synth::Rng::new(31);
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let strong = b64(&format!(
        "svc:{}!{}",
        r.chars(synth::ALNUM, 14),
        r.chars(synth::DIGITS, 3)
    ));
    let weak = b64(&format!("qa:{}", r.chars("abcdefghijklmnopqrstuvwxyz", 6)));
    let bearer = r.chars(synth::ALNUM, 64);
    sb.write(
        "app/collection.json",
        format!(
            "{{\"header\": [\n  {{\"key\": \"X-Auth\", \"value\": \"Basic {strong}\"}},\n  {{\"key\": \"X-Up\", \"value\": \"Bearer {bearer}\"}},\n  {{\"key\": \"X-Weak\", \"value\": \"Basic {weak}\"}}\n]}}\n"
        ),
    );
    sb.write(
        "app/tests/client_test.go",
        format!("assert.Equal(t, \"Basic {strong}\", r.Header.Get(\"Authorization\"))\n"),
    );
    // Prose and base64 that is no `user:password` are not credentials.
    sb.write(
        "app/README.txt",
        format!(
            "This service uses basic authentication and bearer tokens.\nBasic {}\n",
            b64("not a credential at all")
        ),
    );
    let want: BTreeSet<_> = [
        ("app/collection.json", 2, "http.basic-auth", "medium"),
        ("app/collection.json", 3, "http.bearer-token", "medium"),
        ("app/collection.json", 4, "http.basic-auth", "low"),
        ("app/tests/client_test.go", 1, "http.basic-auth", "low"),
    ]
    .iter()
    .map(|(p, l, r, c)| (p.to_string(), *l, r.to_string(), c.to_string()))
    .collect();
    assert_eq!(findings(&sb, "app"), want);
    let text = std::fs::read_to_string(sb.path("app/collection.json")).unwrap();
    let out = sb.run_stdin(&["filter"], Some(text.as_bytes())).stdout;
    for s in [&strong, &weak, &bearer] {
        assert_no_piece(&out, s, "filter");
    }
}

/// A password a person chose in a URL is found however weak (weak: `low`); a demo database
/// URL in documentation or a test is `low`, not reported at the default level, unless its
/// password is long and generated-looking; a Kubernetes
/// Secret's `data:` values that decode to placeholders are no finding at all.
#[test]
fn url_passwords_demo_urls_and_placeholder_secret_data() {
    let sb = Sandbox::new();
    let mut r = synth::Rng::new(5);
    let lower = "abcdefghijklmnopqrstuvwxyz";
    let weak = r.chars(lower, 5);
    let strong = format!("{}{}", r.chars(synth::ALNUM, 14), r.chars(synth::DIGITS, 2));
    sb.write(
        "svc/app.env",
        format!("DATABASE_URL=mysql+pymysql://app:{weak}@db/app\nPROXY=http://john:{strong}@proxy.internal:3128\n"),
    );
    // A demo's password, short and chosen, in documentation and a test; a long generated one
    // in a test is a machine's and keeps its confidence.
    let demo = format!("Dem0{}!", r.chars(synth::ALNUM, 6));
    let long = r.chars(synth::ALNUM, 28);
    sb.write(
        "svc/docs/setup.md",
        format!("Connect with `postgres://app:{demo}@localhost:5432/app`.\n"),
    );
    sb.write(
        "svc/tests/test_db.py",
        format!("DB = \"postgresql://tester:{demo}@localhost/testdb\"\nCI_DB = \"postgresql://ci:{long}@db.internal/ci\"\n"),
    );
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let real = r.chars(synth::ALNUM, 24);
    sb.write(
        "svc/k8s/secret.yaml",
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\ndata:\n  password: {}\n  api_key: {}\n  token: {}\n  client_secret: {}\n",
            b64("changeme"),
            b64("<your-api-key>"),
            b64("REPLACE_WITH_YOUR_TOKEN"),
            b64(&real),
        ),
    );
    let found: BTreeSet<_> = findings(&sb, "svc")
        .into_iter()
        .map(|(p, l, _, c)| (p, l, c))
        .collect();
    let want: BTreeSet<_> = [
        ("svc/app.env", 1, "low"),
        ("svc/app.env", 2, "medium"),
        ("svc/docs/setup.md", 1, "low"),
        ("svc/tests/test_db.py", 1, "low"),
        ("svc/tests/test_db.py", 2, "medium"),
        ("svc/k8s/secret.yaml", 10, "medium"),
    ]
    .iter()
    .map(|(p, l, c)| (p.to_string(), *l, c.to_string()))
    .collect();
    assert_eq!(found, want);
}
