//! A stdio MCP proxy: JSON-RPC messages, one per line, forwarded between a client and the
//! server it talks to, with every secret in a string masked on the way to the client (and,
//! if asked, on the way to the server).
//!
//! A message is masked whole with [`mask_json`]: only string bodies holding a secret change,
//! so keys, numbers, framing and every other byte stay as they were. The identifiers the
//! protocol matches on (`id`, a cancelled `requestId`, a `progressToken`) are restored if a
//! rule took one for a secret and the client chose it: a changed one would leave its request
//! unanswered. Those the server chose are masked like any string, and a masked request id is
//! put back on the client's answer ([`Ids`]). A masked message must differ from the original
//! only inside string bodies; anything else is a failure to scan, and fails closed (see
//! [`relay`]).
//!
//! Nothing is held beyond the message being read: a line goes out as soon as it is masked,
//! in the order it came.

mod ids;
mod proxy;

pub use ids::Ids;
pub use proxy::{serve, Peer, Proxy, MAX_MESSAGE};

use super::{Masked, Masking};
use crate::decode::json::{self, Step};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What a failed scan does and whether client requests are masked too.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Mask client -> server messages too (tool-call arguments).
    pub mask_requests: bool,
    /// Forward a message that could not be scanned as it came, with a warning, instead of
    /// withholding it.
    pub fail_open: bool,
}

/// Which way a message travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    ToClient,
    ToServer,
}

impl Direction {
    /// The findings' provenance name: who sent the message.
    pub fn sender(self) -> &'static str {
        match self {
            Direction::ToClient => "mcp server",
            Direction::ToServer => "mcp client",
        }
    }
}

/// One message masked: the bytes to forward (without the line end) and what was masked.
#[derive(Debug)]
pub struct Message {
    pub masked: Masked,
    /// The line was not JSON and was masked as text.
    pub as_text: bool,
}

/// What to do with one line.
#[derive(Debug, Default)]
pub struct Relayed {
    /// Bytes to write on to the receiver (line end included), if any.
    pub forward: Option<Vec<u8>>,
    /// Bytes to write back to the sender (line end included): an error answering its
    /// request when the request itself could not be scanned.
    pub reply: Option<Vec<u8>>,
    pub findings: Vec<crate::model::Finding>,
    /// A warning for stderr (never holds message content).
    pub warning: Option<String>,
}

/// The message an error response carries when a message could not be scanned.
pub const UNSCANNABLE: &str = "leakhound could not scan this result";

/// JSON-RPC "internal error".
const INTERNAL_ERROR: i64 = -32603;

/// Which identifiers a masked message keeps as they were (see [`is_identifier`]), given its
/// path and its string body as written: all of a client's, the client's own of a server's.
pub type Keep<'a> = &'a dyn Fn(&[Step], &[u8]) -> bool;

/// `line` (one message without its line end) masked, or `None` when it could not be scanned:
/// the engine panicked, or the masked copy changed more than string bodies. Values `masking`
/// knows from earlier messages are masked here too; identifiers `keep` names are not.
pub fn mask_message(masking: &Masking, name: &str, line: &[u8], keep: Keep) -> Option<Message> {
    mask_line(masking, name, line, false, keep)
}

/// [`mask_message`] for a line the sender never ended (it exited mid-line): a text that is
/// not JSON may stop in the middle of a token, and a tail that could begin a secret is masked
/// as `partial`, as `filter` does at the end of a stream.
pub fn mask_last_message(
    masking: &Masking,
    name: &str,
    line: &[u8],
    keep: Keep,
) -> Option<Message> {
    mask_line(masking, name, line, true, keep)
}

fn mask_line(masking: &Masking, name: &str, line: &[u8], cut: bool, keep: Keep) -> Option<Message> {
    let json = catch_unwind(AssertUnwindSafe(|| masking.json(name, line))).ok()?;
    let Some(masked) = json else {
        let text = || {
            if !cut {
                return masking.text(name, line);
            }
            let mut s = masking.stream(name);
            let (mut bytes, mut findings) = s.push(line);
            let (rest, more) = s.finish();
            bytes.extend(rest);
            findings.extend(more);
            Masked { bytes, findings }
        };
        let masked = catch_unwind(AssertUnwindSafe(text)).ok()?;
        return Some(Message {
            masked,
            as_text: true,
        });
    };
    if masked.bytes == line {
        return Some(Message {
            masked,
            as_text: false,
        });
    }
    let bytes = keep_identifiers(line, &masked.bytes, keep)?;
    Some(Message {
        masked: Masked {
            bytes,
            findings: masked.findings,
        },
        as_text: false,
    })
}

