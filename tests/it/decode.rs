//! Secrets whose encoded form differs from the plain one: each decoder finds them and maps
//! them back to the encoded span, with the decoded secret's fingerprint.

use crate::util::{fake_aws, fake_github, Sandbox};
use base64::Engine as _;

fn b64(s: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn scan_one(sb: &Sandbox, file: &str) -> Vec<serde_json::Value> {
    let r = sb.run(&["scan", file, "--format", "jsonl", "--show-secrets"]);
    // A normal exit, with or without findings: a death by signal is code -1 and fails here.
    assert!(r.code == 0 || r.code == 1, "exit {}: {}", r.code, r.stderr);
    r.jsonl()
}

#[test]
fn each_encoding_is_decoded_and_mapped_back() {
    let sb = Sandbox::new();
    let gh = fake_github(600);
    let (_, secret) = fake_aws(600);
    let plain_fp = {
        sb.write("plain.txt", format!("t = {gh}\n"));
        scan_one(&sb, "plain.txt")[0]["fingerprint"].clone()
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "k8s.yaml",
            format!(
                "kind: Secret\ndata:\n  gh: {}\n",
                b64(format!("token={gh}").as_bytes())
            )
            .into_bytes(),
            "base64",
        ),
        (
            "nested.txt",
            format!(
                "blob {}\n",
                b64(b64(format!("config = {gh}").as_bytes()).as_bytes())
            )
            .into_bytes(),
            "base64",
        ),
        (
            "url.log",
            format!("GET /cb?code=1&t={}%5F{}\n", &gh[..3], &gh[4..]).into_bytes(),
            "percent",
        ),
        (
            "esc.json",
            format!("{{\"t\": \"{}\\u005f{}\"}}\n", &gh[..3], &gh[4..]).into_bytes(),
            "escapes",
        ),
        (
            "py.txt",
            format!("t = b'{}\\x5f{}'\n", &gh[..3], &gh[4..]).into_bytes(),
            "escapes",
        ),
        (
            "ps.txt",
            {
                let mut v = vec![0xFF, 0xFE];
                v.extend(
                    format!("Name   Value\r\nGH     {gh}\r\n")
                        .encode_utf16()
                        .flat_map(|u| u.to_le_bytes()),
                );
                v
            },
            "utf16",
        ),
        (
            "nobom.txt",
            format!("token: {gh}\n")
                .encode_utf16()
                .flat_map(|u| u.to_le_bytes())
                .collect(),
            "utf16",
        ),
    ];
    for (file, bytes, encoding) in cases {
        sb.write(file, &bytes);
        let f = scan_one(&sb, file);
        let hit = f
            .iter()
            .find(|x| x["rule"] == "github.pat")
            .unwrap_or_else(|| panic!("{file}: {f:#?}"));
        assert_eq!(hit["encoding"], encoding, "{file}");
        assert_eq!(hit["secret"], gh.as_str(), "{file}: the decoded secret");
        assert_eq!(
            hit["fingerprint"], plain_fp,
            "{file}: same secret, same fingerprint"
        );
        let (s, e) = (
            hit["start"].as_u64().unwrap() as usize,
            hit["end"].as_u64().unwrap() as usize,
        );
        assert!(s < e && e <= bytes.len(), "{file}: span {s}..{e}");
        assert_eq!(
            hit["line"],
            if file == "ps.txt" {
                2
            } else if file == "k8s.yaml" {
                3
            } else {
                1
            },
            "{file}"
        );
    }
    // An AWS secret in a UTF-16 environment dump, as PowerShell writes it.
    let ps: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(
            format!("AWS_SECRET_ACCESS_KEY={secret}\r\n")
                .encode_utf16()
                .flat_map(|u| u.to_le_bytes()),
        )
        .collect();
    sb.write("env.ps1.txt", &ps);
    let f = scan_one(&sb, "env.ps1.txt");
    assert_eq!(f[0]["rule"], "aws.secret-access-key");
    assert_eq!(f[0]["secret"], secret.as_str());
}

#[test]
fn decoding_is_bounded() {
    let sb = Sandbox::new();
    let gh = fake_github(601);
    // Base64 nested ten deep: decoded to depth 2 only, quickly, without error.
    let mut s = format!("t={gh}");
    for _ in 0..10 {
        s = b64(s.as_bytes());
    }
    sb.write("bomb.txt", format!("{s}\n"));
    let started = std::time::Instant::now();
    let r = sb.run(&["scan", "bomb.txt", "--format", "jsonl"]);
    assert_eq!(r.code, 0, "too deep to decode: {}", r.stdout);
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // Random base64 (binary when decoded) gives nothing.
    let mut rng = crate::synth::Rng::new(602);
    let noise: Vec<u8> = (0..30_000).map(|_| rng.next() as u8).collect();
    sb.write("noise.txt", b64(&noise));
    assert_eq!(sb.run(&["scan", "noise.txt"]).code, 0);
}
