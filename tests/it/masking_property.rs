//! The masking promise as a property (issue 25): secrets of every kind, generated afresh, are
//! each planted twice, once where a rule names them and once bare (on another line, as a JSON
//! key, in another file or a later message), and every output path is searched for any
//! five-character piece of them: scan's four formats and the input of an operator hook,
//! `filter` (stdout, stderr, report), `run`, a hook's answer, stderr and audit log,
//! `mcp-proxy` (client stream, report, audit log), `scrub` and `redact-notebook`. The
//! maskers run in a hostile workspace whose `leakhound.toml` would disable every rule.

use crate::by_value::{hostile, run};
use crate::synth::{checksummed, Rng, ALNUM, B64, DIGITS};
use crate::util::{assert_no_piece, Sandbox};
use serde_json::json;

/// A kind of secret: how a rule names it, and a fresh value.
struct Kind {
    what: &'static str,
    named: fn(&str) -> String,
    value: fn(&mut Rng) -> String,
}

const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";

fn kinds() -> Vec<Kind> {
    vec![
        Kind {
            what: "aws secret",
            named: |s| format!("AWS_SECRET_ACCESS_KEY={s}"),
            value: |r| r.chars(B64, 40),
        },
        Kind {
            what: "github token",
            named: |s| format!("GITHUB_TOKEN={s}"),
            value: |r| checksummed(r, "ghp_"),
        },
        Kind {
            what: "slack token",
            named: |s| format!("SLACK_BOT_TOKEN={s}"),
            value: |r| {
                format!(
                    "xoxb-{}-{}-{}",
                    r.chars(DIGITS, 13),
                    r.chars(DIGITS, 13),
                    r.chars(ALNUM, 24)
                )
            },
        },
        Kind {
            what: "stripe key",
            named: |s| format!("STRIPE_SECRET_KEY={s}"),
            value: |r| format!("sk_live_{}", r.chars(ALNUM, 24)),
        },
        Kind {
            what: "password",
            named: |s| format!("password = '{s}'"),
            value: |r| format!("{}!{}#", r.chars(ALNUM, 7), r.chars(ALNUM, 6)),
        },
        Kind {
            what: "url password",
            named: |s| format!("DATABASE_URL=postgres://app:{s}@db.internal:5432/app"),
            value: |r| r.chars(ALNUM, 14),
        },
        Kind {
            what: "weak password",
            // `NAME: value` would be a type annotation in a notebook's Python, rightly not a password.
            named: |s| format!("POSTGRES_PASSWORD=\"{s}\""),
            value: |r| r.chars(LOWER, 9),
        },
    ]
}

/// Where the bare repeat goes.
#[derive(Clone, Copy, Debug)]
enum Bare {
    /// Another line of the same text.
    Line,
    /// A JSON object key.
    Key,
    /// Another file, or a later message of a stream.
    Elsewhere,
}

const PLACES: [Bare; 3] = [Bare::Line, Bare::Key, Bare::Elsewhere];

/// One planted case: a value of a kind, and where its bare repeat goes for each masker.
struct Case {
    what: String,
    secret: String,
    named: String,
    seed: u64,
}

impl Case {
    fn place(&self, masker: usize) -> Bare {
        PLACES[(self.seed as usize + masker) % PLACES.len()]
    }

    /// The bare repeat as a line of text.
    fn bare_line(&self, b: Bare) -> String {
        let s = &self.secret;
        match b {
            Bare::Line | Bare::Elsewhere => format!("saved {s} for later"),
            Bare::Key => json!({ s.clone(): true, "note": "kept" }).to_string(),
        }
    }
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (i, k) in kinds().into_iter().enumerate() {
        // Two values of each kind, from seeds the run has not used.
        for j in 0..2u64 {
            let seed = 25_000 + (i as u64) * 10 + j;
            let mut r = Rng::new(seed);
            let secret = (k.value)(&mut r);
            out.push(Case {
                what: format!("{} #{j}", k.what),
                named: (k.named)(&secret),
                secret,
                seed,
            });
        }
    }
    out
}

fn no_piece(c: &Case, outputs: &[(&str, &str)]) {
    for (what, out) in outputs {
        assert_no_piece(out, &c.secret, &format!("{} in {what}", c.what));
    }
}

/// A distinct token on the bare repeat's line, so that the line is a finding's context.
fn carrier(c: &Case) -> String {
    checksummed(&mut Rng::new(c.seed + 7_000), "ghp_")
}

