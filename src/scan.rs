//! The pipeline: source -> engine -> policy -> findings. Identical content is scanned once;
//! its matches are reused for every path that holds it.

use crate::engine::{Engine, Match};
use crate::policy::Policy;
use crate::report::Origin;
use crate::report::{self, Finding, Summary, Warning};
use crate::rules::MAX_WINDOW;
use crate::source::{self, fs::Event, git, image, Blob, Data};
use rayon::prelude::*;
use std::collections::HashMap;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Counters a progress display may read while the scan runs.
#[derive(Debug, Default)]
pub struct Progress {
    pub files: AtomicU64,
    pub bytes: AtomicU64,
    pub findings: AtomicU64,
}

/// What a scan produced, before any writer sees it.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Findings to report, sorted by path and position.
    pub findings: Vec<Finding>,
    /// Findings the baseline suppressed (kept so a new baseline can include them).
    pub suppressed: Vec<Finding>,
    pub warnings: Vec<Warning>,
    pub summary: Summary,
}

/// An engine and a policy, shared by every worker thread.
pub struct Scanner {
    engine: Engine,
    policy: Policy,
    seen: Mutex<HashMap<u128, Arc<Scanned>>>,
    /// Problems found while scanning content (a notebook that is not JSON).
    notes: Mutex<Vec<Warning>>,
    /// Open archives and compressed files met by `paths` (None: scan them as they are).
    archives: Option<Archives>,
    pub progress: Progress,
}

/// How files inside archives are treated.
#[derive(Debug, Clone)]
pub struct Archives {
    pub limits: source::archive::Limits,
    /// Scan entries that look binary too.
    pub binary: bool,
}

#[derive(Default)]
struct Collected {
    findings: Vec<Finding>,
    suppressed: Vec<Finding>,
    warnings: Vec<Warning>,
    summary: Summary,
}

impl Scanner {
    pub fn new(engine: Engine, policy: Policy) -> Scanner {
        Scanner {
            engine,
            policy,
            seen: Mutex::default(),
            notes: Mutex::default(),
            archives: None,
            progress: Progress::default(),
        }
    }

