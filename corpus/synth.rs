//! Synthetic, real-looking source text with planted *fake* credentials and a truth list.
//! Shared by the corpus generator (`cargo run --example gen-corpus`), the benches and the tests.
//! Every credential here is random and generated on the spot; none is, or was, live.

#![allow(dead_code)]

use std::fmt::Write as _;

/// A small deterministic PRNG (xorshift64*), so corpora are reproducible from a seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
    /// `n` characters from `charset`, avoiding runs and sequences the placeholder filter
    /// (rightly) rejects.
    pub fn chars(&mut self, charset: &str, n: usize) -> String {
        let cs = charset.as_bytes();
        loop {
            let s: String = (0..n).map(|_| cs[self.below(cs.len())] as char).collect();
            let low = s.to_ascii_lowercase();
            let bad = [
                "xxxx", "example", "0123456", "12345678", "abcdefgh", "env", "dummy", "sample",
                "insert", "replace", "your", "redacted", "password", "test",
            ]
            .iter()
            .any(|w| low.contains(w))
                || s.as_bytes()
                    .windows(5)
                    .any(|w| w.iter().all(|&b| b == w[0]));
            if !bad {
                return s;
            }
        }
    }
}

pub const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
pub const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
pub const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
pub const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
pub const BASE32: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
pub const HEX: &str = "0123456789abcdef";
pub const DIGITS: &str = "0123456789";

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A GitHub/npm-style token: prefix + 30 random base62 + CRC32 of those 30 in base62.
pub fn checksummed(rng: &mut Rng, prefix: &str) -> String {
    let random = rng.chars(ALNUM, 30);
    let mut n = crc32fast::hash(random.as_bytes());
    let mut check = [b'0'; 6];
    for slot in check.iter_mut().rev() {
        *slot = BASE62[(n % 62) as usize];
        n /= 62;
    }
    format!("{prefix}{random}{}", std::str::from_utf8(&check).unwrap())
}

