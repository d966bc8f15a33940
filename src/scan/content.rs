//! The content pipeline: admitted bytes in, findings out. Identical content is scanned once
//! (a cache keyed by its hash); its matches are reused for every place that holds it. A
//! notebook maps each finding to its field, an env-shaped file names each finding's
//! variable, whatever source the bytes came from. Nothing here knows files, git or images.

use super::admit::{self, Form};
use super::{run::Run, Scanner};
use crate::detect::{Detection, Sieve};
use crate::engine::Match;
use crate::model::{self, Finding, Origin};
use crate::rules::MAX_WINDOW;
use crate::source::{self, Blob, Provenance};
use crate::sync::lock;
use std::sync::Arc;

/// Inputs larger than this are scanned in chunks of this size.
pub(super) const STREAM_CHUNK: usize = source::fs::STREAM_AT as usize;
/// Notebooks larger than this are scanned as plain text: their structure (a position map
/// per byte) costs many times their size.
const NOTEBOOK_MAX: usize = 16 << 20;
/// Bytes shared by neighbouring chunks on each side: more than any match and its context.
pub(super) const OVERLAP: usize = 2 * MAX_WINDOW;

/// What one distinct content holds, cached by its hash.
pub(super) type Scanned = Detection;

impl Scanner {
    /// Scan one blob read as its path says (notebook cells, env variables), for callers that
    /// hold bytes and report no warnings (the fuzz targets). A notebook that cannot be read
    /// as one is scanned as text here too; the scan drivers also say so.
    pub fn blob(&self, blob: &Blob) -> Vec<Finding> {
        let ignore = |_: &model::Warning| {};
        let run = Run::new(&self.policy, &self.progress, &ignore, false, None);
        self.content(&run, blob, admit::form(blob.provenance.name()))
    }

    /// Findings in one admitted blob held whole, read in its form.
    pub(super) fn content(&self, run: &Run, blob: &Blob, form: Form) -> Vec<Finding> {
        let display = || blob.provenance.display();
        match form {
            Form::Notebook if blob.data.len() > NOTEBOOK_MAX => {
                run.warn(display(), notebook_as_text());
                self.whole(run, blob)
            }
            Form::Notebook => self
                .notebook(&blob.provenance, &blob.data)
                .unwrap_or_else(|| {
                    run.warn(
                        display(),
                        "notebook is not valid JSON; scanned as plain text",
                    );
                    self.whole(run, blob)
                }),
            Form::Env => {
                // Name the variable of each finding, as `leakhound env` does.
                let mut found = self.whole(run, blob);
                name_variables(&mut found, &blob.data, 0);
                found
            }
            Form::Text => {
                let mut found = self.whole(run, blob);
                if !found.is_empty() && super::own_report::is_own_report(&blob.data) {
                    found.retain(|f| !f.public);
                }
                found
            }
        }
    }

    /// A notebook's cells and text outputs, each decoded from its JSON string and mapped back
    /// to the file's own bytes. `None` when it is not valid JSON.
    fn notebook(&self, at: &Provenance, raw: &[u8]) -> Option<Vec<Finding>> {
        let parts = source::notebook::parts(raw)?;
        // Every field's matches, in the file's own bytes, before any is reported: a context
        // line of a minified notebook spans many fields, and each field's secret is masked
        // in every other field's context.
        let mut known = Vec::new();
        let mut each = Vec::with_capacity(parts.len());
        for part in &parts {
            let found = in_field(&self.engine, raw, &part.view);
            known.extend(found.spans());
            each.push(found);
        }
        // The file as it is, too: a secret outside every cell's text (in metadata, widget
        // state) is a finding of its own, and masked in every context.
        let raw_plain = self.engine.scan(raw);
        let outside: Vec<Match> = raw_plain
            .iter()
            .filter(|r| !known.iter().any(|k| k.start < r.end && r.start < k.end))
            .filter(|m| !self.allowed(raw, m, at))
            .copied()
            .collect();
        known.extend_from_slice(&raw_plain);
        let (rules, key) = (self.engine.rules(), self.engine.fingerprint_key());
        let mut out = model::findings_masked(rules, raw, &outside, &known, at, Origin::START, key);
        let allowed = |text: &[u8], m: &Match| self.allowed(text, m, at);
        let sieve = Sieve {
            allowed: &allowed,
            ..Sieve::KEEP_ALL
        };
        for (part, found) in parts.iter().zip(each) {
            if found.is_empty() {
                continue;
            }
            let prov = in_notebook(at, part);
            out.extend(found.findings(&self.engine, raw, &known, &prov, Origin::START, sieve));
        }
        Some(out)
    }

    /// Whether the operator's policy allows match `m`, or it is outside its rule's scope
    /// (the rule's `path`, its own allowlists) at `at`.
    fn allowed(&self, hay: &[u8], m: &Match, at: &Provenance) -> bool {
        self.policy.match_allowed(hay, m) || self.engine.excluded(hay, m, at.name(), at.commit_id())
    }

    /// Scan one blob: matches (from the content cache when the same bytes were seen before),
    /// minus what the policy allows, as findings.
    pub(super) fn whole(&self, run: &Run, blob: &Blob) -> Vec<Finding> {
        let hay: &[u8] = &blob.data;
        let key = xxhash_rust::xxh3::xxh3_128(hay);
        let cached = lock(&self.seen).get(&key).cloned();
        let scanned = match cached {
            Some(s) => s,
            None => {
                let s = Arc::new(self.matches(hay));
                lock(&self.seen).insert(key, s.clone());
                s
            }
        };
        let known = scanned.spans();
        self.found(run, hay, &scanned, &known, &blob.provenance, Origin::START)
    }

