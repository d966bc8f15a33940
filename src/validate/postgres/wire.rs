//! One login over PostgreSQL's frontend/backend protocol (version 3.0), with nothing but
//! `std` and `sha2`: a startup message, SCRAM-SHA-256 (RFC 5802/7677, as PostgreSQL speaks
//! it), then `Terminate`. No query is sent; nothing on the server changes. The password is
//! never sent itself: a server asking for it in clear text (or for MD5, whose answer can be
//! cracked offline by whoever runs the host) gets no answer.

use super::{Login, Target};
use base64::Engine as _;
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Largest message read: a login's messages are small; a larger one is not a server's.
const MAX_MESSAGE: usize = 64 * 1024;
/// Most PBKDF2 rounds done for a server: PostgreSQL's default is 4096; a host that asks for
/// far more only wants to burn this machine's time.
const MAX_ROUNDS: u32 = 1_000_000;

/// Log in as the target's user with `password`.
pub(super) fn login(t: &Target, password: &str, timeout: Duration) -> Login {
    match attempt(t, password, timeout) {
        Ok(l) => l,
        Err(why) => Login::Unknown(why),
    }
}

fn attempt(t: &Target, password: &str, timeout: Duration) -> Result<Login, String> {
    let addrs = (t.host.as_str(), t.port)
        .to_socket_addrs()
        .map_err(|e| format!("network: resolving {}: {}", t.host, e.kind()))?;
    let mut last = format!("network: {} has no address", t.host);
    let mut stream = None;
    for a in addrs {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = format!("network: {}:{}: {}", t.host, t.port, e.kind()),
        }
    }
    let s = stream.ok_or(last)?;
    s.set_read_timeout(Some(timeout)).map_err(io)?;
    s.set_write_timeout(Some(timeout)).map_err(io)?;
    let mut c = Conn { s };

    let mut startup = Vec::new();
    startup.extend(196_608u32.to_be_bytes()); // protocol 3.0
    for (k, v) in [
        ("user", t.user.as_str()),
        ("database", t.database.as_str()),
        ("application_name", "leakhound"),
    ] {
        startup.extend(k.as_bytes());
        startup.push(0);
        startup.extend(v.as_bytes());
        startup.push(0);
    }
    startup.push(0);
    c.send(None, &startup)?;

    let mut scram: Option<Scram> = None;
    let mut authenticated = false;
    loop {
        let (kind, body) = c.read()?;
        match kind {
            b'R' => {
                let code = be32(&body, 0)?;
                let rest = &body[4..];
                match code {
                    0 => {
                        if scram.as_ref().is_some_and(|s| !s.verified) {
                            return Err("the server let the login in without proving it \
                                        knows the password (no SCRAM final message)"
                                .into());
                        }
                        authenticated = true;
                    }
                    3 => {
                        return Err(
                            "the server asks for the password in clear text; not sent".into()
                        )
                    }
                    5 => {
                        return Err("the server asks for an MD5 login, which can be cracked \
                                    offline; not sent (SCRAM-SHA-256 only)"
                            .into())
                    }
                    10 => {
                        let mechs: Vec<&[u8]> = rest.split(|&b| b == 0).collect();
                        if !mechs.contains(&&b"SCRAM-SHA-256"[..]) {
                            return Err("the server offers no SCRAM-SHA-256".into());
                        }
                        let s = Scram::new(password)?;
                        let first = s.client_first();
                        let mut msg = b"SCRAM-SHA-256\0".to_vec();
                        msg.extend((first.len() as u32).to_be_bytes());
                        msg.extend(first.as_bytes());
                        c.send(Some(b'p'), &msg)?;
                        scram = Some(s);
                    }
                    11 => {
                        let s = scram.as_mut().ok_or("SCRAM continue before it began")?;
                        let server_first = std::str::from_utf8(rest).map_err(|_| "bad SCRAM")?;
                        let fin = s.client_final(server_first)?;
                        c.send(Some(b'p'), fin.as_bytes())?;
                    }
                    12 => {
                        let s = scram.as_mut().ok_or("SCRAM final before it began")?;
                        let server_final = std::str::from_utf8(rest).map_err(|_| "bad SCRAM")?;
                        s.verify(server_final)?;
                    }
                    other => return Err(format!("authentication method {other} not supported")),
                }
            }
            b'E' => {
                let (code, message) = error_fields(&body);
                let said = format!("SQLSTATE {code}: {message}");
                return Ok(match code.as_str() {
                    // invalid_password, invalid_authorization_specification (no such user, or
                    // no pg_hba.conf entry lets it in).
                    "28P01" | "28000" => Login::Refused(said),
                    // invalid_catalog_name: the database is checked after the login.
                    "3D000" if authenticated => Login::Ok,
                    _ => Login::Unknown(said),
                });
            }
            b'Z' if authenticated => {
                let _ = c.send(Some(b'X'), &[]);
                return Ok(if scram.is_some() {
                    Login::Ok
                } else {
                    Login::Trusted
                });
            }
            // Notices, parameters, the cancel key, a protocol version negotiation.
            b'N' | b'S' | b'K' | b'v' => {}
            other => return Err(format!("unexpected message {:?}", other as char)),
        }
    }
}