/// One planted credential: the line(s) to insert and what a scanner should report.
pub struct Plant {
    pub text: String,
    /// (rule id, secret) pairs, in order of appearance.
    pub secrets: Vec<(&'static str, String)>,
}

/// The kinds of credential the generator plants.
pub const KINDS: usize = 16;

/// Make credential `kind` (0..KINDS).
pub fn plant(rng: &mut Rng, kind: usize) -> Plant {
    let one = |rule: &'static str, text: String, secret: String| Plant {
        text,
        secrets: vec![(rule, secret)],
    };
    match kind % KINDS {
        0 => {
            let id = format!("AKIA{}", rng.chars(BASE32, 16));
            let secret = rng.chars(B64, 40);
            Plant {
                text: format!("AWS_ACCESS_KEY_ID = \"{id}\"\nAWS_SECRET_ACCESS_KEY = \"{secret}\""),
                secrets: vec![("aws.access-key-id", id), ("aws.secret-access-key", secret)],
            }
        }
        1 => {
            let t = checksummed(rng, "ghp_");
            one("github.pat", format!("    token = \"{t}\""), t)
        }
        2 => {
            let t = format!(
                "xoxb-{}-{}-{}",
                rng.chars(DIGITS, 12),
                rng.chars(DIGITS, 13),
                rng.chars(ALNUM, 24)
            );
            one("slack.bot-token", format!("SLACK_BOT_TOKEN={t}"), t)
        }
        3 => {
            let t = format!("sk_live_{}", rng.chars(ALNUM, 99));
            one("stripe.secret-key", format!("stripe.api_key = '{t}'"), t)
        }
        4 => {
            let t = format!("AIza{}", rng.chars(B64URL, 35));
            one("google.api-key", format!("  \"apiKey\": \"{t}\","), t)
        }
        5 => {
            let t = format!(
                "sk-proj-{}T3BlbkFJ{}",
                rng.chars(B64URL, 74),
                rng.chars(B64URL, 74)
            );
            one(
                "openai.api-key",
                format!("client = OpenAI(api_key=\"{t}\")"),
                t,
            )
        }
        6 => {
            let t = format!("sk-ant-api03-{}AA", rng.chars(B64URL, 93));
            one(
                "anthropic.api-key",
                format!("export ANTHROPIC_API_KEY={t}"),
                t,
            )
        }
        7 => {
            let body: Vec<String> = (0..12).map(|_| rng.chars(B64, 64)).collect();
            let body = format!("\n{}\n", body.join("\n"));
            one(
                "private-key.rsa",
                format!("KEY = \"\"\"-----BEGIN RSA PRIVATE KEY-----{body}-----END RSA PRIVATE KEY-----\"\"\""),
                body,
            )
        }
        8 => {
            let t = format!(
                "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ{}.{}",
                rng.chars(B64URL, 60),
                rng.chars(B64URL, 43)
            );
            one(
                "jwt",
                format!("headers = {{\"Authorization\": \"Bearer {t}\"}}"),
                t,
            )
        }
        9 => {
            let p = rng.chars(ALNUM, 20);
            one(
                "database.postgres-url",
                format!("DATABASE_URL=postgres://app:{p}@db.internal:5432/app"),
                p,
            )
        }
        10 => {
            let p = format!("{}!{}", rng.chars(ALNUM, 10), rng.chars(DIGITS, 4));
            one("generic.password", format!("    db_password = \"{p}\""), p)
        }
        11 => {
            let t = checksummed(rng, "npm_");
            one(
                "npm.access-token",
                format!("//registry.npmjs.org/:_authToken={t}"),
                t,
            )
        }
        12 => {
            let t = format!("SG.{}.{}", rng.chars(B64URL, 22), rng.chars(B64URL, 43));
            one("sendgrid.api-key", format!("SENDGRID_API_KEY = '{t}'"), t)
        }
        13 => {
            let t = format!("glpat-{}", rng.chars(ALNUM, 20));
            one("gitlab.pat", format!("GITLAB_TOKEN: {t}"), t)
        }
        14 => {
            let t = format!("hf_{}", rng.chars(&ALNUM[..52], 34));
            one("huggingface.token", format!("login(token=\"{t}\")"), t)
        }
        _ => {
            let t = format!(
                "hooks.slack.com/services/T{}/B{}/{}",
                rng.chars(UPPER, 10),
                rng.chars(UPPER, 10),
                rng.chars(ALNUM, 24)
            );
            one("slack.webhook-url", format!("WEBHOOK = \"https://{t}\""), t)
        }
    }
}

/// Lines that look like secrets but are not: documentation keys, placeholders, hashes,
/// variable references. A scanner should report none of them.
pub fn decoy(rng: &mut Rng) -> String {
    match rng.below(8) {
        0 => "aws_access_key_id = AKIAIOSFODNN7EXAMPLE".into(),
        1 => "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
        2 => "password = os.environ[\"DB_PASSWORD\"]".into(),
        3 => format!("commit_sha = \"{}\"", rng.chars(HEX, 40)),
        4 => "api_key = \"<your-api-key-here>\"".into(),
        5 => format!(
            "request_id = \"{}-{}-4{}-a{}-{}\"",
            rng.chars(HEX, 8),
            rng.chars(HEX, 4),
            rng.chars(HEX, 3),
            rng.chars(HEX, 3),
            rng.chars(HEX, 12)
        ),
        6 => "token = \"${GITHUB_TOKEN}\"".into(),
        _ => "secret_name = \"prod-database-credentials\"".into(),
    }
}

/// The language of a corpus file, from its extension: what its code decoys look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    Python,
    Rust,
    Go,
    Js,
    Ts,
    Java,
    /// YAML, JSON, `.env`, Markdown: values in configuration and documentation.
    Config,
    /// Anything else: the classic decoys only, as [`text`] writes them.
    Other,
}

