//! Engine throughput with the full rule set: on source-like text (the common case) and on
//! text dense with keyword hits (the prefilter's worst case). `cargo bench --bench engine`.

#[path = "../corpus/synth.rs"]
mod synth;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use leakhound::engine::Engine;

fn source_like(size: usize) -> Vec<u8> {
    synth::text(&mut synth::Rng::new(7), size, 400)
        .0
        .into_bytes()
}

/// Every line carries keywords that fire rules but mostly fail confirmation.
fn keyword_dense(size: usize) -> Vec<u8> {
    let mut rng = synth::Rng::new(8);
    let lines = [
        "token = get_token(session)  # refresh the token before the secret expires",
        "password_field = form.password.data; api_key_name = 'X-API-KEY'",
        "url = \"https://api.internal/v1/items?page=2\"  // see https://docs.internal/",
        "const secret = process.env.SECRET; const apiKey = config.apiKey;",
        "AKIA is the prefix of long-term AWS key ids; ASIA of temporary ones",
        "header = \"eyJhbGciOi\" + rest  # not a JWT on its own",
        "sk_live_ and ghp_ and xoxb- are token prefixes named in docs",
    ];
    let mut out = String::with_capacity(size + 128);
    while out.len() < size {
        out.push_str(lines[rng.below(lines.len())]);
        out.push('\n');
    }
    out.into_bytes()
}

fn bench(c: &mut Criterion) {
    let engine = Engine::new(
        leakhound::rules::builtin(),
        leakhound::engine::FingerprintKey::ephemeral(),
    )
    .unwrap();
    let mut g = c.benchmark_group("engine");
    g.sample_size(10);
    for (name, data) in [
        ("source-like", source_like(32 << 20)),
        ("keyword-dense", keyword_dense(8 << 20)),
    ] {
        g.throughput(Throughput::Bytes(data.len() as u64));
        // Single-threaded: one chunk, one core.
        g.bench_function(format!("{name}/1-core"), |b| {
            b.iter(|| engine.scan_chunked(&data, usize::MAX))
        });
    }
    g.finish();
}

/// The decoded views a scan makes of every input before the engine sees them
/// (`decode::views`: base64 runs, escapes, percent, UTF-16, ANSI). On source-like text
/// almost nothing decodes, so this is the cost of looking; on base64-dense text (a
/// Kubernetes Secret's data, a minified bundle with inline assets) it is the cost of
/// decoding too. Inputs stay under `decode`'s 16 MiB limit, past which nothing is decoded.
fn decode(c: &mut Criterion) {
    let mut g = c.benchmark_group("decode");
    g.sample_size(10);
    let mut rng = synth::Rng::new(9);
    let mut dense = String::new();
    while dense.len() < 8 << 20 {
        // Blocks of binary (rejected after decoding) and of text (kept), between YAML names.
        let len = 16 + rng.below(120);
        let bytes: Vec<u8> = if rng.below(2) == 0 {
            (0..len).map(|_| rng.below(256) as u8).collect()
        } else {
            rng.chars("abcdefghijklmnopqrstuvwxyz =:_-", len)
                .into_bytes()
        };
        dense.push_str("  value_");
        dense.push_str(&rng.below(1000).to_string());
        dense.push_str(": ");
        dense.push_str(&synth::base64(&bytes));
        dense.push('\n');
    }
    for (name, data) in [
        ("source-like", source_like(8 << 20)),
        ("base64-dense", dense.into_bytes()),
    ] {
        g.throughput(Throughput::Bytes(data.len() as u64));
        g.bench_function(name, |b| b.iter(|| leakhound::decode::views(&data)));
    }
    g.finish();
}

/// What a one-event process (an agent hook) pays before it scans: loading the built-in rules
/// and building an engine, with the embedded keyword DFA (the built-in keywords) and with one
/// keyword more (the automaton then built at start: the cost before build.rs embedded it).
fn start(c: &mut Criterion) {
    use leakhound::engine::Startup;
    use leakhound::rules;
    let mut g = c.benchmark_group("start");
    g.sample_size(20);
    g.bench_function("rules/with-examples", |b| b.iter(rules::builtin));
    g.bench_function("rules/without-examples", |b| {
        b.iter(rules::builtin_without_examples)
    });
    let set = rules::builtin_without_examples();
    let mut more = set.clone();
    more[0].keywords.push("zq-one-more".into());
    for (name, set) in [("embedded-dfa", &set), ("one-keyword-more", &more)] {
        for (kind, startup) in [
            ("latency", Startup::Latency),
            ("throughput", Startup::Throughput),
        ] {
            g.bench_function(format!("engine/{kind}/{name}"), |b| {
                b.iter(|| {
                    Engine::with_startup(
                        set.clone(),
                        startup,
                        leakhound::engine::FingerprintKey::ephemeral(),
                    )
                    .unwrap()
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench, decode, start);
criterion_main!(benches);