    /// Findings from what one blob (or chunk) holds, minus what the policy allows. Each
    /// context is masked with `known`: every span any pass took for a secret, allowed ones
    /// included, so a plain secret in a base64 finding's context (and the reverse) stays
    /// hidden. Of the rules whose findings `run` only counts ([`Run::counts_only`]), only
    /// what it counts is made.
    pub(super) fn found(
        &self,
        run: &Run,
        hay: &[u8],
        scanned: &Scanned,
        known: &[Match],
        provenance: &Provenance,
        origin: Origin,
    ) -> Vec<Finding> {
        let allowed = |text: &[u8], m: &Match| self.allowed(text, m, provenance);
        let counted = |rule: &crate::rules::Rule, c| run.counts_only(rule, c);
        let sieve = Sieve {
            allowed: &allowed,
            counted: &counted,
        };
        scanned.findings(&self.engine, hay, known, provenance, origin, sieve)
    }

    /// `text` with every secret in it masked: each of `known` (and its encoded forms) wherever
    /// it occurs, a piece of one cut off at an edge, and whatever a rule matches there, plain
    /// or in a decoded view. For text leakhound did not build itself (an earlier report's
    /// context line).
    pub fn mask_text(&self, text: &str, known: &crate::model::Known) -> String {
        let mut spans: Vec<(usize, usize)> = self
            .matches(text.as_bytes())
            .spans()
            .iter()
            .filter(|m| !self.engine.rules()[m.rule].public)
            .map(|m| (m.start, m.end))
            .collect();
        spans.extend(known.find(text.as_bytes()).iter().map(|o| (o.start, o.end)));
        // A context is clipped: a secret cut at either edge shows only a piece.
        spans.extend(known.pieces_at_edges(text.as_bytes()));
        spans.sort();
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (s, e) in spans {
            // Spans from decoded views can end inside a character: widen to whole ones.
            let s = (0..=s.max(at))
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            let e = (e..=text.len())
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(text.len());
            if e <= at {
                continue;
            }
            out.push_str(&text[at..s]);
            out.push_str(&model::Secret::new(&text.as_bytes()[s..e]).redacted());
            at = e;
        }
        out.push_str(&text[at..]);
        out
    }

    /// The engine's matches in `hay`, and those found only in its decoded views (mapped back
    /// to the encoded span).
    pub(super) fn matches(&self, hay: &[u8]) -> Scanned {
        crate::detect::detect(&self.engine, hay)
    }
}

/// What one field of a notebook holds (`view`, its text decoded from the JSON strings of
/// `raw`), at its spans in `raw`. A match that stands in the file as it is read is plain; one
/// that an escape or the join of a multi-line field's lines (`"ghp_…", "…"`) changed is a
/// decoded one, its value the text's: a checksum, and masking by value, need the token a
/// reader sees, not the quotes and comma between its pieces.
fn in_field(engine: &crate::engine::Engine, raw: &[u8], view: &crate::decode::View) -> Detection {
    let found = crate::detect::detect(engine, &view.bytes);
    let to_raw = |m: &Match| Match {
        start: view.map.get(m.start),
        end: view.map.get(m.end),
        rule: m.rule,
        match_start: view.map.get(m.match_start),
        match_end: view.map.get(m.match_end),
    };
    let mut out = Detection::default();
    for m in &found.plain {
        let at = to_raw(m);
        let text = &view.bytes[m.span()];
        if raw.get(at.span()) == Some(text) {
            out.plain.push(at);
        } else {
            out.decoded.push(crate::detect::Decoded {
                encoding: crate::decode::Encoding::Escapes,
                at,
                secret: text.to_vec(),
            });
        }
    }
    out.decoded
        .extend(found.decoded.into_iter().map(|d| crate::detect::Decoded {
            at: to_raw(&d.at),
            ..d
        }));
    out
}

pub(super) fn notebook_as_text() -> String {
    format!(
        "notebook larger than {}; scanned as plain text (no cell numbers)",
        model::human_bytes(NOTEBOOK_MAX as u64)
    )
}

/// Each finding of an env-shaped blob with the variable it is in; `hay` holds the blob's
/// bytes from offset `base` on. UTF-16 (a PowerShell dump) is read as the text it holds.
pub(super) fn name_variables(found: &mut [Finding], hay: &[u8], base: usize) {
    let text = crate::decode::utf16_view(hay);
    for f in found {
        let at = f.start.saturating_sub(base).min(hay.len());
        let name = match &text {
            Some(v) => source::env::variable_at(&v.bytes, v.decoded_at(at)),
            None => source::env::variable_at(hay, at),
        };
        match &mut f.provenance {
            Provenance::File { variable, .. }
            | Provenance::Git { variable, .. }
            | Provenance::Image { variable, .. } => *variable = name,
            // An environment names its own variables; a stream has no file name.
            Provenance::Env { .. } | Provenance::Stream { .. } | Provenance::Notebook { .. } => {}
        }
    }
}

/// Where a notebook field's findings are: the same commit or layer with the cell added, or
/// for a file on disk (or inside an archive) a notebook place of its own.
fn in_notebook(at: &Provenance, part: &source::notebook::Part) -> Provenance {
    let mut p = at.clone();
    match &mut p {
        Provenance::Git {
            cell,
            output,
            field,
            ..
        }
        | Provenance::Image {
            cell,
            output,
            field,
            ..
        } => {
            (*cell, *output, *field) = (part.cell, part.output, Some(part.field.clone()));
            p
        }
        _ => Provenance::Notebook {
            path: at.name().to_string(),
            cell: part.cell,
            output: part.output,
            field: part.field.clone(),
        },
    }
}