    /// Open archives and compressed files (zip, tar, gzip, ...) and scan what they hold.
    pub fn with_archives(mut self, archives: Option<Archives>) -> Scanner {
        self.archives = archives;
        self
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Scan one blob.
    pub fn blob(&self, blob: &Blob) -> Vec<Finding> {
        match (&blob.data, &blob.provenance) {
            (_, source::Provenance::File { path, .. })
                if path.ends_with(".ipynb") && blob.data.len() > NOTEBOOK_MAX =>
            {
                // Its structure costs many times its size in memory: read it as text.
                lock(&self.notes).push(Warning {
                    path: path.clone(),
                    message: format!(
                        "notebook larger than {}; scanned as plain text (no cell numbers)",
                        report::human_bytes(NOTEBOOK_MAX as u64)
                    ),
                });
                self.whole(blob)
            }
            (_, source::Provenance::File { path, .. }) if path.ends_with(".ipynb") => {
                self.notebook(path, &blob.data).unwrap_or_else(|| {
                    lock(&self.notes).push(Warning {
                        path: path.clone(),
                        message: "notebook is not valid JSON; scanned as plain text".into(),
                    });
                    self.whole(blob)
                })
            }
            (_, source::Provenance::File { path, .. }) if source::env::is_env_file(path) => {
                // Name the variable of each finding, as `leakhound env` does.
                let mut found = self.whole(blob);
                for f in &mut found {
                    if let source::Provenance::File { variable, .. } = &mut f.provenance {
                        *variable = source::env::variable_at(&blob.data, f.start);
                    }
                }
                found
            }
            _ => self.whole(blob),
        }
    }

    /// A notebook's cells and text outputs, each decoded from its JSON string and mapped back
    /// to the file's own bytes. `None` when it is not valid JSON.
    fn notebook(&self, path: &str, raw: &[u8]) -> Option<Vec<Finding>> {
        let parts = source::notebook::parts(raw)?;
        // Every field's matches, in the file's own bytes, before any is reported: a context
        // line of a minified notebook spans many fields, and each field's secret is masked
        // in every other field's context.
        let mut known = Vec::new();
        let mut each = Vec::with_capacity(parts.len());
        for part in &parts {
            let v = &part.view;
            let mapped: Vec<Match> = self
                .engine
                .scan(&v.bytes)
                .into_iter()
                .map(|m| Match {
                    start: v.map[m.start],
                    end: v.map[m.end],
                    rule: m.rule,
                    match_start: v.map[m.match_start],
                    match_end: v.map[m.match_end],
                })
                .collect();
            known.extend_from_slice(&mapped);
            each.push(mapped);
        }
        // The file as it is, too: a secret outside every cell's text (in metadata, widget
        // state) is a finding of its own, and masked in every context.
        let raw_plain = self.engine.scan(raw);
        let outside: Vec<Match> = raw_plain
            .iter()
            .filter(|r| !known.iter().any(|k| k.start < r.end && r.start < k.end))
            .filter(|m| !self.policy.match_allowed(raw, m))
            .copied()
            .collect();
        known.extend_from_slice(&raw_plain);
        let file = source::Provenance::File {
            path: path.to_string(),
            variable: None,
        };
        let rules = self.engine.rules();
        let mut out = report::findings_masked(rules, raw, &outside, &known, &file, Origin::START);
        for (part, mapped) in parts.iter().zip(each) {
            let matches: Vec<Match> = mapped
                .into_iter()
                .filter(|m| !self.policy.match_allowed(raw, m))
                .collect();
            if matches.is_empty() {
                continue;
            }
            let prov = source::Provenance::Notebook {
                path: path.to_string(),
                cell: part.cell,
                output: part.output,
                field: part.field.clone(),
            };
            out.extend(report::findings_masked(
                rules,
                raw,
                &matches,
                &known,
                &prov,
                Origin::START,
            ));
        }
        Some(out)
    }

    /// Scan one blob: matches (from the content cache when the same bytes were seen before),
    /// minus what the policy allows, as findings.
    fn whole(&self, blob: &Blob) -> Vec<Finding> {
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
        let known = scanned_spans(&scanned);
        self.found(hay, &scanned, &known, &blob.provenance, Origin::START)
    }

    /// Findings from what one blob (or chunk) holds, minus what the policy allows. Each
    /// context is masked with `known`: every span any pass took for a secret, allowed ones
    /// included, so a plain secret in a base64 finding's context (and the reverse) stays
    /// hidden.
    fn found(
        &self,
        hay: &[u8],
        scanned: &Scanned,
        known: &[Match],
        provenance: &source::Provenance,
        origin: Origin,
    ) -> Vec<Finding> {
        let rules = self.engine.rules();
        let kept: Vec<Match> = scanned
            .plain
            .iter()
            .filter(|m| !self.policy.match_allowed(hay, m))
            .copied()
            .collect();
        let mut out = report::findings_masked(rules, hay, &kept, known, provenance, origin);
        // One pass for all decoded matches: `findings` returns them in order of start, so
        // they are sorted the same way first to pair each with its decoded secret.
        let mut decoded: Vec<&Decoded> = scanned
            .decoded
            .iter()
            .filter(|d| !self.policy.match_allowed(hay, &d.at))
            .collect();
        decoded.sort_by_key(|d| d.at.start);
        let at: Vec<Match> = decoded.iter().map(|d| d.at).collect();
        let found = report::findings_masked(rules, hay, &at, known, provenance, origin);
        out.extend(
            found
                .into_iter()
                .zip(decoded)
                .map(|(f, d)| f.decoded(d.encoding, &d.secret)),
        );
        out
    }

    /// `text` with every secret in it masked: each of `known` wherever it occurs, and whatever
    /// a rule matches there, plain or in a decoded view. For text leakhound did not build
    /// itself (an earlier report's context line).
    pub fn mask_text(&self, text: &str, known: &[&str]) -> String {
        let mut spans: Vec<(usize, usize)> = scanned_spans(&self.matches(text.as_bytes()))
            .iter()
            .filter(|m| !self.engine.rules()[m.rule].public)
            .map(|m| (m.start, m.end))
            .collect();
        for k in known.iter().filter(|k| !k.is_empty()) {
            spans.extend(text.match_indices(*k).map(|(i, _)| (i, i + k.len())));
            // A context is clipped: a secret cut at either edge shows only a piece.
            let edge = |n: usize| n >= 4 && n < k.len();
            if let Some(n) = (1..=k.len().min(text.len()))
                .rev()
                .find(|&n| edge(n) && text.as_bytes().ends_with(&k.as_bytes()[..n]))
            {
                spans.push((text.len() - n, text.len()));
            }
            if let Some(n) = (1..=k.len().min(text.len()))
                .rev()
                .find(|&n| edge(n) && text.as_bytes().starts_with(&k.as_bytes()[k.len() - n..]))
            {
                spans.push((0, n));
            }
        }
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
            out.push_str(&report::Secret::new(&text.as_bytes()[s..e]).redacted());
            at = e;
        }
        out.push_str(&text[at..]);
        out
    }