/// `masked` with the protocol's identifiers that `keep` names put back as they were in
/// `original`, or `None` if `masked` is not `original` with only string bodies changed.
fn keep_identifiers(original: &[u8], masked: &[u8], keep: Keep) -> Option<Vec<u8>> {
    // Keys too: a key that is a secret is masked like a value, so the masked copy's paths
    // may differ from the original's; the strings are matched by their order instead.
    let before = json::strings_and_keys(original)?;
    let after = json::strings_and_keys(masked)?;
    if before.len() != after.len() {
        return None;
    }
    let mut out = Vec::with_capacity(masked.len());
    let (mut at_o, mut at_m) = (0, 0);
    for (o, m) in before.iter().zip(&after) {
        // Everything between strings must be byte-for-byte the same.
        if original[at_o..o.start] != masked[at_m..m.start] || o.path.len() != m.path.len() {
            return None;
        }
        out.extend_from_slice(&masked[at_m..m.start]);
        let body = if is_identifier(&o.path) && keep(&o.path, &original[o.start..o.end]) {
            &original[o.start..o.end]
        } else {
            &masked[m.start..m.end]
        };
        out.extend_from_slice(body);
        (at_o, at_m) = (o.end, m.end);
    }
    if original[at_o..] != masked[at_m..] {
        return None;
    }
    out.extend_from_slice(&masked[at_m..]);
    Some(out)
}

/// `path` from its message: a batch's message's path without the batch's index.
fn in_message(path: &[Step]) -> &[Step] {
    match path.first() {
        Some(Step::Index(_)) => &path[1..],
        _ => path,
    }
}

/// Whether a string at `path` is one the peers match messages by: a message's `id`, `method`
/// and `jsonrpc`, a cancelled request's `requestId`, a progress token. A batch (an array of
/// messages, MCP 2025-03-26) has the same paths under an index.
fn is_identifier(path: &[Step]) -> bool {
    let path = in_message(path);
    let key = |s: &Step, k: &str| matches!(s, Step::Key(x) if x == k);
    match path {
        [k] => key(k, "id") || key(k, "method") || key(k, "jsonrpc"),
        [p, k] => key(p, "params") && (key(k, "requestId") || key(k, "progressToken")),
        [p, m, k] => key(p, "params") && key(m, "_meta") && key(k, "progressToken"),
        _ => false,
    }
}

/// Decide what happens to one line read from `dir`'s sender, `mask` being the masker (a
/// parameter so a failure can be tested). A line that is not masked travels unchanged.
///
/// A line that could not be scanned fails closed unless `fail_open`: a response goes on as
/// a JSON-RPC error for its id ([`UNSCANNABLE`]), a request is answered to its sender with
/// that error, anything else (a notification, a line that is not JSON) is withheld.
pub fn relay(
    line: &[u8],
    dir: Direction,
    opts: Options,
    mask: impl FnOnce(&[u8]) -> Option<Message>,
) -> Relayed {
    let (body, end) = split_line_end(line);
    let masking = dir == Direction::ToClient || opts.mask_requests;
    if !masking || body.iter().all(u8::is_ascii_whitespace) {
        return Relayed {
            forward: Some(line.to_vec()),
            ..Relayed::default()
        };
    }
    let with_end = |b: &[u8]| [b, end].concat();
    match mask(body) {
        Some(m) => Relayed {
            forward: Some(with_end(&m.masked.bytes)),
            warning: m.as_text.then(|| {
                format!(
                    "the {} sent a line that is not JSON ({} bytes); forwarded as masked text",
                    dir.sender(),
                    body.len()
                )
            }),
            findings: m.masked.findings,
            reply: None,
        },
        None if opts.fail_open => Relayed {
            forward: Some(line.to_vec()),
            warning: Some(format!(
                "could not scan a message from the {}; forwarded unmasked (--fail-open)",
                dir.sender()
            )),
            ..Relayed::default()
        },
        None => fail_closed(body, end, dir),
    }
}

