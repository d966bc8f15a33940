//! Fingerprints: a keyed hash of the rule and the secret, stable across runs for one key.

use sha2::{Digest, Sha256};

/// Stable across runs for one fingerprint key: a keyed hash (HMAC-SHA256) of the rule and the
/// secret, nothing about where it was. The key makes it useless for guessing the secret
/// offline: without it, a weak password cannot be confirmed by hashing candidates.
pub fn fingerprint(rule_id: &str, secret: &[u8]) -> String {
    let d = keyed_hash(&[rule_id.as_bytes(), &[0], secret]);
    hex(&d[..16])
}

/// HMAC-SHA256 of the concatenated `parts` under the fingerprint key. Anything leakhound keeps
/// about a secret outside memory (fingerprints, baselines, caches) goes through this.
pub fn keyed_hash(parts: &[&[u8]]) -> [u8; 32] {
    hmac_sha256(fingerprint_key(), parts)
}

/// Names the fingerprint key without revealing it: written into baselines, so a baseline
/// made with another key is refused instead of silently suppressing nothing.
pub fn fingerprint_key_id() -> String {
    hex(&keyed_hash(&[b"leakhound fingerprint key id"])[..6])
}

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

/// 32 bytes from the system's randomness, or (without one) a hash of the time and the
/// process id: still unguessable enough to differ per process.
fn random_32() -> [u8; 32] {
    let mut k = [0u8; 32];
    let random = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut k));
    if random.is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        k = Sha256::digest(format!("{t:?}{}", std::process::id())).into();
    }
    k
}

static FINGERPRINT_KEY: std::sync::OnceLock<[u8; 32]> = std::sync::OnceLock::new();

/// Use `key` for every fingerprint this process makes. Returns false when a key was already
/// in use (fingerprints made so far would not compare).
pub fn set_fingerprint_key(key: &[u8]) -> bool {
    let derived: [u8; 32] = Sha256::digest(key).into();
    FINGERPRINT_KEY.set(derived).is_ok() || FINGERPRINT_KEY.get() == Some(&derived)
}

/// The key set by [`set_fingerprint_key`]; without one, a random key for this process only:
/// fingerprints then compare within the run but not across runs (the CLI always sets one).
fn fingerprint_key() -> &'static [u8; 32] {
    FINGERPRINT_KEY.get_or_init(random_32)
}

fn hmac_sha256(key: &[u8; 32], parts: &[&[u8]]) -> [u8; 32] {
    let mut ipad = [0x36u8; 64];
    let mut opad = [0x5cu8; 64];
    for (i, b) in key.iter().enumerate() {
        ipad[i] ^= b;
        opad[i] ^= b;
    }
    let mut inner = Sha256::new();
    inner.update(ipad);
    for p in parts {
        inner.update(p);
    }
    let mut outer = Sha256::new();
    outer.update(opad);
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// Lowercase hex of `b`.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_is_an_hmac_under_the_key() {
        // The key as the module derives it from the operator's key text.
        let key: [u8; 32] = Sha256::digest(b"k").into();
        let a = hmac_sha256(&key, &[b"rule", &[0], b"secret"]);
        let b = hmac_sha256(&key, &[b"rule\0secret"]);
        assert_eq!(a, b, "parts are concatenated");
        let other: [u8; 32] = Sha256::digest(b"other").into();
        assert_ne!(a, hmac_sha256(&other, &[b"rule\0secret"]));
        // Not the unkeyed hash an attacker could compute offline.
        let plain: [u8; 32] = Sha256::digest(b"rule\0secret").into();
        assert_ne!(a, plain);
    }

    #[test]
    fn hmac_matches_rfc_4231() {
        // RFC 4231 test case 1 uses a 20-byte key; HMAC pads keys to the block, so the same
        // key padded with zeros to 32 bytes gives the same MAC.
        let mut key = [0u8; 32];
        key[..20].copy_from_slice(&[0x0b; 20]);
        assert_eq!(
            hex(&hmac_sha256(&key, &[b"Hi There"])),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
    }

    #[test]
    fn fingerprint_depends_on_rule_and_secret_only() {
        assert_eq!(fingerprint("a", b"x"), fingerprint("a", b"x"));
        assert_ne!(fingerprint("a", b"x"), fingerprint("b", b"x"));
        assert_ne!(fingerprint("a", b"x"), fingerprint("a", b"y"));
    }
}