    /// The engine's matches in `hay`, and those found only in its decoded views (mapped back
    /// to the encoded span).
    fn matches(&self, hay: &[u8]) -> Scanned {
        let plain = self.engine.scan(hay);
        let mut seen: std::collections::HashSet<(usize, usize, usize)> =
            plain.iter().map(|m| (m.rule, m.start, m.end)).collect();
        let mut decoded = Vec::new();
        for (encoding, view) in crate::decode::views(hay) {
            for m in self.engine.scan(&view.bytes) {
                let (start, end) = view.original(m.start, m.end);
                if end <= start || !seen.insert((m.rule, start, end)) {
                    continue;
                }
                let (match_start, match_end) = view.original(m.match_start, m.match_end);
                decoded.push(Decoded {
                    encoding,
                    at: Match {
                        start,
                        end,
                        rule: m.rule,
                        match_start: match_start.min(start),
                        match_end: match_end.max(end),
                    },
                    secret: view.bytes[m.span()].to_vec(),
                });
            }
        }
        Scanned { plain, decoded }
    }

    /// A large input read and scanned chunk by chunk: `head` (its first bytes, already read)
    /// then `r` to its end. Each chunk's matches are the ones that start in its own part; the
    /// overlap gives every such match its full window and context. Memory stays bounded
    /// whatever the size, and a file that shrinks while read just ends early (no mapping, so
    /// no SIGBUS). Large inputs skip the content cache. Returns the findings, the bytes read,
    /// and the read error that ended it early, if any.
    fn chunked(
        &self,
        provenance: &source::Provenance,
        mut buf: Vec<u8>,
        r: &mut dyn Read,
        nul_text: bool,
    ) -> (Vec<Finding>, u64, Option<std::io::Error>) {
        if nul_text {
            source::fs::nul_to_newline(&mut buf);
        }
        let window = STREAM_CHUNK + 2 * OVERLAP;
        let (mut base, mut own_from) = (0, 0);
        let mut origin = Origin::START;
        let mut out = Vec::new();
        let (mut eof, mut error) = (false, None);
        loop {
            while !eof && buf.len() < window {
                let at = buf.len();
                buf.resize(at + (window - at).min(1 << 20), 0);
                match r.read(&mut buf[at..]) {
                    Ok(0) => {
                        buf.truncate(at);
                        eof = true;
                    }
                    Ok(n) => {
                        if nul_text {
                            source::fs::nul_to_newline(&mut buf[at..at + n]);
                        }
                        buf.truncate(at + n);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => buf.truncate(at),
                    Err(e) => {
                        buf.truncate(at);
                        eof = true;
                        error = Some(e);
                    }
                }
            }
            let len = base + buf.len();
            let own_to = if eof { len } else { len - OVERLAP };
            let hay = &buf[..];
            // The whole chunk's matches, decoded views included, mask contexts; each chunk
            // reports the ones that start in its own part.
            let mut scanned = self.matches(hay);
            let own = |m: &Match| (own_from..own_to).contains(&(base + m.start));
            let all = scanned_spans(&scanned);
            scanned.plain.retain(own);
            scanned.decoded.retain(|d| own(&d.at));
            out.extend(self.found(hay, &scanned, &all, provenance, origin));
            if eof {
                return (out, len as u64, error);
            }
            let next = own_to - OVERLAP;
            origin.advance(&buf[..next - base]);
            buf.drain(..next - base);
            (base, own_from) = (next, own_to);
        }
    }

    /// A file or pipe too large to hold (or a pipe named on the command line): an archive
    /// on disk is opened in place, anything else scanned in chunks.
    fn stream(
        &self,
        c: &Mutex<Collected>,
        mut s: source::fs::Stream,
        on_warning: &(dyn Fn(&Warning) + Sync),
    ) {
        use source::fs::Reader;
        let path = s.provenance.display();
        if self.policy.path_allowed(&path) {
            return;
        }
        if let (Some(a), Reader::File(f)) = (&self.archives, &mut s.rest) {
            if source::archive::sniff(&s.head).is_some() {
                let prov = s.provenance.clone();
                let inside = |p| prov.with_path(p);
                source::archive::expand_file(&path, f, &a.limits, &mut |e| {
                    self.archive_event(c, a, &inside, on_warning, e)
                });
                return;
            }
        }
        let pipe = matches!(s.rest, Reader::Pipe(_));
        let (found, n, error) = self.chunked(&s.provenance, s.head, &mut s.rest, s.nul_text);
        self.counted_bytes(c, n, found);
        if let Some(e) = error {
            if pipe {
                lock(c).summary.failed_inputs += 1;
            }
            let msg = format!("reading stopped after {n} bytes ({e}); scanned what was read");
            warn(c, on_warning, path.clone(), msg);
        }
        if let Some(size) = s.size.filter(|&size| n < size) {
            let msg = format!(
                "shrank from {size} to {n} bytes while read (truncated?); scanned what was read"
            );
            warn(c, on_warning, path, msg);
        }
    }

    fn take(&self, c: &Mutex<Collected>, blob: &Blob, on_warning: &(dyn Fn(&Warning) + Sync)) {
        let path = blob.provenance.display();
        if self.policy.path_allowed(&path) {
            return;
        }
        if let Some(a) = &self.archives {
            if source::archive::sniff(&blob.data).is_some() {
                let inside = |p| blob.provenance.with_path(p);
                let outer = blob.provenance.path();
                return self.archive(c, outer, &blob.data, a, &inside, on_warning);
            }
        }
        self.counted(c, blob, self.blob(blob));
    }

    /// Count a scanned blob and file its findings.
    fn counted(&self, c: &Mutex<Collected>, blob: &Blob, found: Vec<Finding>) {
        self.counted_bytes(c, blob.data.len() as u64, found)
    }

    /// Count a scanned input of `n` bytes and file its findings.
    fn counted_bytes(&self, c: &Mutex<Collected>, n: u64, found: Vec<Finding>) {
        self.progress.files.fetch_add(1, Relaxed);
        self.progress.bytes.fetch_add(n, Relaxed);
        let mut c = lock(c);
        c.summary.files += 1;
        c.summary.bytes += n;
        self.keep(&mut c, found);
    }

    /// Each file inside an archive, as a blob of its own named `outer!inner`.
    fn archive(
        &self,
        c: &Mutex<Collected>,
        path: &str,
        data: &[u8],
        a: &Archives,
        provenance: &dyn Fn(String) -> source::Provenance,
        on_warning: &(dyn Fn(&Warning) + Sync),
    ) {
        source::archive::expand(path, data, &a.limits, &mut |e| {
            self.archive_event(c, a, provenance, on_warning, e)
        });
    }

    /// One thing an archive held: a file scanned (whole or in chunks), a skip, a warning.
    fn archive_event(
        &self,
        c: &Mutex<Collected>,
        a: &Archives,
        provenance: &dyn Fn(String) -> source::Provenance,
        on_warning: &(dyn Fn(&Warning) + Sync),
        e: source::archive::Event<'_>,
    ) {
        use source::archive::Event as E;
        match e {
            E::File { path, mut data } => {
                if !a.binary && source::fs::is_binary(&data) {
                    return skipped(c, path, "binary");
                }
                let sniff = &data[..data.len().min(8 << 10)];
                if memchr::memchr(0, sniff).is_some() && source::fs::nul_separated_text(sniff) {
                    source::fs::nul_to_newline(&mut data);
                }
                let blob = Blob {
                    provenance: provenance(path),
                    data: Data::Owned(data),
                };
                if !self.policy.path_allowed(&blob.provenance.display()) {
                    self.counted(c, &blob, self.blob(&blob));
                }
            }
            E::Stream { path, head, rest } => {
                let prov = provenance(path);
                if self.policy.path_allowed(&prov.display()) {
                    return;
                }
                if !a.binary && source::fs::is_binary(&head) {
                    return skipped(c, prov.display(), "binary");
                }
                let (found, n, _) = self.chunked(&prov, head, rest, false);
                self.counted_bytes(c, n, found);
            }
            E::SkippedLarge { path, size } => {
                let what = match size {
                    Some(n) => format!("{n} bytes"),
                    None => "its size".to_string(),
                };
                let msg = format!("too large ({what} over the size limit); not scanned");
                warn(c, on_warning, path.clone(), msg);
                skipped(c, path, "too large");
            }
            E::Warning { path, message } => warn(c, on_warning, path, message),
        }
    }

    /// File findings as reported, or as suppressed when the baseline knows them.
    fn keep(&self, c: &mut Collected, found: Vec<Finding>) {
        for f in found {
            if self.policy.in_baseline(&f.fingerprint) {
                c.suppressed.push(f);
            } else {
                self.progress.findings.fetch_add(1, Relaxed);
                c.findings.push(f);
            }
        }
    }

    /// Scan files and directories.
    pub fn paths(
        &self,
        opts: &source::fs::WalkOptions,
        on_warning: &(dyn Fn(&Warning) + Sync),
    ) -> Outcome {
        let start = Instant::now();
        let c = Mutex::new(Collected::default());
        source::fs::walk(opts, &|event| match event {
            Event::Blob(b) => self.take(&c, &b, on_warning),
            Event::Stream(s) => self.stream(&c, s, on_warning),
            Event::Skipped { path, why } => {
                let path = source::fs::display_path(&path);
                match why {
                    source::fs::Skip::Binary => skipped(&c, path, "binary"),
                    source::fs::Skip::Large(n) => {
                        let msg =
                            format!("too large ({n} bytes over --max-file-size); not scanned");
                        warn(&c, on_warning, path.clone(), msg);
                        skipped(&c, path, "too large");
                    }
                }
            }
            Event::Ignored(n) => lock(&c).summary.skipped_ignored += n,
            Event::Error {
                path,
                message,
                named,
            } => {
                let path = path.display().to_string();
                warn(&c, on_warning, path.clone(), message);
                if named {
                    lock(&c).summary.failed_inputs += 1;
                }
                skipped(&c, path, "unreadable");
            }
        });
        let mut c = c.into_inner().unwrap_or_else(|e| e.into_inner());
        for w in lock(&self.notes).drain(..) {
            on_warning(&w);
            c.warnings.push(w);
        }
        finish(c, start)
    }

    /// Scan environments; each finding names its variable.
    pub fn environments(&self, envs: &[source::env::Environment]) -> Outcome {
        let start = Instant::now();
        let mut c = Collected::default();
        for env in envs {
            let blob = env.blob();
            let found = self.blob(&blob);
            c.summary.files += 1;
            c.summary.bytes += env.file.as_ref().map_or(blob.data.len() as u64, |f| f.1);
            let found = found
                .into_iter()
                .map(|mut f| {
                    f.provenance = source::Provenance::Env {
                        origin: env.origin.clone(),
                        variable: env.variable(f.line).unwrap_or_default(),
                    };
                    let line = env.file_line(f.line);
                    f.end_line = line + (f.end_line - f.line);
                    f.line = line;
                    f
                })
                .collect();
            self.keep(&mut c, found);
        }
        finish(c, start)
    }

    /// Scan a git repository: each blob `opts.select` covers, once, attributed to the commit
    /// that introduced it, with findings on the lines that commit added.
    pub fn git(
        &self,
        repo: &git::Repo,
        opts: &GitOptions,
        on_warning: &(dyn Fn(&Warning) + Sync),
    ) -> Result<Outcome, git::GitError> {
        let start = Instant::now();
        let c = Mutex::new(Collected::default());
        self.git_repo(repo, opts, "", &c, on_warning)?;
        if opts.submodules {
            for (path, dir) in repo.submodules() {
                let sub = git::Repo::open(&dir)
                    .and_then(|sub| self.git_repo(&sub, opts, &format!("{path}/"), &c, on_warning));
                if let Err(e) = sub {
                    warn(&c, on_warning, path, format!("submodule not scanned: {e}"));
                }
            }
        }
        Ok(finish(
            c.into_inner().unwrap_or_else(|e| e.into_inner()),
            start,
        ))
    }

    fn git_repo(
        &self,
        repo: &git::Repo,
        opts: &GitOptions,
        prefix: &str,
        c: &Mutex<Collected>,
        on_warning: &(dyn Fn(&Warning) + Sync),
    ) -> Result<(), git::GitError> {
        let (changes, problems) = repo.changes(&opts.select)?;
        for p in problems {
            warn(c, on_warning, repo.dir().display().to_string(), p);
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let workers = opts.threads.clamp(1, changes.len().max(1));
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| {
                    // Each worker has its own cat-file processes: git inflates objects on as
                    // many cores as there are workers. One streams the blobs to scan, the
                    // other is asked for a parent's blob when a change needs its diff.
                    let mut objects = repo.objects();
                    let mut parents = None;
                    loop {
                        let from = next.fetch_add(GIT_BATCH, Relaxed);
                        let Some(batch) = changes.get(from..(from + GIT_BATCH).min(changes.len()))
                        else {
                            break;
                        };
                        let ids: Vec<&str> = batch.iter().map(|ch| ch.blob.as_str()).collect();
                        objects.each(&ids, opts.max_file_size, |i, object| {
                            self.git_change(
                                &batch[i],
                                object,
                                repo,
                                &mut parents,
                                opts,
                                prefix,
                                c,
                                on_warning,
                            );
                        });
                    }
                });
            }
        });
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn git_change(
        &self,
        change: &git::Change,
        object: git::Object,
        repo: &git::Repo,
        parents: &mut Option<git::Objects>,
        opts: &GitOptions,
        prefix: &str,
        c: &Mutex<Collected>,
        on_warning: &(dyn Fn(&Warning) + Sync),
    ) {
        let path = format!("{prefix}{}", change.path);
        if self.policy.path_allowed(&path) {
            return;
        }
        let data = match object {
            git::Object::Blob(d) => d,
            git::Object::TooLarge(_) => return skipped(c, path, "too large"),
            git::Object::Missing => {
                let msg = format!("blob {} is missing from the object database", change.blob);
                return warn(c, on_warning, path, msg);
            }
            git::Object::Broken(why) => {
                return warn(c, on_warning, path, format!("blob {}: {why}", change.blob));
            }
        };
        if let Some(oid) = git::lfs_pointer(&data) {
            let msg = format!(
                "Git LFS pointer ({oid}): the content is on an LFS server, not in the repository; not scanned"
            );
            return warn(c, on_warning, path, msg);
        }
        let blob = Blob {
            provenance: source::Provenance::Git {
                path,
                blob: change.blob.clone(),
                commit: change.commit.as_deref().cloned(),
                variable: None,
                cell: None,
                output: None,
                field: None,
            },
            data: Data::Owned(data),
        };
        if self.archives.is_some() && source::archive::sniff(&blob.data).is_some() {
            // An archive committed is new content as a whole: every file in it is scanned.
            return self.take(c, &blob, on_warning);
        }
        if !opts.binary && source::fs::is_binary(&blob.data) {
            return skipped(c, blob.provenance.display(), "binary");
        }
        let mut found = self.blob(&blob);
        // Only lines this change added: a secret that stays in a file through later edits
        // belongs to the commit that first wrote it, not to every version after.
        if !found.is_empty() {
            // A parent that cannot be read counts as absent: its lines are reported as added.
            let objects = parents.get_or_insert_with(|| repo.objects());
            let olds: Vec<Vec<u8>> = change
                .parents
                .iter()
                .filter_map(|id| match objects.get(id, None) {
                    git::Object::Blob(d) => Some(d),
                    _ => None,
                })
                .collect();
            let added = git::added_lines(&blob.data, &olds);
            found.retain(|f| (f.line..=f.end_line).any(|l| added.get(l - 1) == Some(&true)));
        }
        self.counted(c, &blob, found);
    }

    /// Scan container images: each config's fields and every layer's files, including files a
    /// later layer deletes. A layer is scanned once per run, however many images share it.
    pub fn images(
        &self,
        refs: &[String],
        opts: &ImageOptions,
        on_warning: &(dyn Fn(&Warning) + Sync),
    ) -> Result<Outcome, image::ImageError> {
        let start = Instant::now();
        let c = Mutex::new(Collected::default());
        // Layer digest -> (the image that scanned it, its whiteouts).
        let mut scanned: HashMap<String, (String, Vec<(String, bool)>)> = HashMap::new();
        for r in refs {
            let img = image::resolve(r, &opts.registry)?;
            for w in &img.warnings {
                warn(&c, on_warning, r.clone(), w.clone());
            }
            let at = |layer: Option<usize>, path: String| source::Provenance::Image {
                image: img.reference.clone(),
                manifest: img.manifest_digest.clone(),
                layer,
                layer_digest: layer.map(|i| img.layers[i].digest.clone()),
                path,
                deleted: false,
                variable: None,
                cell: None,
                output: None,
                field: None,
            };
            match image::config_fields(&img.config) {
                Ok(fields) => {
                    for (field, text) in fields {
                        let blob = Blob {
                            provenance: at(None, field),
                            data: Data::Owned(text.into_bytes()),
                        };
                        self.take(&c, &blob, on_warning);
                    }
                }
                Err(e) => warn(&c, on_warning, format!("{r}!config"), e.to_string()),
            }
            // Layers in parallel; each is one stream, decompressed on its worker.
            let fresh: Vec<usize> = (0..img.layers.len())
                .filter(|&i| !scanned.contains_key(&img.layers[i].digest))
                .collect();
            let whiteouts: Vec<(usize, Vec<(String, bool)>)> = fresh
                .par_iter()
                .map(|&i| (i, self.layer(&img, i, opts, &at, &c, on_warning)))
                .collect();
            for (i, w) in whiteouts {
                scanned.insert(img.layers[i].digest.clone(), (r.clone(), w));
            }
            let mut c = lock(&c);
            // Layers another image scanned first: their findings again, for this image.
            let mut again = Vec::new();
            for (i, l) in img.layers.iter().enumerate() {
                let (first, _) = &scanned[&l.digest];
                if fresh.contains(&i) {
                    continue;
                }
                for f in c.findings.iter().chain(&c.suppressed) {
                    if let source::Provenance::Image {
                        image,
                        layer_digest: Some(d),
                        path,
                        ..
                    } = &f.provenance
                    {
                        if image == first && d == &l.digest {
                            let mut f = f.clone();
                            f.provenance = at(Some(i), path.clone());
                            again.push(f);
                        }
                    }
                }
            }
            self.keep(&mut c, again);
            // Files that a later layer deletes are still in the image: say so.
            let later = |i: usize| -> Vec<(String, bool)> {
                img.layers[i + 1..]
                    .iter()
                    .flat_map(|l| scanned[&l.digest].1.iter().cloned())
                    .collect()
            };
            let c = &mut *c;
            for f in c.findings.iter_mut().chain(c.suppressed.iter_mut()) {
                if let source::Provenance::Image {
                    image,
                    manifest,
                    layer: Some(i),
                    path,
                    deleted,
                    ..
                } = &mut f.provenance
                {
                    if *image == img.reference && *manifest == img.manifest_digest {
                        let file = path.split('!').next().unwrap_or(path);
                        *deleted = image::whited_out(file, &later(*i));
                    }
                }
            }
        }
        Ok(finish(
            c.into_inner().unwrap_or_else(|e| e.into_inner()),
            start,
        ))
    }

    /// One layer's files, scanned as they stream out; returns its whiteouts.
    fn layer(
        &self,
        img: &image::Image,
        i: usize,
        opts: &ImageOptions,
        at: &(dyn Fn(Option<usize>, String) -> source::Provenance + Sync),
        c: &Mutex<Collected>,
        on_warning: &(dyn Fn(&Warning) + Sync),
    ) -> Vec<(String, bool)> {
        let layer = &img.layers[i];
        let name = format!("{}!layer {i} ({})", img.reference, layer.digest);
        let mut whiteouts = Vec::new();
        let r = match img.open_layer(i) {
            Ok(r) => r,
            Err(e) => {
                warn(c, on_warning, name, e.to_string());
                return whiteouts;
            }
        };
        let walked = image::walk_layer(r, layer, opts.max_file_size, &mut |e| match e {
            image::LayerEvent::File { path, data } => {
                let blob = Blob {
                    provenance: at(Some(i), path),
                    data: Data::Owned(data),
                };
                let archive =
                    self.archives.is_some() && source::archive::sniff(&blob.data).is_some();
                if !opts.binary && !archive && source::fs::is_binary(&blob.data) {
                    return skipped(c, blob.provenance.display(), "binary");
                }
                self.take(c, &blob, on_warning);
            }
            image::LayerEvent::Whiteout { path, opaque } => whiteouts.push((path, opaque)),
            image::LayerEvent::SkippedLarge => lock(c).summary.skipped_large += 1,
        });
        match walked {
            Ok(None) => {}
            Ok(Some(mismatch)) => warn(c, on_warning, name, mismatch),
            Err(e) => warn(
                c,
                on_warning,
                name,
                format!("layer unreadable (truncated or corrupt?); files before the fault were scanned: {e}"),
            ),
        }
        whiteouts
    }

    /// Scan standard input: whole when it fits in a chunk, else a chunk at a time (memory
    /// stays bounded whatever its size).
    pub fn stdin(&self, on_warning: &(dyn Fn(&Warning) + Sync)) -> std::io::Result<Outcome> {
        let start = Instant::now();
        let c = Mutex::new(Collected::default());
        let provenance = source::Provenance::Stream {
            name: "<stdin>".into(),
        };
        let mut r = std::io::stdin().lock();
        let mut head = Vec::new();
        (&mut r)
            .take(STREAM_CHUNK as u64 + 1)
            .read_to_end(&mut head)?;
        if head.len() <= STREAM_CHUNK {
            let blob = Blob {
                provenance,
                data: Data::Owned(head),
            };
            self.take(&c, &blob, on_warning);
        } else if let Some(a) = self.archives.as_ref().filter(|_| {
            source::archive::sniff(&head).is_some_and(|k| k != source::archive::Kind::Zip)
        }) {
            let inside = |p| provenance.with_path(p);
            source::archive::expand_stream("<stdin>", head, r, &a.limits, &mut |e| {
                self.archive_event(&c, a, &inside, on_warning, e)
            });
        } else {
            let (found, n, error) = self.chunked(&provenance, head, &mut r, false);
            self.counted_bytes(&c, n, found);
            if let Some(e) = error {
                return Err(e);
            }
        }
        Ok(finish(
            c.into_inner().unwrap_or_else(|e| e.into_inner()),
            start,
        ))
    }
}

