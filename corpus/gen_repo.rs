//! Generate a benchmark git repository: COMMITS commits that add, edit, rename and delete
//! files, some planting fake credentials and some deleting them again; and `truth.jsonl`
//! listing each planted secret with the commit that introduced it.
//!
//!     cargo run --release --example gen-repo -- OUT_DIR [COMMITS=2000] [SEED=1]
//!
//! The repository is written to OUT_DIR/repo. Every credential in it is random.

#[path = "history.rs"]
mod history;
#[path = "synth.rs"]
mod synth;

use std::io::Write;
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first().map(PathBuf::from) else {
        eprintln!("usage: gen-repo OUT_DIR [COMMITS] [SEED]");
        std::process::exit(2);
    };
    let commits: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let truths = history::generate(&out.join("repo"), commits, seed).unwrap_or_else(|e| {
        eprintln!("gen-repo: {e}");
        std::process::exit(1)
    });
    let mut f = std::io::BufWriter::new(std::fs::File::create(out.join("truth.jsonl")).unwrap());
    let deleted = truths.iter().filter(|t| t.deleted).count();
    for t in &truths {
        let line = serde_json::json!({
            "commit": t.commit, "path": t.path, "rule": t.rule, "secret": t.secret,
            "deleted": t.deleted,
        });
        writeln!(f, "{line}").unwrap();
    }
    f.flush().unwrap();
    eprintln!(
        "{commits} commits, {} planted secrets ({deleted} deleted later) in {}",
        truths.len(),
        out.display()
    );
}