#[test]
fn scan_reports_and_operator_hook_input_hold_no_piece_of_a_secret_named_elsewhere() {
    for c in cases() {
        let sb = Sandbox::new();
        let bare = format!("GITHUB_TOKEN={} {}", carrier(&c), c.bare_line(c.place(0)));
        match c.place(0) {
            Bare::Elsewhere => {
                sb.write("deploy/.env", format!("{}\n", c.named));
                sb.write("notes/log.txt", format!("{bare}\n"));
            }
            _ => {
                sb.write("deploy/.env", format!("{}\n{bare}\n", c.named));
                sb.write("notes/log.txt", "nothing here\n");
            }
        }
        for format in ["human", "json", "jsonl", "sarif"] {
            let r = sb.run(&["scan", ".", "--min-confidence", "low", "--format", format]);
            assert_eq!(r.code, 1, "{}, {format}: {}", c.what, r.stderr);
            no_piece(&c, &[(format, &r.stdout), ("stderr", &r.stderr)]);
        }
        // An operator hook that did not ask for secrets gets each finding, contexts masked.
        let ops = sb.path("ops");
        std::fs::create_dir_all(&ops).unwrap();
        sb.write(
            "ops/ops.toml",
            "[[hooks]]\nname = \"record\"\nwhen = \"any\"\n\
             command = [\"sh\", \"-c\", \"cat >> seen.jsonl\"]\n",
        );
        // `run` gives the scan a HOME of its own: hooks run at most once per finding, and
        // the record of that must not outlive the sandbox.
        std::fs::create_dir_all(sb.path("home")).unwrap();
        let r = run(
            &sb,
            &[
                "scan",
                "deploy",
                "notes",
                "--min-confidence",
                "low",
                "--config",
                "ops/ops.toml",
                "--format",
                "json",
            ],
            None,
        );
        assert_eq!(r.code, 1, "{}: {}", c.what, r.stderr);
        let seen = std::fs::read_to_string(ops.join("seen.jsonl")).unwrap_or_default();
        assert!(
            seen.lines().count() >= 2,
            "{}: the hook saw {seen:?}\n{}",
            c.what,
            r.stderr
        );
        no_piece(&c, &[("operator hook stdin", &seen), ("json", &r.stdout)]);
    }
}

#[test]
fn filter_and_run_hold_no_piece_of_a_secret_repeated_anywhere_in_the_stream() {
    for c in cases() {
        let sb = hostile();
        let filler = "ordinary output line\n".repeat(if matches!(c.place(1), Bare::Elsewhere) {
            200
        } else {
            0
        });
        let input = format!("{}\n{filler}{}\n", c.named, c.bare_line(c.place(1)));
        let r = run(
            &sb,
            &["filter", "--report", "found.jsonl", "--notify"],
            Some(input.as_bytes()),
        );
        assert_eq!(r.code, 0, "{}: {}", c.what, r.stderr);
        let report = std::fs::read_to_string(sb.path("found.jsonl")).unwrap_or_default();
        assert!(!report.is_empty(), "{}: nothing reported", c.what);
        no_piece(
            &c,
            &[
                ("filter stdout", &r.stdout),
                ("filter stderr", &r.stderr),
                ("filter report", &report),
            ],
        );

        let script = sb.write("print.txt", &input);
        let r = run(&sb, &["run", "--", "cat", script.to_str().unwrap()], None);
        assert_eq!(r.code, 0, "{}: {}", c.what, r.stderr);
        assert!(r.stdout.contains("[REDACTED:"), "{}: {}", c.what, r.stdout);
        no_piece(&c, &[("run stdout", &r.stdout), ("run stderr", &r.stderr)]);
    }
}

#[test]
fn a_hook_answer_and_audit_log_hold_no_piece_of_a_secret_the_tool_input_named() {
    for c in cases() {
        let sb = hostile();
        let s = &c.secret;
        let response = match c.place(2) {
            Bare::Line => json!({"stdout": format!("ok\nsaved {s} for later\n"), "stderr": "",
                                 "interrupted": false, "isImage": false}),
            Bare::Key => json!({"stdout": "ok\n", "stderr": "", "interrupted": false,
                                "isImage": false, "meta": { s.clone(): 1 }}),
            Bare::Elsewhere => json!({"stdout": "ok\n", "stderr": format!("later: {s}"),
                                      "interrupted": false, "isImage": false}),
        };
        let event = json!({
            "session_id": "s", "transcript_path": "/t", "cwd": "/",
            "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_use_id": "t1",
            "tool_input": {"command": format!("export {}; ./deploy", c.named)},
            "tool_response": response,
        });
        let r = run(
            &sb,
            &["hook", "claude", "--audit-log", "audit.jsonl"],
            Some(event.to_string().as_bytes()),
        );
        assert_eq!(r.code, 0, "{}: {}", c.what, r.stderr);
        let audit = std::fs::read_to_string(sb.path("audit.jsonl")).unwrap_or_default();
        assert!(
            r.stdout.contains("updatedToolOutput"),
            "{}: not masked: {}",
            c.what,
            r.stdout
        );
        no_piece(
            &c,
            &[
                ("hook answer", &r.stdout),
                ("hook stderr", &r.stderr),
                ("hook audit log", &audit),
            ],
        );
    }
}