/// What `Scanner::images` reads.
#[derive(Debug, Clone, Default)]
pub struct ImageOptions {
    pub registry: image::RegistryOptions,
    pub binary: bool,
    pub max_file_size: Option<u64>,
}

/// What `Scanner::git` reads.
#[derive(Debug, Clone)]
pub struct GitOptions {
    pub select: git::Select,
    /// Scan blobs that look binary too.
    pub binary: bool,
    pub max_file_size: Option<u64>,
    pub threads: usize,
    /// Also scan checked-out submodules (each as its own repository).
    pub submodules: bool,
}

/// Report a per-input problem now and keep it for the report.
fn warn(
    c: &Mutex<Collected>,
    on_warning: &(dyn Fn(&Warning) + Sync),
    path: String,
    message: String,
) {
    let w = Warning { path, message };
    on_warning(&w);
    lock(c).warnings.push(w);
}

/// Count a file not scanned and name it in the summary.
fn skipped(c: &Mutex<Collected>, path: String, reason: &str) {
    let mut c = lock(c);
    match reason {
        "binary" => c.summary.skipped_binary += 1,
        "too large" => c.summary.skipped_large += 1,
        _ => c.summary.skipped_unreadable += 1,
    }
    c.summary.skipped.push(report::Skipped {
        path,
        reason: reason.to_string(),
    });
}

