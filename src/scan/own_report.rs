//! leakhound's own reports, recognised by their content: a report written into a scanned
//! tree (`-o report.json`, a CI artifact) would otherwise be flagged on the next scan, for
//! the identifiers every report shows in full (an AWS key id is public; see
//! `Finding::public`). Recognised by header, never by file name, and only public findings
//! are dropped: a report written with `--show-secrets`, or a merge holding secrets, still
//! shows its secrets as findings, because there they are a leak of their own.
//!
//! The shapes are those `report::{json, sarif, human}` write; tests/it/cli.rs writes every
//! format into a tree and scans it again, so a change of shape there fails that test.

use memchr::memmem;

/// Whether `data` is a report leakhound wrote, in any of its formats.
pub fn is_own_report(data: &[u8]) -> bool {
    let head = &data[..data.len().min(512)];
    let start = head.trim_ascii_start();
    if start.starts_with(b"{") {
        // JSON (`{"tool": "leakhound", ...` first) and SARIF (the driver's name, after the
        // results in key order, so anywhere in the document).
        if memmem::find(head, br#""tool": "leakhound""#).is_some() {
            return true;
        }
        if memmem::find(head, b"sarif-2.1.0").is_some() {
            return memmem::find(data, br#""name": "leakhound""#).is_some();
        }
        // JSONL: one finding per line, each with its rule, fingerprint and redaction flag.
        let first = start.split(|&b| b == b'\n').next().unwrap_or_default();
        return first.starts_with(br#"{"rule":""#)
            && memmem::find(first, br#""fingerprint":""#).is_some()
            && memmem::find(first, br#""redacted":"#).is_some();
    }
    human_summary(data)
}

/// The human report ends with its summary line: `N finding(s) in M file(s) (SIZE) in S.SSs`.
fn human_summary(data: &[u8]) -> bool {
    let tail = &data[data.len().saturating_sub(512)..];
    let Some(last) = tail
        .trim_ascii_end()
        .rsplit(|&b| b == b'\n')
        .next()
        .and_then(|l| std::str::from_utf8(l).ok())
    else {
        return false;
    };
    let words: Vec<&str> = last.split(' ').collect();
    matches!(
        words.as_slice(),
        [n, "finding" | "findings", "in", m, "file" | "files", ..]
            if n.parse::<u64>().is_ok() && m.parse::<u64>().is_ok()
    ) && last.split(", ").next().is_some_and(|w| {
        w.rsplit(" in ")
            .next()
            .and_then(|t| t.strip_suffix('s'))
            .is_some_and(|t| t.parse::<f64>().is_ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_is_recognised_and_look_alikes_are_not() {
        assert!(is_own_report(
            b"{\n  \"tool\": \"leakhound\",\n  \"version\": \"1\"}"
        ));
        assert!(is_own_report(
            b"{\"rule\":\"aws.access-key-id\",\"name\":\"x\",\"redacted\":false,\"fingerprint\":\"ab\"}\n"
        ));
        assert!(is_own_report(
            b"{\n  \"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\",\n  \"runs\": [{\"tool\": {\"driver\": {\"name\": \"leakhound\"}}}]}"
        ));
        assert!(is_own_report(
            b"x.env\n  1:5  aws.access-key-id  ...\n\n2 findings in 1 file (1.2 KiB) in 0.01s, 1 warnings\n"
        ));
        assert!(!is_own_report(b"{\"tool\": \"gitleaks\"}"));
        assert!(!is_own_report(
            b"{\"$schema\": \"https://json.schemastore.org/sarif-2.1.0.json\", \"name\": \"other\"}"
        ));
        assert!(!is_own_report(
            b"AWS_ACCESS_KEY_ID=x\n2 findings in 1 file\n"
        ));
        assert!(!is_own_report(b""));
    }
}