#[test]
fn an_mcp_proxy_holds_no_piece_of_a_secret_the_client_sent_in_any_later_answer() {
    crate::util::require_tool("python3");
    for c in cases() {
        let sb = hostile();
        // The server echoes the value after the name bare, as a key, or in a later message.
        let server = sb.write(
            "echo_server.py",
            "import json, sys\n\
             place = sys.argv[1]\n\
             for line in sys.stdin:\n\
             \x20   m = json.loads(line)\n\
             \x20   v = m['params']['arguments']['value']\n\
             \x20   if place == 'Line':\n\
             \x20       r = {'content': [{'type': 'text', 'text': 'stored\\nsaved ' + v}]}\n\
             \x20   elif place == 'Key':\n\
             \x20       r = {'content': [{'type': 'text', 'text': 'stored'}], 'meta': {v: True}}\n\
             \x20   else:\n\
             \x20       r = {'content': [{'type': 'text', 'text': 'stored'}]}\n\
             \x20   print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n\
             \x20   if place == 'Elsewhere':\n\
             \x20       n = {'jsonrpc': '2.0', 'method': 'notifications/message', \
             'params': {'level': 'info', 'data': 'later: ' + v}}\n\
             \x20       print(json.dumps(n), flush=True)\n",
        );
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "store", "arguments": {"note": c.named, "value": c.secret}}});
        let place = format!("{:?}", c.place(3));
        let r = run(
            &sb,
            &[
                "mcp-proxy",
                "--report",
                "found.jsonl",
                "--audit-log",
                "audit.jsonl",
                "--notify",
                "--",
                "python3",
                server.to_str().unwrap(),
                &place,
            ],
            Some(format!("{request}\n").as_bytes()),
        );
        assert_eq!(r.code, 0, "{}: {}", c.what, r.stderr);
        assert!(r.stdout.contains("stored"), "{}: {}", c.what, r.stdout);
        let report = std::fs::read_to_string(sb.path("found.jsonl")).unwrap_or_default();
        let audit = std::fs::read_to_string(sb.path("audit.jsonl")).unwrap_or_default();
        no_piece(
            &c,
            &[
                ("mcp-proxy to the client", &r.stdout),
                ("mcp-proxy stderr", &r.stderr),
                ("mcp-proxy report", &report),
                ("mcp-proxy audit log", &audit),
            ],
        );
    }
}

#[test]
fn scrub_and_redact_notebook_leave_no_piece_of_a_secret_named_elsewhere() {
    for c in cases() {
        let sb = hostile();
        let named = json!({"type": "user", "text": c.named}).to_string();
        let bare = match c.place(4) {
            Bare::Key => json!({"type": "tool", "text": "ok", (c.secret.clone()): true}),
            _ => json!({"type": "tool", "text": c.bare_line(Bare::Line)}),
        };
        let t = sb.write("session.jsonl", format!("{named}\n{bare}\n"));
        let r = run(&sb, &["scrub", "--force", t.to_str().unwrap()], None);
        assert_eq!(r.code, 1, "{}: {}\n{}", c.what, r.stdout, r.stderr);
        let after = std::fs::read_to_string(&t).unwrap();
        no_piece(
            &c,
            &[
                ("scrubbed transcript", &after),
                ("scrub stdout", &r.stdout),
                ("scrub stderr", &r.stderr),
            ],
        );

        let s = &c.secret;
        let second = match c.place(5) {
            Bare::Key => json!({"cell_type": "code", "source": ["print(1)\n"],
                "metadata": { s.clone(): 1 }, "outputs": [], "execution_count": 2}),
            Bare::Line => json!({"cell_type": "code", "source": ["print(key)\n"], "metadata": {},
                "outputs": [{"output_type": "stream", "name": "stdout", "text": [format!("{s}\n")]}],
                "execution_count": 2}),
            Bare::Elsewhere => json!({"cell_type": "markdown", "metadata": {},
                "source": [format!("The key was {s} until today.\n")]}),
        };
        let nb = json!({"cells": [
            {"cell_type": "code", "source": [format!("{}\n", c.named)],
             "outputs": [], "metadata": {}, "execution_count": 1},
            second,
        ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
        let p = sb.write("analysis.ipynb", nb.to_string());
        let r = run(&sb, &["redact-notebook", p.to_str().unwrap()], None);
        assert!(r.code <= 1, "{}: {}", c.what, r.stderr);
        serde_json::from_str::<serde_json::Value>(&r.stdout).unwrap();
        no_piece(
            &c,
            &[
                ("redacted notebook", &r.stdout),
                ("redact-notebook stderr", &r.stderr),
            ],
        );
    }
}
