//! The identifiers the two peers match messages by, as the proxy sees them go by. A masked
//! message keeps an identifier only when the client chose it (its request's `id`, a progress
//! token it asked for): the client must find its answer, and the value is its own. One the
//! server chose (the `id` of a request it sends, a progress token of its own) is masked as
//! any other string; the client answers the masked `id`, which goes back to the server as the
//! server wrote it.

use crate::decode::json::{self, Step};
use std::collections::{HashMap, HashSet, VecDeque};

/// Identifiers the client chose, and the server's request ids masked on the way to it.
#[derive(Default)]
pub struct Ids {
    /// String bodies (as written, escapes and all) of the identifiers the client sent.
    client: HashSet<Vec<u8>>,
    /// A masked request id sent to the client, and the ids the server wrote, oldest first
    /// (two masked alike share one entry).
    renamed: HashMap<Vec<u8>, VecDeque<Vec<u8>>>,
}

/// Client identifiers remembered at most: a session of many requests forgets the oldest
/// ones' worth no more than a set this large costs.
const MAX_CLIENT: usize = 1 << 16;

impl Ids {
    /// Note the identifiers a client's message holds.
    pub fn sent_by_client(&mut self, line: &[u8]) {
        if self.client.len() >= MAX_CLIENT {
            self.client.clear();
        }
        for s in json::strings(line).unwrap_or_default() {
            if super::is_identifier(&s.path) {
                self.client.insert(line[s.start..s.end].to_vec());
            }
        }
    }

    /// Whether the string identifier `body`, at `path` of a server's message, is kept as it
    /// was: an id, requestId or progress token the client chose. Method names and
    /// `jsonrpc` are the server's words.
    pub fn keeps(&self, path: &[Step], body: &[u8]) -> bool {
        let named = |k: &str| matches!(path.last(), Some(Step::Key(x)) if x == k);
        !named("method") && !named("jsonrpc") && self.client.contains(body)
    }

    /// Note the request ids that `sent` (the masked copy forwarded to the client) holds in
    /// place of the ones `original` (the server's message) wrote.
    pub fn note_masked(&mut self, original: &[u8], sent: &[u8]) {
        // Most messages go out as they came: nothing to parse again.
        if original == sent {
            return;
        }
        let (Some(before), Some(after)) = (json::strings(original), json::strings(sent)) else {
            return;
        };
        for (o, s) in before.iter().zip(&after) {
            let (o_body, s_body) = (&original[o.start..o.end], &sent[s.start..s.end]);
            if is_id(&o.path) && o_body != s_body {
                let queue = self.renamed.entry(s_body.to_vec()).or_default();
                queue.push_back(o_body.to_vec());
            }
        }
    }

    /// `line` (a client's message) with each id the proxy masked on its way to the client
    /// put back as the server wrote it.
    pub fn restore(&mut self, line: Vec<u8>) -> Vec<u8> {
        if self.renamed.is_empty() {
            return line;
        }
        let Some(strings) = json::strings(&line) else {
            return line;
        };
        let mut out = Vec::with_capacity(line.len());
        let mut at = 0;
        for s in strings.iter().filter(|s| is_id(&s.path)) {
            let body = &line[s.start..s.end];
            let Some(queue) = self.renamed.get_mut(body) else {
                continue;
            };
            let Some(original) = queue.pop_front() else {
                continue;
            };
            if queue.is_empty() {
                self.renamed.remove(body);
            }
            out.extend_from_slice(&line[at..s.start]);
            out.extend_from_slice(&original);
            at = s.end;
        }
        out.extend_from_slice(&line[at..]);
        out
    }
}

/// Whether `path` is a message's own `id` (or a batch's message's).
fn is_id(path: &[Step]) -> bool {
    matches!(super::in_message(path), [Step::Key(k)] if k == "id")
}
