//! What the unit tests share: the built-in engine, one fake AWS key pair, and the generated
//! corpus's seeded generator and charsets (`corpus/synth.rs`, which the integration tests,
//! the benches and the corpus generator include too). It uses `engine`, so the leaves'
//! tests (`engine`, `decode`) cannot use it (`tests/it/architecture.rs`).

use crate::engine::Engine;

#[path = "../corpus/synth.rs"]
pub mod synth;
pub use synth::Rng;

pub fn engine() -> Engine {
    Engine::new(
        crate::rules::builtin(),
        crate::engine::FingerprintKey::ephemeral(),
    )
    .unwrap()
}

// Fake: an AWS key id in the documented shape (its account decodes to 052310077262) and a
// random 40-character secret, never a live pair.
pub const KEY: &str = "AKIAQYLPMN5HHHFPZAM2";
pub const SECRET: &str = "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";
