//! The fingerprint key: what every keyed hash of a secret (a finding's fingerprint, a
//! validation cache key, a report's key id) is made under. A value the run holds (its
//! [`crate::engine::Engine`] carries it to every finding made from its matches), never state
//! of the process that loading a config sets as a side effect.

use sha2::{Digest, Sha256};

/// An HMAC-SHA256 key, derived from the operator's key text. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct FingerprintKey([u8; 32]);

impl std::fmt::Debug for FingerprintKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FingerprintKey(<redacted>)")
    }
}

impl FingerprintKey {
    /// The key from the operator's key text (`LEAKHOUND_FINGERPRINT_KEY`, a key file, the
    /// state directory's key; see `policy::fingerprint_key`).
    pub fn new(key: &[u8]) -> FingerprintKey {
        FingerprintKey(Sha256::digest(key).into())
    }

    /// A random key for this process, for a caller with no operator's key: fingerprints then
    /// compare within the process but not across runs. One per process, so two engines of one
    /// run agree.
    pub fn ephemeral() -> FingerprintKey {
        static KEY: std::sync::OnceLock<[u8; 32]> = std::sync::OnceLock::new();
        FingerprintKey(*KEY.get_or_init(random_32))
    }

    /// Stable across runs for one key: a keyed hash of the rule and the secret, nothing about
    /// where it was. The key makes it useless for guessing the secret offline: without it, a
    /// weak password cannot be confirmed by hashing candidates.
    pub fn fingerprint(&self, rule_id: &str, secret: &[u8]) -> String {
        let d = self.keyed_hash(&[rule_id.as_bytes(), &[0], secret]);
        hex(&d[..16])
    }

    /// HMAC-SHA256 of the concatenated `parts` under this key. Anything leakhound keeps about
    /// a secret outside memory (fingerprints, baselines, caches) goes through this.
    pub fn keyed_hash(&self, parts: &[&[u8]]) -> [u8; 32] {
        hmac_sha256(&self.0, parts)
    }

    /// Names the key without revealing it: written into reports and baselines, so one made
    /// with another key is refused instead of silently matching nothing.
    pub fn id(&self) -> String {
        hex(&self.keyed_hash(&[b"leakhound fingerprint key id"])[..6])
    }
}

/// 32 bytes from the system's randomness, or (without one) a hash of the time and the
/// process id: still unguessable enough to differ per process.
pub(crate) fn random_32() -> [u8; 32] {
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

/// Lowercase hex of `b`. Not a `format!` per byte: every finding's fingerprint is written
/// out with this.
pub fn hex(b: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * b.len());
    for &x in b {
        s.push(DIGITS[usize::from(x >> 4)].into());
        s.push(DIGITS[usize::from(x & 15)].into());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_is_an_hmac_under_the_key() {
        let key = FingerprintKey::new(b"k");
        let a = key.keyed_hash(&[b"rule", &[0], b"secret"]);
        let b = key.keyed_hash(&[b"rule\0secret"]);
        assert_eq!(a, b, "parts are concatenated");
        assert_ne!(
            a,
            FingerprintKey::new(b"other").keyed_hash(&[b"rule\0secret"])
        );
        // Not the unkeyed hash an attacker could compute offline.
        let plain: [u8; 32] = Sha256::digest(b"rule\0secret").into();
        assert_ne!(a, plain);
        assert_ne!(key.id(), FingerprintKey::new(b"other").id());
        assert!(!format!("{key:?}").contains(&hex(&key.0)[..8]));
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
        let k = FingerprintKey::new(b"k");
        assert_eq!(k.fingerprint("a", b"x"), k.fingerprint("a", b"x"));
        assert_ne!(k.fingerprint("a", b"x"), k.fingerprint("b", b"x"));
        assert_ne!(k.fingerprint("a", b"x"), k.fingerprint("a", b"y"));
        assert_ne!(
            k.fingerprint("a", b"x"),
            FingerprintKey::new(b"j").fingerprint("a", b"x")
        );
        assert_eq!(FingerprintKey::ephemeral(), FingerprintKey::ephemeral());
    }
}
