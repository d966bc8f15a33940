//! Notebooks: secrets in sources and stream outputs with cell provenance and the file's own
//! line numbers; PNG outputs skipped; broken notebooks scanned as text; redact-notebook.

use crate::util::{fake_aws, fake_github, Sandbox};
use serde_json::json;

fn notebook(secret_in_source: &str, secret_in_output: &str) -> String {
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let nb = json!({
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Analysis\n", "Load the data."]},
            {"cell_type": "code", "execution_count": 1, "metadata": {},
             "source": ["import boto3\n", format!("client = boto3.client('s3', aws_secret_access_key=\"{secret_in_source}\")\n")],
             "outputs": [
                 {"output_type": "stream", "name": "stdout", "text": ["connected\n", format!("debug: token={secret_in_output}\n")]},
                 {"output_type": "display_data", "metadata": {}, "data": {"image/png": png, "text/plain": ["<Figure size 640x480>"]}}
             ]}
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4, "nbformat_minor": 5
    });
    serde_json::to_string_pretty(&nb).unwrap()
}

#[test]
fn findings_name_cell_output_and_file_line() {
    let sb = Sandbox::new();
    let (_, secret) = fake_aws(500);
    let gh = fake_github(500);
    let text = notebook(&secret, &gh);
    sb.write("analysis.ipynb", &text);
    let r = sb.run(&["scan", "--format", "jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let f = r.jsonl();
    assert_eq!(f.len(), 2, "{:#?}", f);
    let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;
    assert_eq!(f[0]["rule"], "aws.secret-access-key");
    assert_eq!(f[0]["provenance"]["cell"], 1);
    assert_eq!(f[0]["provenance"]["field"], "source");
    assert!(f[0]["provenance"]["output"].is_null());
    assert_eq!(f[0]["line"].as_u64().unwrap() as usize, line_of(&secret));
    assert_eq!(f[1]["rule"], "github.pat");
    assert_eq!(f[1]["provenance"]["output"], 0);
    assert_eq!(f[1]["provenance"]["field"], "text");
    assert_eq!(f[1]["line"].as_u64().unwrap() as usize, line_of(&gh));
}

/// A notebook of one code cell with one display output holding `data`.
fn display_notebook(data: serde_json::Value) -> String {
    serde_json::to_string_pretty(&json!({
        "cells": [{"cell_type": "code", "execution_count": 1, "metadata": {},
                   "source": ["plot()\n"],
                   "outputs": [{"output_type": "display_data", "metadata": {}, "data": data}]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5
    }))
    .unwrap()
}

#[test]
fn image_outputs_are_skipped_even_with_a_secret_shaped_string_in_them() {
    use base64::Engine as _;
    let sb = Sandbox::new();
    let gh = fake_github(504);
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    // The token pasted into the image data, and inside a PNG text chunk, base64 like the rest.
    let mut bytes = base64::engine::general_purpose::STANDARD
        .decode(png)
        .unwrap();
    bytes.extend_from_slice(format!("tEXtComment\0token={gh}").as_bytes());
    let chunk = base64::engine::general_purpose::STANDARD.encode(&bytes);
    sb.write(
        "plots/raw.ipynb",
        display_notebook(
            json!({"image/png": format!("{}{gh}{}", &png[..40], &png[40..]),
                                "text/plain": ["<Figure size 640x480>"]}),
        ),
    );
    sb.write(
        "plots/chunk.ipynb",
        display_notebook(json!({"image/png": chunk, "text/plain": ["<Figure size 640x480>"]})),
    );
    let r = sb.run(&["scan", "plots", "--format", "jsonl"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.jsonl().is_empty(), "{}", r.stdout);
    // The same token in the text beside the image is found: the fixture itself can fail.
    sb.write(
        "text/shown.ipynb",
        display_notebook(json!({"image/png": png, "text/plain": [format!("token={gh}")]})),
    );
    let r = sb.run(&["scan", "text", "--format", "jsonl"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let f = r.jsonl();
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0]["rule"], "github.pat");
    assert_eq!(f[0]["provenance"]["field"], "text/plain");
}

#[test]
fn escaped_secret_is_found_and_maps_to_its_span() {
    // `\/` and `\u0041` in the JSON text decode to the secret; the raw span is reported.
    let sb = Sandbox::new();
    let gh = fake_github(501);
    let escaped = format!("{}\\u00{:02x}{}", &gh[..10], gh.as_bytes()[10], &gh[11..]);
    let raw = format!("{{\"cells\": [{{\"cell_type\": \"code\", \"source\": \"t = '{escaped}'\", \"outputs\": []}}]}}");
    sb.write("esc.ipynb", &raw);
    let r = sb.run(&["scan", "--format", "jsonl", "--show-secrets"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let f = &r.jsonl()[0];
    assert_eq!(f["rule"], "github.pat");
    let start = f["start"].as_u64().unwrap() as usize;
    assert_eq!(&raw[start..start + 10], &gh[..10]);
}

#[test]
fn broken_notebook_falls_back_to_text_with_a_warning() {
    let sb = Sandbox::new();
    let gh = fake_github(502);
    sb.write(
        "broken.ipynb",
        format!("{{\"cells\": [{{\"source\": \"t = {gh}\"  <<truncated"),
    );
    let r = sb.run(&["scan", "--format", "json"]);
    assert_eq!(r.code, 1);
    let j = r.json();
    assert_eq!(j["findings"][0]["rule"], "github.pat");
    assert!(j["warnings"][0]["message"]
        .as_str()
        .unwrap()
        .contains("not valid JSON"));
    assert!(r.stderr.contains("broken.ipynb"), "{}", r.stderr);
}

#[test]
fn redact_notebook_masks_and_stays_valid() {
    let sb = Sandbox::new();
    let (_, secret) = fake_aws(503);
    let gh = fake_github(503);
    sb.write("in.ipynb", notebook(&secret, &gh));
    let r = sb.run(&["redact-notebook", "in.ipynb", "-o", "out.ipynb"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("2 secret(s) masked"), "{}", r.stderr);
    let out = std::fs::read_to_string(sb.path("out.ipynb")).unwrap();
    assert!(!out.contains(&secret) && !out.contains(&gh));
    let v: serde_json::Value = serde_json::from_str(&out).expect("still JSON");
    let src = v["cells"][1]["source"][1].as_str().unwrap();
    assert!(src.contains("[REDACTED:aws.secret-access-key]"), "{src}");
    // The rest is untouched, images included.
    let orig: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sb.path("in.ipynb")).unwrap()).unwrap();
    assert_eq!(v["cells"][1]["outputs"][1], orig["cells"][1]["outputs"][1]);
    assert_eq!(sb.run(&["scan", "out.ipynb"]).code, 0);
}

#[test]
fn redact_notebook_masks_what_scan_finds_in_decoded_views_too() {
    use base64::Engine as _;
    let sb = Sandbox::new();
    let gh = fake_github(504);
    // A token printed base64-encoded by a cell: `scan` finds it in the decoded view, so the
    // redacted copy must not keep it.
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("GITHUB_TOKEN={gh}\n"));
    sb.write("in.ipynb", notebook("not-a-secret", &encoded));
    assert_eq!(sb.run(&["scan", "in.ipynb"]).code, 1);
    let r = sb.run(&["redact-notebook", "in.ipynb", "-o", "out.ipynb"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = std::fs::read_to_string(sb.path("out.ipynb")).unwrap();
    assert!(!out.contains(&encoded[..24]), "{out}");
    serde_json::from_str::<serde_json::Value>(&out).expect("still JSON");
    assert_eq!(sb.run(&["scan", "out.ipynb"]).code, 0);
}

/// nbformat writes a multi-line field as a list of strings, which every notebook reader shows
/// joined: a token cut between two of them is the whole token to a reader, so `scan` reports
/// it as it is read (its checksum holds: high) and the maskers mask both pieces.
#[test]
fn a_token_cut_between_two_lines_of_a_field_is_read_whole() {
    let sb = Sandbox::new();
    let gh = fake_github(505);
    let nb = serde_json::to_string(&json!({
        "cells": [{"cell_type": "code", "execution_count": 1, "metadata": {},
                   "source": ["print(tok)\n"],
                   "outputs": [{"output_type": "stream", "name": "stdout",
                                "text": [format!("token {}", &gh[..12]), format!("{}\n", &gh[12..])]}]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5
    }))
    .unwrap();
    sb.write("split.ipynb", &nb);
    let r = sb.run(&["scan", "split.ipynb", "--format", "jsonl", "--show-secrets"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let f = r.jsonl();
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0]["rule"], "github.pat");
    assert_eq!(f[0]["secret"], gh.as_str());
    assert_eq!(f[0]["confidence"], "high");
    assert_eq!(f[0]["provenance"]["field"], "text");

    let r = sb.run(&["redact-notebook", "split.ipynb", "-o", "out.ipynb"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = std::fs::read_to_string(sb.path("out.ipynb")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&out).expect("still JSON");
    assert_eq!(
        v["cells"][0]["outputs"][0]["text"],
        json!(["token [REDACTED:github.pat]", "[REDACTED:github.pat]\n"])
    );

    let r = sb.run(&["scrub", "--force", "split.ipynb"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let scrubbed = std::fs::read_to_string(sb.path("split.ipynb")).unwrap();
    assert_eq!(scrubbed, out, "scrub and redact-notebook mask alike");
}

/// A program that flushes mid-line leaves two stream outputs in a row on one stream, which
/// Jupyter shows as one text: a token cut between them is masked in both, and the outputs'
/// `name` and `output_type` stay as they were.
#[test]
fn a_token_cut_between_two_stream_outputs_is_masked_in_both() {
    let sb = Sandbox::new();
    let gh = fake_github(506);
    let out = |name: &str, text: serde_json::Value| json!({"output_type": "stream", "name": name, "text": text});
    let nb = serde_json::to_string(&json!({
        "cells": [{"cell_type": "code", "execution_count": 1, "metadata": {},
                   "source": "print('token', tok[:15], end='', flush=True); print(tok[15:])",
                   "outputs": [out("stdout", json!(["hello\n", format!("token {}", &gh[..15])])),
                               out("stdout", json!(format!("{}\n", &gh[15..])))]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5
    }))
    .unwrap();
    sb.write("flushed.ipynb", &nb);
    let r = sb.run(&["redact-notebook", "flushed.ipynb", "-o", "out.ipynb"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(sb.path("out.ipynb")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).expect("still JSON");
    assert_eq!(
        v["cells"][0]["outputs"],
        json!([
            out("stdout", json!(["hello\n", "token [REDACTED:github.pat]"])),
            out("stdout", json!("[REDACTED:github.pat]\n"))
        ]),
        "{text}"
    );
}
