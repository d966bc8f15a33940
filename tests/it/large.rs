//! Issue 31: a large file is scanned in chunks on every core. Its findings are the ones the
//! whole file holds, once each, at the lines and columns a reader of the whole file counts,
//! whatever the number of workers.

use crate::util::{fake_github, Sandbox};

/// About 70 MiB of text with GitHub tokens planted densely around every MiB (so around
/// every chunk's edges and the ends of its own part, wherever those fall), each after a
/// run of multi-byte characters so a column counts characters, not bytes. The test counts
/// each token's line and column itself, as it writes them.
#[test]
fn large_file_chunks_keep_every_finding_at_its_place() {
    let sb = Sandbox::new();
    let filler = "ordinary log text, nothing to see here, just filler bytes\n";
    let mut text = String::with_capacity(72 << 20);
    let mut expected = Vec::new();
    // The planted lines alone, in a small file scanned whole: which tokens the rules keep
    // (a random token can fail a filter) is theirs to say, not the chunking's.
    let mut alone = String::new();
    let (mut line, mut seed) = (1u64, 1u64);
    while text.len() < (70 << 20) {
        let into_mib = text.len() % (1 << 20);
        let near_edge = !((40 << 10)..(1 << 20) - (40 << 10)).contains(&into_mib);
        if near_edge && seed % 2 == 0 || seed % 97 == 0 {
            let lead = format!("é€ k{seed} = ");
            let column = lead.chars().count() as u64 + 1;
            expected.push((line, column));
            let planted = format!("{lead}{}\n", fake_github(seed));
            text.push_str(&planted);
            alone.push_str(&planted);
        } else {
            text.push_str(filler);
        }
        line += 1;
        seed += 1;
    }
    sb.write("big.log", &text);
    sb.write("alone.txt", &alone);
    let kept: std::collections::HashSet<u64> = sb
        .run(&["scan", "alone.txt", "--format", "jsonl"])
        .jsonl()
        .iter()
        .filter(|f| f["rule"] == "github.pat")
        .map(|f| f["line"].as_u64().unwrap())
        .collect();
    let expected: Vec<(u64, u64)> = (1..)
        .zip(expected)
        .filter(|(i, _)| kept.contains(i))
        .map(|(_, e)| e)
        .collect();
    assert!(expected.len() > 500, "{}", expected.len());
    for threads in ["1", "2", "3"] {
        let r = sb.run(&[
            "scan",
            "big.log",
            "-j",
            threads,
            "--max-file-size",
            "0",
            "--format",
            "jsonl",
        ]);
        assert_eq!(r.code, 1, "{}", r.stderr);
        let found: Vec<(u64, u64)> = r
            .jsonl()
            .iter()
            .filter(|f| f["rule"] == "github.pat")
            .map(|f| (f["line"].as_u64().unwrap(), f["column"].as_u64().unwrap()))
            .collect();
        // The first place they part, not two lists of thousands.
        let differ = found.iter().zip(&expected).position(|(f, e)| f != e);
        assert_eq!(
            differ.map(|i| (found[i], expected[i])),
            None,
            "-j {threads}: found (line, column) against the planted one"
        );
        assert_eq!(found.len(), expected.len(), "-j {threads}: once each");
    }
}