/// What one distinct content holds, cached by its hash.
struct Scanned {
    plain: Vec<Match>,
    decoded: Vec<Decoded>,
}

/// Every span of `s`, plain and decoded: what a context must not show.
fn scanned_spans(s: &Scanned) -> Vec<Match> {
    let decoded = s.decoded.iter().map(|d| d.at);
    s.plain.iter().copied().chain(decoded).collect()
}

/// A match in a decoded view: its encoded span in the blob and the decoded secret.
struct Decoded {
    encoding: crate::decode::Encoding,
    at: Match,
    secret: Vec<u8>,
}

/// Blobs a git worker asks for at once: enough to keep git's pipe full, few enough that
/// workers share the tail of the work evenly.
const GIT_BATCH: usize = 64;

/// Inputs larger than this are scanned in chunks of this size.
const STREAM_CHUNK: usize = source::fs::STREAM_AT as usize;
/// Notebooks larger than this are scanned as plain text: their structure (a position map
/// per byte) costs many times their size.
const NOTEBOOK_MAX: usize = 16 << 20;
/// Bytes shared by neighbouring chunks on each side: more than any match and its context.
const OVERLAP: usize = 2 * MAX_WINDOW;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Outcome {
    /// Two scans' results as one report.
    pub fn merge(self, other: Outcome) -> Outcome {
        let mut c = Collected {
            findings: self.findings,
            suppressed: self.suppressed,
            warnings: self.warnings,
            summary: self.summary,
        };
        c.findings.extend(other.findings);
        c.suppressed.extend(other.suppressed);
        c.warnings.extend(other.warnings);
        c.summary.add(&other.summary);
        let elapsed = c.summary.elapsed + other.summary.elapsed;
        let mut o = finish(c, Instant::now());
        o.summary.elapsed = elapsed;
        o
    }
}

fn finish(mut c: Collected, start: Instant) -> Outcome {
    let order = |a: &Finding, b: &Finding| {
        (a.path(), a.start, &a.rule_id).cmp(&(b.path(), b.start, &b.rule_id))
    };
    c.findings.sort_by(order);
    report::pair_credentials(&mut c.findings);
    crate::validate::annotate_accounts(&mut c.findings);
    c.suppressed.sort_by(order);
    c.warnings.sort_by(|a, b| a.path.cmp(&b.path));
    c.summary.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    c.summary.findings = c.findings.len() as u64;
    c.summary.suppressed = c.suppressed.len() as u64;
    c.summary.warnings = c.warnings.len() as u64;
    c.summary.elapsed = start.elapsed();
    Outcome {
        findings: c.findings,
        suppressed: c.suppressed,
        warnings: c.warnings,
        summary: c.summary,
    }
}
