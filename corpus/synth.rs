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
pub fn text(
    rng: &mut Rng,
    size: usize,
    every: usize,
) -> (String, Vec<(usize, &'static str, String)>) {
    let mut out = String::with_capacity(size + 256);
    let mut truths = Vec::new();
    let mut line = 1;
    while out.len() < size {
        if every > 0 && line % every == 0 {
            let kind = rng.below(KINDS);
            let p = plant(rng, kind);
            for (rule, secret) in p.secrets {
                let rel = p.text[..p.text.find(&secret).unwrap()]
                    .matches('\n')
                    .count();
                truths.push((line + rel, rule, secret));
            }
            line += p.text.matches('\n').count() + 1;
            out.push_str(&p.text);
            out.push('\n');
        } else if every > 0 && line % every == every / 2 {
            out.push_str(&decoy(rng));
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
