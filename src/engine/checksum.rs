//! Token checksums and structure: GitHub's CRC32 in base62, a JWT's JOSE header, base64
//! `user:password`. What a rule's `checksum` names, checked after its regex matched.

use crate::rules::Checksum;
use base64::Engine as _;

/// Whether `secret` passes its rule's checksum.
pub fn checksum_ok(c: Checksum, secret: &[u8]) -> bool {
    match c {
        Checksum::Github => github_checksum_ok(secret),
        Checksum::Jwt => jwt_header_ok(secret),
        Checksum::Base64Credentials => base64_credentials_ok(secret),
    }
}

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// GitHub's (and npm's) token format: `prefix_` + 30 random base62 characters + the CRC32 of
/// those 30, base62-encoded in 6 characters.
pub(crate) fn github_checksum_ok(secret: &[u8]) -> bool {
    let Some(us) = memchr::memrchr(b'_', secret) else {
        return false;
    };
    let body = &secret[us + 1..];
    if body.len() < 7 {
        return false;
    }
    let (random, check) = body.split_at(body.len() - 6);
    base62_6(crc32fast::hash(random)).as_slice() == check
}

pub(crate) fn base62_6(mut n: u32) -> [u8; 6] {
    let mut out = [b'0'; 6];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(n % 62) as usize];
        n /= 62;
    }
    out
}

pub(super) fn b64_decode_lenient(s: &[u8]) -> Option<Vec<u8>> {
    let trimmed: Vec<u8> = s.iter().copied().filter(|&b| b != b'=').collect();
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(&trimmed)
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(&trimmed))
        .ok()
}

/// [`b64_decode_lenient`] of at most 32 bytes, decoded on the stack: it is asked of
/// thousands of short candidates a scan, and two allocations each were most of its cost.
pub(super) fn b64_decode_short(s: &[u8], out: &mut [u8; 24]) -> Option<usize> {
    let mut trimmed = [0u8; 32];
    let mut n = 0;
    for &b in s.iter().filter(|&&b| b != b'=') {
        *trimmed.get_mut(n)? = b;
        n += 1;
    }
    let trimmed = &trimmed[..n];
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode_slice(trimmed, out)
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode_slice(trimmed, out))
        .ok()
}

/// A JWT's first segment is base64url JSON naming a JOSE header parameter, or any JSON
/// object when the second segment is a JSON object naming a registered claim: headers such
/// as `{"kty":"EC"}` or `{"ver":"2"}` name no registered parameter, but a header and a
/// payload with `iss` or `exp` are a token all the same.
fn jwt_header_ok(secret: &[u8]) -> bool {
    let header = secret.split(|&b| b == b'.').next().unwrap_or_default();
    let Some(h) = b64_decode_lenient(header).filter(|h| h.first() == Some(&b'{')) else {
        return false;
    };
    JOSE_HEADER
        .iter()
        .any(|p| memchr::memmem::find(&h, p).is_some())
        || jwt_payload(secret)
            .is_some_and(|map| map.keys().any(|k| REGISTERED_CLAIMS.contains(&k.as_str())))
}

/// RFC 7519 section 4.1's registered claims.
const REGISTERED_CLAIMS: &[&str] = &["iss", "sub", "aud", "exp", "nbf", "iat", "jti"];

/// A JWT's payload (its second segment) when it is base64url of a JSON object; `None` when
/// it is not (encrypted, or not a JWT after all).
pub(super) fn jwt_payload(secret: &[u8]) -> Option<serde_json::Map<String, serde_json::Value>> {
    let payload = secret.split(|&b| b == b'.').nth(1)?;
    match serde_json::from_slice(&b64_decode_lenient(payload)?) {
        Ok(serde_json::Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// The JOSE header parameters in IANA's registry (RFC 7515 section 4.1, RFC 7516 section 4.1,
/// RFC 7518 sections 4.6-4.8, RFC 7797 `b64`, RFC 8555 `url`/`nonce`, RFC 8225 `ppt`,
/// RFC 9321 `svt`, and the claims RFC 7519 section 5.3 lets a header repeat) as JSON keys: a
/// token's header names at least one.
const JOSE_HEADER: &[&[u8]] = &[
    b"\"alg\"",
    b"\"typ\"",
    b"\"cty\"",
    b"\"kid\"",
    b"\"jku\"",
    b"\"jwk\"",
    b"\"x5u\"",
    b"\"x5c\"",
    b"\"x5t\"",
    b"\"x5t#S256\"",
    b"\"crit\"",
    b"\"enc\"",
    b"\"zip\"",
    b"\"epk\"",
    b"\"apu\"",
    b"\"apv\"",
    b"\"iv\"",
    b"\"tag\"",
    b"\"p2s\"",
    b"\"p2c\"",
    b"\"b64\"",
    b"\"url\"",
    b"\"nonce\"",
    b"\"ppt\"",
    b"\"svt\"",
    b"\"iss\"",
    b"\"sub\"",
    b"\"aud\"",
];

/// `user:password` in base64, as in a Docker `config.json` `auth` field.
fn base64_credentials_ok(secret: &[u8]) -> bool {
    b64_decode_lenient(secret).is_some_and(|d| {
        let colon = d.iter().position(|&b| b == b':');
        colon.is_some_and(|c| c > 0 && c + 1 < d.len())
            && d.iter().all(|&b| (0x20..0x7f).contains(&b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jwt_headers() {
        use base64::Engine as _;
        let enc = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        let jwt = |h: &str, p: &str| format!("{}.{}.c2lnbmF0dXJl", enc(h), enc(p));
        // A registered header parameter, or any header with a registered claim in the payload.
        assert!(jwt_header_ok(
            jwt(r#"{"b64":false}"#, r#"{"a":1}"#).as_bytes()
        ));
        assert!(jwt_header_ok(
            jwt(r#"{"kty":"EC"}"#, r#"{"iss":"x","exp":1}"#).as_bytes()
        ));
        // Neither: JSON that is not a token, and a header that is not JSON.
        assert!(!jwt_header_ok(
            jwt(r#"{"kty":"EC"}"#, r#"{"a":1}"#).as_bytes()
        ));
        assert!(!jwt_header_ok(jwt("not json", r#"{"iss":"x"}"#).as_bytes()));
    }

    #[test]
    fn base62_checksum_roundtrip() {
        let random = b"AbCdEfGhIjKlMnOpQrStUvWxYz0123";
        let mut tok = b"ghp_".to_vec();
        tok.extend_from_slice(random);
        tok.extend_from_slice(&base62_6(crc32fast::hash(random)));
        assert!(github_checksum_ok(&tok));
        let last = tok.len() - 1;
        tok[last] = if tok[last] == b'A' { b'B' } else { b'A' };
        assert!(!github_checksum_ok(&tok));
    }
}