fn io(e: std::io::Error) -> String {
    format!("network: {}", e.kind())
}

fn be32(b: &[u8], at: usize) -> Result<u32, String> {
    b.get(at..at + 4)
        .map(|x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]))
        .ok_or_else(|| "a message too short".into())
}

/// An ErrorResponse's SQLSTATE (`C`) and message (`M`).
fn error_fields(body: &[u8]) -> (String, String) {
    let mut code = String::new();
    let mut message = String::new();
    for field in body.split(|&b| b == 0).filter(|f| !f.is_empty()) {
        let text = String::from_utf8_lossy(&field[1..]).into_owned();
        match field[0] {
            b'C' => code = text,
            b'M' => message = text,
            _ => {}
        }
    }
    (code, message)
}

struct Conn {
    s: TcpStream,
}

impl Conn {
    fn send(&mut self, kind: Option<u8>, body: &[u8]) -> Result<(), String> {
        let mut m = Vec::with_capacity(body.len() + 5);
        m.extend(kind);
        m.extend(((body.len() + 4) as u32).to_be_bytes());
        m.extend(body);
        self.s.write_all(&m).map_err(io)
    }

    fn read(&mut self) -> Result<(u8, Vec<u8>), String> {
        let mut head = [0u8; 5];
        self.s.read_exact(&mut head).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => "network: the server closed the connection".into(),
            _ => io(e),
        })?;
        let len = be32(&head, 1)? as usize;
        if !(4..=MAX_MESSAGE).contains(&len) {
            return Err(format!("not a PostgreSQL server (message of {len} bytes)"));
        }
        let mut body = vec![0u8; len - 4];
        self.s.read_exact(&mut body).map_err(io)?;
        Ok((head[0], body))
    }
}