impl Lang {
    pub fn of(ext: &str) -> Lang {
        match ext {
            "py" => Lang::Python,
            "rs" => Lang::Rust,
            "go" => Lang::Go,
            "js" | "mjs" | "cjs" => Lang::Js,
            "ts" => Lang::Ts,
            "java" => Lang::Java,
            "yaml" | "yml" | "json" | "toml" | "env" | "md" => Lang::Config,
            _ => Lang::Other,
        }
    }
}

/// Parts of the identifiers code decoys are made of: `session_token_utilization`,
/// `access_key_id`, `or1_token`, `token_endpoint_auth`.
const QUALIFIERS: &[&str] = &[
    "session", "access", "refresh", "bearer", "client", "upload", "csrf", "reset", "oauth", "or1",
    "master", "signing", "private", "default", "shared", "cached", "next", "api", "id", "auth",
];
const SECRET_WORDS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "key",
    "secret_key",
    "api_key",
    "access_key",
    "credential",
    "auth_token",
];
const SUFFIXES: &[&str] = &[
    "",
    "",
    "_utilization",
    "_count",
    "_expiry",
    "_ttl",
    "_len",
    "_provider",
    "_handler",
    "_store",
    "_id",
    "_hash",
    "_path",
    "_field",
    "_bytes",
    "_endpoint_auth",
];
/// Type-name parts: `ConnectionTrafficSecrets`, `FlowMappingEndToken`, `TKTokenKeychainItem`.
const TYPE_PARTS: &[&str] = &[
    "Connection",
    "Traffic",
    "Handshake",
    "Session",
    "Client",
    "Server",
    "Flow",
    "Mapping",
    "Entry",
    "End",
    "Block",
    "Scalar",
    "Keychain",
    "Item",
    "Quota",
    "Exporter",
    "Unsupported",
    "Operation",
    "Elliptic",
    "Curve",
    "Endpoint",
    "Auth",
    "Oauth",
    "Mcp",
    "Tls12",
    "Early",
    "Resumption",
];
/// Plain English, whose base64 looks like a token and is not one.
const PHRASES: &[&str] = &[
    "this is a token",
    "not a real secret",
    "hello world",
    "example password here",
    "the quick brown fox jumps over the lazy dog",
    "replace me with your key",
    "open sesame",
    "correct horse battery staple",
];
/// Where documentation elides a value: a provider's prefix, a few characters, `...`.
const ELIDED: &[&str] = &[
    "ya29.c.", "ya29.a0", "ghp_", "xoxb-", "sk_live_", "glpat-", "AIza",
];

/// `X-Amz-Security-Token` and its kin, as Go SDKs name the headers in constants.
const AMZ_HEADER: &[&str] = &["Security", "Session", "Content", "Signed", "Client"];
const AMZ_HEADER_END: &[&str] = &["Token", "Credential", "Secret", "Sha256", "Key"];

/// `session_token_utilization`: a snake_case identifier with a secret word in it.
fn snake_name(rng: &mut Rng) -> String {
    format!(
        "{}_{}{}",
        rng.pick(QUALIFIERS),
        rng.pick(SECRET_WORDS),
        rng.pick(SUFFIXES)
    )
}