fn fail_closed(body: &[u8], end: &[u8], dir: Direction) -> Relayed {
    let msg = serde_json::from_slice::<serde_json::Value>(body).ok();
    let msg = msg.as_ref().and_then(|v| v.as_object());
    let id = msg.and_then(|m| m.get("id")).filter(|id| !id.is_null());
    let error = |id: &serde_json::Value| {
        let e = serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": INTERNAL_ERROR, "message": UNSCANNABLE},
        });
        let mut b = serde_json::to_vec(&e).unwrap_or_default();
        b.extend_from_slice(if end.is_empty() { b"\n" } else { end });
        b
    };
    let what = match (msg, id) {
        (Some(m), Some(id)) if m.contains_key("method") => {
            return Relayed {
                reply: Some(error(id)),
                warning: Some(format!(
                    "could not scan a request from the {}; answered it with an error",
                    dir.sender()
                )),
                ..Relayed::default()
            }
        }
        (Some(_), Some(id)) => {
            return Relayed {
                forward: Some(error(id)),
                warning: Some(format!(
                    "could not scan a response from the {}; forwarded an error in its place",
                    dir.sender()
                )),
                ..Relayed::default()
            }
        }
        (Some(_), None) => "a notification",
        (None, _) => "a line",
    };
    Relayed {
        warning: Some(format!(
            "could not scan {what} from the {}; withheld",
            dir.sender()
        )),
        ..Relayed::default()
    }
}