/// HMAC-SHA-256 (RFC 2104).
fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(k.map(|b| b ^ 0x36));
    for p in parts {
        inner.update(p);
    }
    let mut outer = Sha256::new();
    outer.update(k.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// PBKDF2-HMAC-SHA-256, one block (32 bytes): SCRAM's `Hi()`.
fn hi(password: &[u8], salt: &[u8], rounds: u32) -> [u8; 32] {
    let mut u = hmac(password, &[salt, &1u32.to_be_bytes()]);
    let mut out = u;
    for _ in 1..rounds {
        u = hmac(password, &[&u]);
        for (o, x) in out.iter_mut().zip(u) {
            *o ^= x;
        }
    }
    out
}

/// One SCRAM-SHA-256 exchange, client side. `Debug` is not derived: it holds the password.
struct Scram {
    password: String,
    nonce: String,
    auth_message: String,
    server_key: [u8; 32],
    verified: bool,
}

impl Scram {
    fn new(password: &str) -> Result<Scram, String> {
        let mut raw = [0u8; 18];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut raw))
            .map_err(|e| format!("no random nonce: {}", e.kind()))?;
        Ok(Scram {
            password: password.to_string(),
            nonce: base64::engine::general_purpose::STANDARD.encode(raw),
            auth_message: String::new(),
            server_key: [0; 32],
            verified: false,
        })
    }

    /// The user is left empty: PostgreSQL takes it from the startup message.
    fn first_bare(&self) -> String {
        format!("n=,r={}", self.nonce)
    }

    fn client_first(&self) -> String {
        format!("n,,{}", self.first_bare())
    }

    fn client_final(&mut self, server_first: &str) -> Result<String, String> {
        let attr = |name: &str| {
            server_first
                .split(',')
                .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
        };
        let nonce = attr("r").ok_or("SCRAM: no nonce")?;
        if !nonce.starts_with(&self.nonce) || nonce.len() <= self.nonce.len() {
            return Err("SCRAM: the server's nonce does not extend ours".into());
        }
        let salt = base64::engine::general_purpose::STANDARD
            .decode(attr("s").ok_or("SCRAM: no salt")?)
            .map_err(|_| "SCRAM: a salt that is not base64")?;
        let rounds: u32 = attr("i")
            .and_then(|i| i.parse().ok())
            .ok_or("SCRAM: no iteration count")?;
        if rounds == 0 || rounds > MAX_ROUNDS {
            return Err(format!("SCRAM: {rounds} iterations asked; not done"));
        }
        let salted = hi(self.password.as_bytes(), &salt, rounds);
        let client_key = hmac(&salted, &[b"Client Key"]);
        let stored_key: [u8; 32] = Sha256::digest(client_key).into();
        // `biws` is base64 of the GS2 header `n,,`: no channel binding.
        let without_proof = format!("c=biws,r={nonce}");
        self.auth_message = format!("{},{server_first},{without_proof}", self.first_bare());
        let signature = hmac(&stored_key, &[self.auth_message.as_bytes()]);
        let proof: Vec<u8> = client_key
            .iter()
            .zip(signature)
            .map(|(a, b)| a ^ b)
            .collect();
        self.server_key = hmac(&salted, &[b"Server Key"]);
        Ok(format!(
            "{without_proof},p={}",
            base64::engine::general_purpose::STANDARD.encode(proof)
        ))
    }

    /// The server proves it knows the password too: a host that merely says "ok" is not
    /// believed.
    fn verify(&mut self, server_final: &str) -> Result<(), String> {
        let got = server_final
            .split(',')
            .find_map(|kv| kv.strip_prefix("v="))
            .ok_or("SCRAM: no server signature")?;
        let want = hmac(&self.server_key, &[self.auth_message.as_bytes()]);
        if base64::engine::general_purpose::STANDARD.encode(want) != got {
            return Err("SCRAM: the server's signature is wrong".into());
        }
        self.verified = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677's SCRAM-SHA-256 example, end to end (with its user in the first message).
    #[test]
    fn scram_matches_rfc_7677() {
        let mut s = Scram {
            password: "pencil".into(),
            nonce: "rOprNGfwEbeRWgbNEkqO".into(),
            auth_message: String::new(),
            server_key: [0; 32],
            verified: false,
        };
        // The RFC's client-first-bare names the user; ours leaves it to the startup message.
        let server_first =
            "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let salt = base64::engine::general_purpose::STANDARD
            .decode("W22ZaJ0SNY7soEsUEjb6gQ==")
            .unwrap();
        let salted = hi(b"pencil", &salt, 4096);
        let client_key = hmac(&salted, &[b"Client Key"]);
        let stored: [u8; 32] = Sha256::digest(client_key).into();
        let auth = format!(
            "n=user,r=rOprNGfwEbeRWgbNEkqO,{server_first},c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
        );
        let sig = hmac(&stored, &[auth.as_bytes()]);
        let proof: Vec<u8> = client_key.iter().zip(sig).map(|(a, b)| a ^ b).collect();
        assert_eq!(
            base64::engine::general_purpose::STANDARD.encode(proof),
            "dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        let server = hmac(&hmac(&salted, &[b"Server Key"]), &[auth.as_bytes()]);
        assert_eq!(
            base64::engine::general_purpose::STANDARD.encode(server),
            "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
        );
        // Our own exchange: the final message carries the nonce, and a wrong server
        // signature is refused.
        let fin = s.client_final(server_first).unwrap();
        assert!(
            fin.starts_with("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvY"),
            "{fin}"
        );
        assert!(s.verify("v=AAAA").is_err());
        assert!(s.client_final("r=someone-else,s=AA==,i=1").is_err());
        assert!(s
            .client_final("r=rOprNGfwEbeRWgbNEkqOx,s=AA==,i=99999999")
            .is_err());
    }
}