/// `SessionTokenUtilization` from `session_token_utilization`.
fn camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// `sessionTokenUtilization` from `session_token_utilization`.
fn lower_camel(snake: &str) -> String {
    let c = camel(snake);
    let mut chars = c.chars();
    chars
        .next()
        .map(|f| f.to_ascii_lowercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// A type name of `n` parts: `ConnectionTrafficSecrets` (with `last`).
fn type_name(rng: &mut Rng, n: usize, last: &str) -> String {
    let mut s: String = (0..n).map(|_| *rng.pick(TYPE_PARTS)).collect();
    s.push_str(last);
    s
}

/// Standard base64 with padding (the corpus needs no crate for it).
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8] = B64.as_bytes();
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A value for `name` that looks like a secret and is not: a provider prefix elided in docs
/// (`ya29.c.b0Aa9Vdyk...`), base64 of plain English (`dGhpcyBpcyBhIHRva2Vu`), a build
/// template (`@SECURITY_TOKEN@`).
fn doc_value(rng: &mut Rng, name: &str) -> String {
    match rng.below(3) {
        0 => {
            let n = 4 + rng.below(6);
            format!("{}{}...", rng.pick(ELIDED), rng.chars(ALNUM, n))
        }
        1 => base64(rng.pick(PHRASES).as_bytes()),
        _ => format!("@{}@", name.to_ascii_uppercase()),
    }
}

/// A line of real code that names secrets without holding one: a `Debug` impl's fields, a
/// struct's fields copied, imports of types named `*Secrets`, a parameter list, an enum's
/// names, constants naming headers, documentation values. Shapes seen as false alarms on
/// real third-party source (issue 12); identifiers vary so no fixed string can pass them.
/// A scanner should report none of them.
pub fn code_decoy(rng: &mut Rng, lang: Lang) -> String {
    let n = snake_name(rng);
    let ind = "    ".repeat(1 + rng.below(3));
    match lang {
        Lang::Rust => match rng.below(9) {
            0 => format!(
                "{ind}{}.field(\"{n}\", &self.{n});",
                rng.pick(&["formatter", "f", "fmt", "dbg"])
            ),
            1 => format!("{ind}.field(\"{n}\", &self.{n})"),
            2 => format!("{ind}{n}: self.{n}.clone(),"),
            3 => format!(
                "use crate::{}::{{self, {}, {}}};",
                rng.pick(&["tls12", "tls13", "crypto", "session", "kx", "handshake"]),
                type_name(rng, 1, "Secrets"),
                type_name(rng, 2, "Value")
            ),
            4 => format!("{ind}{n}: {n},"),
            5 => format!(
                "{ind}) -> Result<{}, {}> {{",
                type_name(rng, 2, "Secrets"),
                type_name(rng, 2, "Error")
            ),
            6 => {
                let h = rng.pick(&["xxh3_64", "xxh3_128", "xxh64", "wyhash"]);
                format!(
                    "{ind}{h}_internal(input, seed, &{}, {h}_long_with_seed)",
                    rng.pick(&[
                        "DEFAULT_SECRET",
                        "DEFAULT_KEY",
                        "K_SECRET",
                        "SECRET_DEFAULT"
                    ])
                )
            }
            7 => format!("{ind}formatter.field(\"{n}\", &self.{n});"),
            _ => {
                let v = format!(
                    "{}{}Per{}{}",
                    rng.pick(&["Access", "Signing", "Server", "Session"]),
                    rng.pick(&["Keys", "Tokens", "Secrets", "Passwords"]),
                    rng.pick(&["User", "Account", "Role", "Group"]),
                    rng.pick(&["Quota", "Limit", "Max"])
                );
                format!("{ind}{}KeyType::{v} => \"{v}\",", type_name(rng, 1, ""))
            }
        },
        Lang::Python => match rng.below(10) {
            0 => format!(
                "{ind}{}, {}):",
                type_name(rng, 2, "Token"),
                type_name(rng, 2, "Token")
            ),
            1 => {
                let p = rng.pick(&["TK", "NS", "CF", "SEC", "AS"]);
                format!("{ind}'{p}Token', '{p}Token{}',", type_name(rng, 2, ""))
            }
            2 => format!(
                "{ind}self, backend: \"Backend\", {}: \"_{}\", data: bytes",
                rng.pick(&["private_key", "public_key", "secret_key", "signing_key"]),
                type_name(rng, 2, "PrivateKey")
            ),
            3 => format!(
                "{ind}def add_{}(self, realm, uri, user, passwd, is_authenticated=False):",
                rng.pick(&["password", "secret", "token", "credentials"])
            ),
            4 => {
                let w = rng.pick(&["password", "secret", "token", "credential"]);
                format!("{ind}self.{w}_handler = HTTP{}Mgr(pm)", camel(w))
            }
            5 => format!(
                "{ind}{} = base64.b64encode(random_bytes[{}:])",
                rng.pick(&["password", "secret", "token", "api_key", "salt_password"]),
                rng.below(16)
            ),
            6 => format!(
                "{ind}{n}: {}{}",
                rng.pick(&["Mcp", "Oauth", "Api", ""]),
                camel(&n)
            ),
            7 => {
                let key = rng.pick(&["token", "access_token", "api_key", "security_token"]);
                format!("{ind}\"{key}\": \"{}\",", doc_value(rng, key))
            }
            8 => format!(
                "{ind}{} = \"{}\"",
                n.to_ascii_uppercase(),
                doc_value(rng, &n)
            ),
            _ => format!("{ind}self.{n} = {n}"),
        },
        Lang::Go => {
            let c = camel(&n);
            match rng.below(7) {
                0 => {
                    let (a, b) = (rng.pick(AMZ_HEADER), rng.pick(AMZ_HEADER_END));
                    format!("\tAmz{a}{b}Key = \"X-Amz-{a}-{b}\"")
                }
                1 => {
                    let (a, b) = (rng.pick(AMZ_HEADER), rng.pick(AMZ_HEADER_END));
                    format!("\tamz{a}{b}Key = v4Internal.Amz{a}{b}Key")
                }
                2 => format!("\t{c} string `json:\"{n},omitempty\"`"),
                3 => format!("\t\t{}: {},", lower_camel(&n), lower_camel(&n)),
                4 => format!(
                    "func (c *{}) {c}() (*{}, error) {{",
                    type_name(rng, 1, "Client"),
                    type_name(rng, 2, "Secrets")
                ),
                5 => format!("\t\"{}\": \"{}\",", lower_camel(&n), doc_value(rng, &n)),
                _ => format!(
                    "\t{} := {}.{c}",
                    lower_camel(&n),
                    rng.pick(&["cfg", "opts", "creds", "s"])
                ),
            }
        }
        Lang::Js | Lang::Ts => {
            let c = lower_camel(&n);
            let ts = lang == Lang::Ts && rng.below(2) == 0;
            match rng.below(6) {
                0 if ts => format!("{ind}private readonly {c}: {}Provider;", camel(&n)),
                1 if ts => format!("{ind}{c}?: {};", camel(&n)),
                2 if ts => format!(
                    "import {{ {}, {} }} from \"./{}\";",
                    type_name(rng, 1, "Secrets"),
                    type_name(rng, 1, "Token"),
                    rng.pick(&["tls", "auth", "session", "crypto"])
                ),
                0 | 1 => format!("{ind}{c}: this.{c},"),
                2 => format!("{ind}{c}: options.{c},"),
                3 => format!("{ind}\"{c}\": \"{}\",", doc_value(rng, &n)),
                4 => format!(
                    "{ind}const {{ {c} }} = {};",
                    rng.pick(&["config", "opts", "this.props", "req.body"])
                ),
                _ => format!("{ind}{c}: \"{}\",", doc_value(rng, &n)),
            }
        }
        Lang::Java => {
            let c = lower_camel(&n);
            match rng.below(7) {
                0 => format!("{ind}private final {} {c};", type_name(rng, 1, "KeySpec")),
                1 => format!("{ind}this.{c} = {c};"),
                2 => format!("{ind}public String get{}() {{ return {c}; }}", camel(&n)),
                3 => format!(
                    "import com.amazonaws.auth.{};",
                    type_name(rng, 1, "Credentials")
                ),
                4 => format!(
                    "{ind}case {}: return \"{}\";",
                    n.to_ascii_uppercase(),
                    camel(&n)
                ),
                5 => format!("{ind}String {c} = Base64.getEncoder().encodeToString(randomBytes);"),
                _ => format!("{ind}{}(\"{n}\"),", n.to_ascii_uppercase()),
            }
        }
        Lang::Config | Lang::Other => match rng.below(3) {
            0 => format!("{n}: {}", doc_value(rng, &n)),
            1 => format!("\"{}\": \"{}\",", lower_camel(&n), doc_value(rng, &n)),
            _ => format!("{} = \"{}\"", n.to_ascii_uppercase(), doc_value(rng, &n)),
        },
    }
}

const WORDS: &[&str] = &[
    "result",
    "value",
    "items",
    "config",
    "handler",
    "request",
    "response",
    "client",
    "server",
    "user",
    "account",
    "buffer",
    "index",
    "count",
    "session",
    "cache",
    "stream",
    "parser",
    "options",
    "context",
    "logger",
    "error",
    "status",
    "payload",
    "record",
    "query",
    "table",
    "worker",
    "event",
    "message",
    "header",
    "token_count",
    "key_name",
    "path",
    "file",
    "data",
];
const CALLS: &[&str] = &[
    "compute", "load", "parse", "fetch", "update", "render", "validate", "encode", "decode",
    "send", "open", "close", "get", "set", "build", "format", "append", "process",
];

/// One line of plausible code or prose.
pub fn filler_line(rng: &mut Rng, out: &mut String) {
    let indent = "    ".repeat(rng.below(3));
    let a = rng.pick(WORDS);
    let b = rng.pick(WORDS);
    let f = rng.pick(CALLS);
    let _ = match rng.below(10) {
        0 => writeln!(out, "{indent}def {f}_{a}(self, {b}, timeout=30):"),
        1 => writeln!(out, "{indent}# {f} the {a} before the {b} is {f}d again"),
        2 => writeln!(
            out,
            "{indent}const {a} = await {f}({b}, {{ retries: {} }});",
            rng.below(9)
        ),
        3 => writeln!(
            out,
            "{indent}if err := {f}({a}); err != nil {{ return {b}, err }}"
        ),
        4 => writeln!(
            out,
            "{indent}{a}: \"{}-{}\"",
            rng.pick(WORDS),
            rng.below(1000)
        ),
        5 => writeln!(out, "{indent}for {a} in self.{b}.{f}():"),
        6 => writeln!(
            out,
            "{indent}log.info(\"{f} {a} done in %d ms\", {b}.elapsed)"
        ),
        7 => writeln!(
            out,
            "{indent}{a}[{}] = {f}_{b}({a}, key=\"{}\")",
            rng.below(64),
            rng.pick(WORDS)
        ),
        8 => writeln!(out, "{indent}return {f}({a}.{b}, strict=True)"),
        _ => writeln!(out),
    };
}

/// Where a planted secret ended up.
pub struct Truth {
    pub path: String,
    pub line: usize,
    pub rule: &'static str,
    pub secret: String,
}

/// Text of about `size` bytes with a plant every `every` lines (0: none) and a decoy every
/// `every` lines too, offset by half. Returns the text and (line, rule, secret) truths.
/// The decoys are the classic ones; [`text_in`] adds a language's code decoys.
pub fn text(
    rng: &mut Rng,
    size: usize,
    every: usize,
) -> (String, Vec<(usize, &'static str, String)>) {
    text_in(rng, Lang::Other, size, every)
}

/// Lines between code decoys in a file of code with no plants: real code names its secrets
/// everywhere, not only near them.
const CODE_DECOYS_EVERY: usize = 50;

/// [`text`] for a file in `lang`: two decoys in three are that language's code decoys
/// ([`code_decoy`]), and a file of code with no plants has them too, one every
/// [`CODE_DECOYS_EVERY`] lines. For [`Lang::Other`] it is [`text`], the same from the same
/// seed.
pub fn text_in(
    rng: &mut Rng,
    lang: Lang,
    size: usize,
    every: usize,
) -> (String, Vec<(usize, &'static str, String)>) {
    text_in_words(rng, lang, size, every, false)
}

/// [`text_in`], with `words`: some planted values hold a placeholder word by chance
/// ([`with_placeholder_word`]), as the corpus generator plants them, so that recall figures
/// count what the placeholder filter drops. Every other byte is [`text_in`]'s from the seed.
pub fn text_in_words(
    rng: &mut Rng,
    lang: Lang,
    size: usize,
    every: usize,
    words: bool,
) -> (String, Vec<(usize, &'static str, String)>) {
    let mut out = String::with_capacity(size + 256);
    let mut truths = Vec::new();
    let mut line = 1;
    let code = lang != Lang::Other;
    let decoys = match every {
        0 if code => CODE_DECOYS_EVERY,
        _ => every,
    };
    while out.len() < size {
        if every > 0 && line % every == 0 {
            let kind = rng.below(KINDS);
            let mut p = plant(rng, kind);
            if words {
                p = with_placeholder_word(p, kind);
            }
            for (rule, secret) in p.secrets {
                let rel = p.text[..p.text.find(&secret).unwrap()]
                    .matches('\n')
                    .count();
                truths.push((line + rel, rule, secret));
            }
            line += p.text.matches('\n').count() + 1;
            out.push_str(&p.text);
            out.push('\n');
        } else if decoys > 0 && line % decoys == decoys / 2 {
            if code && rng.below(3) != 0 {
                out.push_str(&code_decoy(rng, lang));
            } else {
                out.push_str(&decoy(rng));
            }
            out.push('\n');
            line += 1;
        } else {
            let before = out.len();
            filler_line(rng, &mut out);
            line += out[before..].matches('\n').count();
        }
    }
    (out, truths)
}

/// Words the placeholder filter reads as a stand-in (`src/engine/placeholder.rs`), letters
/// only so that they fit every planted value's alphabet.
pub const PLACEHOLDER_WORDS: &[&str] = &[
    "dummy",
    "example",
    "sample",
    "insert",
    "replace",
    "redacted",
    "password",
    "changeme",
    "xxxx",
    "placeholder",
    "abcdefg",
];

/// Kinds whose value is a fixed prefix and a random body: a word in the body is chance, not a
/// stand-in, so the scanner must still report it.
const WORDS_IN: [usize; 8] = [2, 3, 4, 6, 12, 13, 14, 15];

/// One plant in this many of the kinds in [`WORDS_IN`] has a placeholder word in its body.
pub const WORD_EVERY: u32 = 6;

/// `p` (of `kind`), with a word of [`PLACEHOLDER_WORDS`] written over part of its random body
/// one time in [`WORD_EVERY`]. Random values hold such words now and then; a generator that
/// never makes one (as [`Rng::chars`] does not) hides the filter's false negatives from recall.
/// Chosen from a hash of the value, not from the generator's stream, so every other byte of a
/// corpus stays what the same seed always gave.
pub fn with_placeholder_word(mut p: Plant, kind: usize) -> Plant {
    let Some((_, value)) = p.secrets.last().cloned() else {
        return p;
    };
    let h = crc32fast::hash(value.as_bytes());
    if !WORDS_IN.contains(&(kind % KINDS)) || !h.is_multiple_of(WORD_EVERY) {
        return p;
    }
    let word = PLACEHOLDER_WORDS[(h / WORD_EVERY) as usize % PLACEHOLDER_WORDS.len()];
    // Inside the value's last run of letters and digits, clear of its prefix and of any fixed
    // ending (Anthropic's `AA`): the format stays whole.
    let bytes = value.as_bytes();
    let run_start = bytes
        .iter()
        .rposition(|b| !b.is_ascii_alphanumeric())
        .map_or(0, |i| i + 1)
        .max(8);
    let end = bytes.len().saturating_sub(4);
    if end < run_start + word.len() {
        return p;
    }
    let at = run_start + (h as usize >> 8) % (end - run_start - word.len() + 1);
    let mut new = value.clone();
    new.replace_range(at..at + word.len(), word);
    p.text = p.text.replace(&value, &new);
    if let Some(last) = p.secrets.last_mut() {
        last.1 = new;
    }
    p
}
