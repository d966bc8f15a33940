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

/// Base64 is decoded two layers deep and no deeper: a token encoded twice is found, the
/// same token encoded three or ten times is not (src/decode counts the views and bytes).
#[test]
fn decoding_is_bounded() {
    let sb = Sandbox::new();
    let gh = fake_github(601);
    let mut s = format!("t={gh}");
    for layers in 1..=10 {
        s = b64(s.as_bytes());
        if ![2, 3, 10].contains(&layers) {
            continue;
        }
        let name = format!("layers{layers}.txt");
        sb.write(&name, format!("{s}\n"));
        let r = sb.run(&["scan", &name, "--format", "jsonl"]);
        let want = if layers <= 2 { 1 } else { 0 };
        assert_eq!(r.code, want, "{layers} layers: {}{}", r.stdout, r.stderr);
    }
    // Random base64 (binary when decoded) gives nothing.
    let mut rng = crate::synth::Rng::new(602);
    let noise: Vec<u8> = (0..30_000).map(|_| rng.next() as u8).collect();
    sb.write("noise.txt", b64(&noise));
    assert_eq!(sb.run(&["scan", "noise.txt"]).code, 0);
}

/// A fake OpenAI project key (164 characters), random from `seed`.
fn fake_openai(seed: u64) -> String {
    let mut r = crate::synth::Rng::new(seed);
    let half = |r: &mut crate::synth::Rng| r.chars(crate::synth::B64URL, 74);
    format!("sk-proj-{}T3BlbkFJ{}", half(&mut r), half(&mut r))
}

/// `text` as UTF-16 with a byte-order mark, in either byte order.
fn utf16(text: &str, little: bool) -> Vec<u8> {
    let bom: [u8; 2] = if little { [0xFF, 0xFE] } else { [0xFE, 0xFF] };
    let units = text.encode_utf16().flat_map(move |u| match little {
        true => u.to_le_bytes(),
        false => u.to_be_bytes(),
    });
    bom.into_iter().chain(units).collect()
}

/// Issue 12, item 5: in UTF-16 text a finding's line, column and context are the decoded
/// text's (a column counts characters, not the bytes of two-byte units, and the context is
/// the line a person reads); `start..end` stay byte offsets in the file.
#[test]
fn utf16_columns_count_characters_and_contexts_are_the_decoded_line() {
    let sb = Sandbox::new();
    let key = fake_openai(610);
    let gh = fake_github(611);
    let lines = [
        "héllo wörld".to_string(),
        format!("token = \"{key}\""),
        // A character outside the BMP (two UTF-16 units, four UTF-8 bytes) counts as one.
        format!("🔑 gh = {gh}"),
        format!("token = \"{}\"  # leakhound:allow", fake_openai(612)),
    ];
    let text = lines.join("\n") + "\n";
    for little in [true, false] {
        let name = if little { "le.txt" } else { "be.txt" };
        let bytes = utf16(&text, little);
        sb.write(name, &bytes);
        let run = |show: bool| {
            let mut args = vec!["scan", name, "--format", "jsonl"];
            if show {
                args.push("--show-secrets");
            }
            let r = sb.run(&args);
            assert_eq!(r.code, 1, "{name}: {}", r.stderr);
            r.jsonl()
        };
        let found = run(false);
        let got: Vec<(&str, u64, u64, &str)> = found
            .iter()
            .map(|f| {
                (
                    f["rule"].as_str().unwrap(),
                    f["line"].as_u64().unwrap(),
                    f["column"].as_u64().unwrap(),
                    f["context"].as_str().unwrap(),
                )
            })
            .collect();
        let want = [
            ("openai.api-key", 2, 10, "token = \"sk-p********\""),
            ("github.pat", 3, 8, "🔑 gh = ghp_********"),
        ];
        assert_eq!(got, want, "{name}: the allowed line is not reported");
        // start..end: the secret's bytes in the file, as UTF-16 (after the BOM).
        let shown = run(true);
        for f in &shown {
            let (s, e) = (f["start"].as_u64().unwrap(), f["end"].as_u64().unwrap());
            let secret = f["secret"].as_str().unwrap();
            assert_eq!(&bytes[s as usize..e as usize], &utf16(secret, little)[2..]);
            assert_eq!(f["encoding"], "utf16", "{f:#}");
        }
        assert_eq!(shown[0]["start"], 2 + 2 * (12 + 9), "{name}");
        assert_eq!(shown[0]["context"], format!("token = \"{key}\""));
    }
    // The human report shows the same line:column and decoded context.
    let human = sb.run(&["scan", "le.txt"]);
    assert!(human.stdout.contains("2:10"), "{}", human.stdout);
    assert!(
        human.stdout.contains("token = \"sk-p********\""),
        "{}",
        human.stdout
    );
}

/// A UTF-16 `.env` (as PowerShell writes one) names each finding's variable.
#[test]
fn a_utf16_env_file_names_its_variables() {
    let sb = Sandbox::new();
    let (id, secret) = fake_aws(613);
    let text =
        format!("PATH=C:\\Windows\r\nAWS_ACCESS_KEY_ID={id}\r\nAWS_SECRET_ACCESS_KEY={secret}\r\n");
    sb.write("ps/prod.env", utf16(&text, true));
    let found = scan_one(&sb, "ps/prod.env");
    let vars: Vec<(&str, u64, u64)> = found
        .iter()
        .map(|f| {
            (
                f["provenance"]["variable"].as_str().unwrap_or("<none>"),
                f["line"].as_u64().unwrap(),
                f["column"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        vars,
        [
            ("AWS_ACCESS_KEY_ID", 2, 19),
            ("AWS_SECRET_ACCESS_KEY", 3, 23)
        ]
    );
    assert!(found[0]["credential_set"].is_string(), "{:#}", found[0]);
    assert_eq!(found[0]["credential_set"], found[1]["credential_set"]);
}