/// A line and its end (`\n`, `\r\n`, or nothing at the end of the stream).
fn split_line_end(line: &[u8]) -> (&[u8], &[u8]) {
    let body = line.strip_suffix(b"\n").unwrap_or(line);
    let body = body.strip_suffix(b"\r").unwrap_or(body);
    (body, &line[body.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::Sink;
    use crate::testing::{engine, KEY, SECRET};
    use std::io::{self, Write};
    use std::sync::{Arc, Mutex};

    fn opts() -> Options {
        Options::default()
    }

    /// What a client's message keeps: every identifier.
    const ALL: Keep = &|_, _| true;

    fn fwd(r: &Relayed) -> String {
        String::from_utf8(r.forward.clone().unwrap()).unwrap()
    }

    #[test]
    fn a_line_cut_off_mid_token_lets_no_piece_out() {
        let e = engine();
        let m = Masking::new(&e);
        // The server died while writing a key id: what arrived is not JSON and not a whole
        // token, and could still be the beginning of one.
        let cut = format!("{{\"jsonrpc\":\"2.0\",\"result\":\"key {}", &KEY[..14]);
        let out = mask_last_message(&m, "t", cut.as_bytes(), ALL).unwrap();
        let text = String::from_utf8(out.masked.bytes).unwrap();
        assert!(!text.contains(&KEY[..8]), "{text}");
        assert!(text.ends_with("[REDACTED:partial]"), "{text}");
    }

    #[test]
    fn a_tool_result_is_masked_and_keeps_every_other_byte() {
        let e = engine();
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{{\"content\":[{{\"type\":\"text\",\
             \"text\":\"aws_access_key_id={KEY}\\naws_secret_access_key={SECRET}\"}}],\
             \"isError\":false}}}}\r\n"
        );
        let r = relay(line.as_bytes(), Direction::ToClient, opts(), |b| {
            mask_message(&Masking::new(&e), "t", b, ALL)
        });
        let out = fwd(&r);
        assert!(!out.contains(KEY) && !out.contains(SECRET), "{out}");
        assert!(out.starts_with("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{"));
        assert!(out.ends_with("\"}],\"isError\":false}}\r\n"), "{out}");
        assert!(r.findings.len() >= 2 && r.warning.is_none());
    }

    #[test]
    fn requests_pass_unchanged_unless_asked() {
        let e = engine();
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":\
             {{\"name\":\"echo\",\"arguments\":{{\"text\":\"key {KEY}\"}}}}}}\n"
        );
        let r = relay(line.as_bytes(), Direction::ToServer, opts(), |b| {
            mask_message(&Masking::new(&e), "t", b, ALL)
        });
        assert_eq!(fwd(&r), line);
        let asked = Options {
            mask_requests: true,
            ..opts()
        };
        let r = relay(line.as_bytes(), Direction::ToServer, asked, |b| {
            mask_message(&Masking::new(&e), "t", b, ALL)
        });
        assert_eq!(fwd(&r), line.replace(KEY, "[REDACTED:aws.access-key-id]"));
    }

    #[test]
    fn identifiers_kept_are_put_back() {
        let e = engine();
        // An id and a progress token a rule takes for a key id, which the peer chose.
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":\"{KEY}\",\"method\":\"notifications/progress\",\
             \"params\":{{\"progressToken\":\"{KEY}\",\"message\":\"{KEY}\"}}}}"
        );
        let m = mask_message(&Masking::new(&e), "t", line.as_bytes(), ALL).unwrap();
        let out = String::from_utf8(m.masked.bytes).unwrap();
        assert_eq!(out.matches(KEY).count(), 2, "{out}");
        assert!(out.ends_with("\"message\":\"[REDACTED:aws.access-key-id]\"}}"));
    }

    #[test]
    fn a_resource_blob_is_scanned_decoded() {
        use base64::Engine as _;
        let e = engine();
        let blob = base64::engine::general_purpose::STANDARD
            .encode(format!("[default]\naws_secret_access_key = {SECRET}\n"));
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"contents\":[{{\"uri\":\"file:///c\",\
             \"blob\":\"{blob}\"}}]}}}}"
        );
        let m = mask_message(&Masking::new(&e), "t", line.as_bytes(), ALL).unwrap();
        let out = String::from_utf8(m.masked.bytes).unwrap();
        assert!(out.contains("[REDACTED:aws.secret-access-key]"), "{out}");
        // The secret's encoded span (bytes 34..74 of the text, 45..99 of the base64) is gone.
        assert!(!out.contains(&blob[48..96]), "{out}");
    }

    #[test]
    fn a_line_that_is_not_json_is_masked_as_text_with_a_warning() {
        let e = engine();
        let line = format!("debug: key={KEY}\n");
        let r = relay(line.as_bytes(), Direction::ToClient, opts(), |b| {
            mask_message(&Masking::new(&e), "t", b, ALL)
        });
        assert_eq!(fwd(&r), "debug: key=[REDACTED:aws.access-key-id]\n");
        let w = r.warning.unwrap();
        assert!(w.contains("not JSON") && !w.contains(KEY), "{w}");
    }

    #[test]
    fn a_message_that_cannot_be_scanned_fails_closed() {
        let failed = |_: &[u8]| None;
        // A response: an error for its id goes on instead.
        let r = relay(
            b"{\"jsonrpc\":\"2.0\",\"id\":\"a-1\",\"result\":{\"x\":\"y\"}}\n",
            Direction::ToClient,
            opts(),
            failed,
        );
        let v: serde_json::Value = serde_json::from_slice(&r.forward.unwrap()).unwrap();
        assert_eq!(v["id"], "a-1");
        assert_eq!(v["error"]["message"], UNSCANNABLE);
        assert!(r.reply.is_none());
        // A request from the server (sampling): answered to the server, nothing to the client.
        let r = relay(
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sampling/createMessage\"}\n",
            Direction::ToClient,
            opts(),
            failed,
        );
        assert!(r.forward.is_none());
        let v: serde_json::Value = serde_json::from_slice(&r.reply.unwrap()).unwrap();
        assert_eq!(
            (v["id"].as_i64(), v["error"]["code"].as_i64()),
            (Some(3), Some(-32603))
        );
        // A notification is withheld; with --fail-open it goes as it came.
        let note = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n";
        let r = relay(note, Direction::ToClient, opts(), failed);
        assert!(r.forward.is_none() && r.reply.is_none() && r.warning.is_some());
        let open = Options {
            fail_open: true,
            ..opts()
        };
        let r = relay(note, Direction::ToClient, open, failed);
        assert_eq!(r.forward.unwrap(), note);
    }

    #[test]
    fn a_masked_copy_that_changed_more_than_strings_is_a_failure() {
        assert!(keep_identifiers(br#"{"a":"x","b":1}"#, br#"{"a":"y","b":2}"#, ALL).is_none());
        assert!(keep_identifiers(br#"{"a":"x"}"#, br#"{"a":"x","b":"c"}"#, ALL).is_none());
        assert_eq!(
            keep_identifiers(br#"{"id":"x","a":"x"}"#, br#"{"id":"y","a":"y"}"#, ALL).unwrap(),
            br#"{"id":"x","a":"y"}"#
        );
    }

    /// A `Write` into a shared buffer, to read what a pump wrote.
    #[derive(Clone, Default)]
    struct Buf(std::sync::Arc<Mutex<Vec<u8>>>);
    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    struct NoSink;
    impl Sink for NoSink {
        fn finding(&self, _: &crate::model::Finding) {}
    }

    #[test]
    fn a_pump_forwards_every_line_in_order_and_the_last_without_its_end() {
        let e = engine();
        let input = format!(
            "{{\"id\":1,\"result\":{{}}}}\n\n{{\"method\":\"notifications/cancelled\",\
             \"params\":{{\"requestId\":1}}}}\nnot json {KEY}\n{{\"id\":2,\"result\":\"{KEY}\"}}"
        );
        let (to, back) = (Buf::default(), Buf::default());
        let (tp, bp) = (Peer::new(to.clone()), Peer::new(back.clone()));
        let p = Proxy::new(&e, Arc::default(), Arc::default(), opts(), &NoSink, &|_| {});
        p.pump(Direction::ToClient, input.as_bytes(), &tp, &bp)
            .unwrap();
        let out = String::from_utf8(to.0.lock().unwrap().clone()).unwrap();
        let want = input.replace(KEY, "[REDACTED:aws.access-key-id]");
        assert_eq!(out, want);
        assert!(back.0.lock().unwrap().is_empty());
    }

    /// A server's message keeps only the identifiers the client chose: the id of the client's
    /// request and the progress token it asked for come back as they were, though a rule takes
    /// them for a key id. The id of a request the server sends, a method name and a progress
    /// token of its own are masked like any string, and the client's answer to the masked id
    /// reaches the server with the id the server wrote.
    #[test]
    fn a_server_keeps_only_the_identifiers_the_client_chose() {
        let e = engine();
        let other = "AKIA5TQ3WVZ7HJ2KXLRM";
        let p = Proxy::new(&e, Arc::default(), Arc::default(), opts(), &NoSink, &|_| {});
        let (server, client) = (Buf::default(), Buf::default());
        let (sp, cp) = (Peer::new(server.clone()), Peer::new(client.clone()));
        let pump = |dir, input: String| p.pump(dir, input.as_bytes(), &sp, &cp).unwrap();
        let call = format!(
            "{{\"id\":\"{KEY}\",\"method\":\"tools/call\",\"params\":{{\"_meta\":{{\"progressToken\":\"{KEY}\"}}}}}}\n"
        );
        pump(Direction::ToServer, call.clone());
        let from_server = [
            format!("{{\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":\"{KEY}\"}}}}"),
            format!("{{\"id\":\"{other}\",\"method\":\"sampling/createMessage\",\"params\":{{\"progressToken\":\"{other}\"}}}}"),
            format!("{{\"method\":\"notifications/{other}\",\"jsonrpc\":\"{other}\"}}"),
            format!("{{\"id\":\"{KEY}\",\"result\":{{\"text\":\"{KEY}\"}}}}"),
        ];
        let sent = client.0.lock().unwrap().len();
        p.pump(
            Direction::ToClient,
            from_server.join("\n").as_bytes(),
            &cp,
            &sp,
        )
        .unwrap();
        let to_client = String::from_utf8(client.0.lock().unwrap()[sent..].to_vec()).unwrap();
        let masked = "[REDACTED:aws.access-key-id]";
        let want = [
            from_server[0].clone(),
            from_server[1].replace(other, masked),
            from_server[2].replace(other, masked),
            format!("{{\"id\":\"{KEY}\",\"result\":{{\"text\":\"{masked}\"}}}}"),
        ];
        assert_eq!(to_client, want.join("\n"));
        pump(
            Direction::ToServer,
            format!("{{\"id\":\"{masked}\",\"result\":{{}}}}\n"),
        );
        let to_server = String::from_utf8(server.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            to_server,
            format!("{call}{{\"id\":\"{other}\",\"result\":{{}}}}\n")
        );
    }

    #[test]
    fn a_message_too_long_to_hold_is_withheld_and_the_next_goes_through() {
        let e = engine();
        let long = format!("{{\"id\":1,\"result\":\"{}{KEY}\"}}\n", "x".repeat(100));
        let input = format!("{long}{{\"id\":2,\"result\":{{}}}}\n");
        let to = Buf::default();
        let warned = Mutex::new(Vec::new());
        let warn = |w: &str| warned.lock().unwrap().push(w.to_string());
        let p = Proxy {
            engine: &e,
            known: Arc::default(),
            opts: Options {
                fail_open: true,
                ..opts()
            },
            sink: &NoSink,
            warn: &warn,
            max_message: 64,
            ids: Arc::default(),
        };
        p.pump(
            Direction::ToClient,
            input.as_bytes(),
            &Peer::new(to.clone()),
            &Peer::new(Buf::default()),
        )
        .unwrap();
        let out = String::from_utf8(to.0.lock().unwrap().clone()).unwrap();
        assert_eq!(out, "{\"id\":2,\"result\":{}}\n");
        let w = warned.lock().unwrap();
        assert!(w.len() == 1 && w[0].contains("withheld"), "{w:?}");
    }
}