/// A large file's findings below `--min-confidence` are let go chunk by chunk (only their
/// count and values are kept, issue 31's memory bound), and still do what they did whole:
/// each one's value masks a reported finding's context in another chunk, where no rule
/// matches it, and the summary counts every one left out.
#[test]
fn large_file_findings_below_the_report_still_mask_and_are_counted() {
    let sb = Sandbox::new();
    let filler = "ordinary log text, nothing to see here, just filler bytes\n";
    let mut text = String::with_capacity(68 << 20);
    // A weak password (a `low` finding under its name), and 20 MiB later, in another chunk,
    // a reported token with the same value bare in a comment.
    let weak: Vec<String> = (0..6)
        .map(|i| format!("tulipgarden{}{i}", 40 + i))
        .collect();
    let mut planted = 0;
    while text.len() < (66 << 20) {
        let mib = text.len() >> 20;
        if mib % 10 == 1 && planted < weak.len() && text.len() % (1 << 20) > 4096 {
            text.push_str(&format!("db_password = \"{}\"\n", weak[planted]));
            planted += 1;
        }
        if mib % 10 == 1 + 2 && text.len() % (1 << 20) < 64 && planted > 0 {
            let w = &weak[planted - 1];
            text.push_str(&format!(
                "GITHUB_TOKEN = {}  # {w}\n",
                fake_github(planted as u64)
            ));
        }
        text.push_str(filler);
    }
    sb.write("big.log", &text);
    let scan = |min: &str| {
        let r = sb.run(&[
            "scan",
            "big.log",
            "--max-file-size",
            "0",
            "--min-confidence",
            min,
            "--format",
            "json",
        ]);
        assert_eq!(r.code, 1, "{}", r.stderr);
        r.json()
    };
    let (default, low) = (scan("medium"), scan("low"));
    let tokens: Vec<&serde_json::Value> = default["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "github.pat")
        .collect();
    assert!(tokens.len() >= 3, "{}", tokens.len());
    for f in &tokens {
        let context = f["context"].as_str().unwrap();
        assert!(
            weak.iter().all(|w| !context.contains(w.as_str())),
            "a value found below the report is shown: {context}"
        );
    }
    let count = |v: &serde_json::Value| v["findings"].as_array().unwrap().len() as u64;
    assert!(count(&low) > count(&default));
    assert_eq!(
        default["summary"]["below_confidence"].as_u64(),
        Some(count(&low) - count(&default)),
        "the summary counts every finding left out"
    );
}

/// UTF-16 text past the decoded views' limit (16 MiB) and past the size a file is read
/// whole at (64 MiB, then in chunks): read as the text it is, not as bytes whose NULs hide
/// every keyword. Both files find what the same text in UTF-8 finds, at the same lines and
/// columns (each token follows multi-byte characters).
#[test]
fn large_utf16_text_is_read_as_text() {
    let sb = Sandbox::new();
    let filler = "ordinary log text, nothing to see here, just filler bytes\n";
    let (mut text, mut seed) = (String::with_capacity(34 << 20), 1u64);
    while text.len() < (33 << 20) + (1 << 19) {
        if seed % 89 == 0 {
            text.push_str(&format!("é€ k{seed} = {}\n", fake_github(seed)));
        } else {
            text.push_str(filler);
        }
        seed += 1;
    }
    let wide = |text: &str, little: bool| -> Vec<u8> {
        let bom: [u8; 2] = if little { [0xFF, 0xFE] } else { [0xFE, 0xFF] };
        let units = text.encode_utf16().flat_map(move |u| match little {
            true => u.to_le_bytes(),
            false => u.to_be_bytes(),
        });
        bom.into_iter().chain(units).collect()
    };
    // A stretch that ends on a line, for the file read whole.
    let mid = &text[..text[..20 << 20].rfind('\n').unwrap() + 1];
    sb.write("text.log", &text);
    sb.write("mid.txt", mid);
    std::fs::write(sb.path("wide.log"), wide(&text, true)).unwrap();
    std::fs::write(sb.path("mid-wide.txt"), wide(mid, false)).unwrap();
    assert!(std::fs::metadata(sb.path("wide.log")).unwrap().len() > 64 << 20);
    let places = |file: &str| -> Vec<(u64, u64)> {
        let r = sb.run(&["scan", file, "--max-file-size", "0", "--format", "jsonl"]);
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        let mut found: Vec<(u64, u64)> = r
            .jsonl()
            .iter()
            .filter(|f| f["rule"] == "github.pat")
            .map(|f| (f["line"].as_u64().unwrap(), f["column"].as_u64().unwrap()))
            .collect();
        found.sort_unstable();
        found
    };
    let (whole, mid_found) = (places("text.log"), places("mid.txt"));
    assert!(
        whole.len() > 1000 && mid_found.len() > 500,
        "{} {}",
        whole.len(),
        mid_found.len()
    );
    assert_eq!(places("wide.log"), whole, "UTF-16 read in chunks");
    assert_eq!(places("mid-wide.txt"), mid_found, "UTF-16 read whole");
}
