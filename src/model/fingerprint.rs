//! Baselines' hashes and the hex and random bytes they are made of. Fingerprints are the
//! run's key's ([`crate::engine::FingerprintKey`]).

pub use crate::engine::key::hex;
use crate::engine::key::random_32;

/// How a baseline hashes each accepted secret: Argon2id with this much memory (KiB) and this
/// many passes, under a salt of the baseline's own. No key: a baseline committed on one
/// machine matches on any other. Memory-hard: each guess at a weak secret costs an attacker
/// the same 8 MiB and pass over it that a scan pays once per finding of a baselined rule
/// (measured in benches/RESULTS.md, "Portable baselines").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BaselineKdf {
    pub m_kib: u32,
    pub t: u32,
}

impl BaselineKdf {
    pub const DEFAULT: BaselineKdf = BaselineKdf { m_kib: 8192, t: 1 };

    /// Whether a baseline's own parameters are ones a reader will run: a hostile file must
    /// not make every finding cost a gigabyte.
    pub fn acceptable(self) -> bool {
        (8..=(256 << 10)).contains(&self.m_kib) && (1..=16).contains(&self.t)
    }

    /// The hash of `rule_id`'s `secret` under `salt`, hex; `None` if the parameters are not
    /// ones Argon2 takes.
    pub fn hash(self, salt: &[u8], rule_id: &str, secret: &[u8]) -> Option<String> {
        use argon2::{Algorithm, Argon2, Params, Version};
        let params = Params::new(self.m_kib, self.t, 1, Some(16)).ok()?;
        let a = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
        let mut input = Vec::with_capacity(rule_id.len() + 1 + secret.len());
        input.extend_from_slice(rule_id.as_bytes());
        input.push(0);
        input.extend_from_slice(secret);
        let mut out = [0u8; 16];
        a.hash_password_into(&input, salt, &mut out).ok()?;
        Some(hex(&out))
    }
}

/// 16 random bytes: a new baseline's salt.
pub fn random_salt() -> [u8; 16] {
    let mut k = [0u8; 16];
    k.copy_from_slice(&random_32()[..16]);
    k
}
