//! Sending a declarative validator's request with `ureq`: HTTPS to the validator's fixed host
//! (or the operator's override), no redirect followed, no proxy, a timeout per request, a
//! deadline for the batch, at most `concurrency` requests in flight and `rate` a second to one
//! provider, retries with jitter only for rate limits, 5xx and transport errors.

use super::answer::{self, unknown, Response};
use super::{HttpValidator, Request};
use crate::model::Validation;
use crate::validate::{Credential, Options};
use std::io::Read;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Most bytes of an answer read: a "who am I" answer is small; a large one is not that.
const MAX_BODY: u64 = 256 * 1024;

/// Requests spaced at least `gap` apart.
struct Pace {
    next: Mutex<Instant>,
    gap: Duration,
}

impl Pace {
    /// Wait for this request's turn; `false` if that would pass the deadline.
    fn wait(&self, deadline: Instant) -> bool {
        let at = {
            let mut next = crate::sync::lock(&self.next);
            let at = (*next).max(Instant::now());
            *next = at + self.gap;
            at
        };
        if at >= deadline {
            return false;
        }
        std::thread::sleep(at.saturating_duration_since(Instant::now()));
        true
    }
}

fn agent(opts: &Options) -> ureq::Agent {
    ureq::AgentBuilder::new()
        // A redirect is an answer, never followed: a secret goes to its provider's host only.
        .redirects(0)
        // No proxy from anywhere: the request goes straight to the provider.
        .try_proxy_from_env(false)
        .timeout(opts.timeout)
        .user_agent(concat!("leakhound/", env!("CARGO_PKG_VERSION")))
        .build()
}

/// Check each credential (in order) with `v`.
pub(super) fn check_all(
    v: &HttpValidator,
    creds: &[&Credential],
    opts: &Options,
) -> Vec<Validation> {
    let agent = agent(opts);
    let deadline = Instant::now() + opts.deadline;
    let pace = Pace {
        next: Mutex::new(Instant::now()),
        gap: Duration::from_secs_f64(1.0 / v.spec.rate.max(0.001)),
    };
    let next = AtomicUsize::new(0);
    let out: Vec<Mutex<Option<Validation>>> = creds.iter().map(|_| Mutex::new(None)).collect();
    let workers = v
        .spec
        .concurrency
        .min(opts.concurrency)
        .clamp(1, creds.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(c) = creds.get(i) else { break };
                let verdict = one(&agent, v, c, opts, &pace, deadline);
                *crate::sync::lock(&out[i]) = Some(verdict);
            });
        }
    });
    out.into_iter()
        .map(|m| crate::sync::into_inner(m).unwrap_or_else(|| unknown("not checked")))
        .collect()
}

fn one(
    agent: &ureq::Agent,
    v: &HttpValidator,
    c: &Credential,
    opts: &Options,
    pace: &Pace,
    deadline: Instant,
) -> Validation {
    let req = match v.request(c, opts) {
        Ok(r) => r,
        Err(why) => return unknown(why),
    };
    let mut last = String::new();
    for attempt in 0..=opts.retries {
        if attempt > 0 {
            let wait = crate::validate::backoff(attempt);
            if Instant::now() + wait >= deadline {
                break;
            }
            std::thread::sleep(wait);
        }
        if !pace.wait(deadline) {
            return unknown(format!("deadline reached before an answer{}", sep(&last)));
        }
        match send(agent, &req) {
            Ok(resp) => match answer::read(&v.spec, &resp) {
                Ok(verdict) => return verdict,
                Err(why) => last = why,
            },
            Err(why) => last = why,
        }
    }
    unknown(last)
}

/// Revoke `c` with its validator's revoke request: sent once, never retried (a revoke that
/// timed out may still have happened; the check after it says).
pub(super) fn revoke(v: &HttpValidator, c: &Credential, opts: &Options) -> Result<String, String> {
    let spec = v.spec.revoke.as_ref().ok_or("cannot revoke itself")?;
    let req = v.revoke_request(c, opts)?;
    // Named without its query, which may hold the secret.
    let target = format!(
        "{} {}",
        req.method,
        req.url.split('?').next().unwrap_or_default()
    );
    let resp = send(&agent(opts), &req).map_err(|why| format!("{target}: {why}"))?;
    answer::revoked(&spec.answers, &resp)
        .map(|done| format!("{done}: {target}"))
        .map_err(|why| format!("{target}: {why}"))
}

fn sep(last: &str) -> String {
    if last.is_empty() {
        String::new()
    } else {
        format!(" (last: {last})")
    }
}

/// One request; the answer, or why there is none (never the URL, whose query may hold a
/// secret).
fn send(agent: &ureq::Agent, req: &Request) -> Result<Response, String> {
    let mut r = agent.request(&req.method, &req.url);
    for (k, val) in &req.headers {
        r = r.set(k, val);
    }
    let res = match &req.body {
        Some(b) => r.send_string(b),
        None => r.call(),
    };
    let resp = match res {
        Ok(resp) | Err(ureq::Error::Status(_, resp)) => resp,
        Err(ureq::Error::Transport(t)) => {
            return Err(format!(
                "network: {}{}",
                t.kind(),
                t.message().map(|m| format!(": {m}")).unwrap_or_default()
            ))
        }
    };
    let status = resp.status();
    let headers = resp
        .headers_names()
        .into_iter()
        .filter_map(|n| {
            let v = resp.header(&n)?.to_string();
            Some((n.to_ascii_lowercase(), v))
        })
        .collect();
    let mut body = Vec::new();
    if let Err(e) = resp.into_reader().take(MAX_BODY).read_to_end(&mut body) {
        return Err(format!("network: reading the answer: {}", e.kind()));
    }
    Ok(Response {
        status,
        headers,
        body,
    })
}
