//! The client's private key and certificate as users have them: a key in any of the PEM forms
//! OpenSSL writes, encrypted or not, and a certificate of any X.509 version.
//!
//! rustls reads unencrypted keys only, and its check that a key belongs to its certificate
//! parses the certificate with webpki, which refuses X.509 v1 — what `openssl x509 -req`
//! writes without an extensions file, and what Cassandra accepts. So the key is decrypted
//! here (PKCS#8 `ENCRYPTED PRIVATE KEY` with the `pkcs8` crate; OpenSSL's older
//! `Proc-Type: 4,ENCRYPTED` PEM with its MD5 key derivation and a CBC cipher) and the key is
//! matched to the certificate by comparing public keys, read from the certificate by
//! `x509-cert`, which reads every version.

use std::path::Path;

use pkcs8::der::Decode;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::Invalid;
use crate::spec::client::KeyPassword;

/// How to give a password, said wherever one is missing.
const PASSWORD_FLAGS: &str =
    "--tls-key-password-file FILE (its first line) or --tls-key-password-env VAR";

/// The first private key of the PEM file `path`, decrypted with `password` when it is
/// encrypted. A missing or wrong password, an unknown cipher or a file without a key is
/// refused in one line naming the file and what would be accepted.
pub(super) fn private_key(
    path: &Path,
    password: Option<&KeyPassword>,
) -> Result<PrivateKeyDer<'static>, Invalid> {
    let shown = path.display();
    let text = std::fs::read(path)
        .map_err(|e| crate::invalid!("--tls-key {shown}: cannot read it: {e}"))?;
    let blocks = pem::parse_many(&text)
        .map_err(|e| crate::invalid!("--tls-key {shown}: not a PEM file: {e}"))?;
    let Some(block) = blocks.iter().find(|b| b.tag().ends_with("PRIVATE KEY")) else {
        return Err(crate::invalid!(
            "--tls-key {shown}: no private key in it (a PEM '-----BEGIN PRIVATE KEY-----', 'RSA PRIVATE KEY', 'EC PRIVATE KEY' or 'ENCRYPTED PRIVATE KEY' block expected)"
        ));
    };
    let legacy = block
        .headers()
        .get("Proc-Type")
        .is_some_and(|v| v.contains("ENCRYPTED"));
    if block.tag() == "ENCRYPTED PRIVATE KEY" {
        let password = read_password(path, password)?;
        let info = pkcs8::EncryptedPrivateKeyInfo::try_from(block.contents())
            .map_err(|e| crate::invalid!("--tls-key {shown}: not an encrypted PKCS#8 key: {e}"))?;
        let plain = info.decrypt(password.as_bytes()).map_err(|e| match e {
            // pkcs5 0.7 reports a failed decryption's padding check as EncryptFailed; about
            // one wrong password in 256 passes that check and gives bytes that are no DER
            // document (the encrypted structure itself was read above, so an ASN.1 error
            // here is of the decrypted bytes).
            pkcs8::Error::EncryptedPrivateKey(
                pkcs8::pkcs5::Error::DecryptFailed | pkcs8::pkcs5::Error::EncryptFailed,
            )
            | pkcs8::Error::Asn1(_) => wrong_password(path, &password.source),
            pkcs8::Error::EncryptedPrivateKey(
                pkcs8::pkcs5::Error::UnsupportedAlgorithm { .. }
                | pkcs8::pkcs5::Error::NoPbes1CryptSupport,
            ) => crate::invalid!(
                "--tls-key {shown}: encrypted with a scheme this client does not read ({e}); PBES2 with AES-CBC or DES-EDE3-CBC and PBKDF2 or scrypt is read: re-encrypt it with openssl pkcs8 -topk8 -v2 aes-256-cbc -in KEY -out NEW"
            ),
            other => crate::invalid!("--tls-key {shown}: cannot decrypt it: {other}"),
        })?;
        return Ok(PrivateKeyDer::Pkcs8(plain.as_bytes().to_vec().into()));
    }
    let der = if legacy {
        let password = read_password(path, password)?;
        decrypt_legacy(path, block, &password)?
    } else {
        block.contents().to_vec()
    };
    Ok(match block.tag() {
        "PRIVATE KEY" => PrivateKeyDer::Pkcs8(der.into()),
        "RSA PRIVATE KEY" => PrivateKeyDer::Pkcs1(der.into()),
        "EC PRIVATE KEY" => PrivateKeyDer::Sec1(der.into()),
        other => {
            return Err(crate::invalid!(
                "--tls-key {shown}: a '{other}' is not a key this client reads (PKCS#8, PKCS#1 RSA or SEC1 EC, encrypted or not)"
            ));
        }
    })
}

/// The password, read now from where the user keeps it.
fn read_password(path: &Path, password: Option<&KeyPassword>) -> Result<Password, Invalid> {
    let Some(source) = password else {
        return Err(crate::invalid!(
            "--tls-key {}: the key is encrypted: give its password with {PASSWORD_FLAGS}",
            path.display()
        ));
    };
    let text = match source {
        KeyPassword::File(file) => {
            let text = std::fs::read_to_string(file)
                .map_err(|e| crate::invalid!("{source}: cannot read it: {e}"))?;
            // The first line, as `openssl -passin file:` takes it.
            text.lines().next().unwrap_or("").to_string()
        }
        KeyPassword::Env(var) => std::env::var(var).map_err(|e| match e {
            std::env::VarError::NotPresent => {
                crate::invalid!("{source}: the variable is not set in this process's environment")
            }
            std::env::VarError::NotUnicode(_) => {
                crate::invalid!("{source}: the variable's value is not UTF-8")
            }
        })?,
    };
    if text.is_empty() {
        return Err(crate::invalid!("{source}: the password is empty"));
    }
    Ok(Password {
        text,
        source: source.clone(),
    })
}

/// A password and where it came from (for the message when it is wrong).
struct Password {
    text: String,
    source: KeyPassword,
}

impl Password {
    fn as_bytes(&self) -> &[u8] {
        self.text.as_bytes()
    }
}

impl Drop for Password {
    fn drop(&mut self) {
        // Not left in freed memory longer than needed.
        let mut bytes = std::mem::take(&mut self.text).into_bytes();
        bytes.iter_mut().for_each(|b| *b = 0);
        std::hint::black_box(&bytes);
    }
}

fn wrong_password(path: &Path, source: &KeyPassword) -> Invalid {
    crate::invalid!(
        "--tls-key {}: the password from {source} does not open it (wrong password, or a damaged key)",
        path.display()
    )
}

/// OpenSSL's older encrypted PEM: `DEK-Info: CIPHER,IV`, the key derived from the password
/// and the IV's first 8 bytes by `EVP_BytesToKey` with MD5 and one round, the body in CBC
/// mode with PKCS#7 padding.
fn decrypt_legacy(path: &Path, block: &pem::Pem, password: &Password) -> Result<Vec<u8>, Invalid> {
    use cbc::cipher::{BlockDecryptMut, KeyIvInit, block_padding::Pkcs7};
    let shown = path.display();
    let info = block.headers().get("DEK-Info").ok_or_else(|| {
        crate::invalid!("--tls-key {shown}: encrypted PEM without a DEK-Info header")
    })?;
    let (cipher, iv_hex) = info
        .split_once(',')
        .ok_or_else(|| crate::invalid!("--tls-key {shown}: DEK-Info '{info}' is not CIPHER,IV"))?;
    let iv = hex(iv_hex.trim())
        .ok_or_else(|| crate::invalid!("--tls-key {shown}: DEK-Info IV '{iv_hex}' is not hex"))?;
    #[derive(Clone, Copy)]
    enum Cipher {
        Aes128,
        Aes192,
        Aes256,
        TdesEde3,
    }
    let (which, key_len, iv_len) = match cipher.trim() {
        "AES-128-CBC" => (Cipher::Aes128, 16, 16),
        "AES-192-CBC" => (Cipher::Aes192, 24, 16),
        "AES-256-CBC" => (Cipher::Aes256, 32, 16),
        "DES-EDE3-CBC" => (Cipher::TdesEde3, 24, 8),
        other => {
            return Err(crate::invalid!(
                "--tls-key {shown}: encrypted with {other}, which this client does not read (AES-128/192/256-CBC and DES-EDE3-CBC are read): re-encrypt it with openssl pkcs8 -topk8 -v2 aes-256-cbc -in KEY -out NEW"
            ));
        }
    };
    if iv.len() != iv_len {
        return Err(crate::invalid!(
            "--tls-key {shown}: DEK-Info IV has {} bytes, {} takes {iv_len}",
            iv.len(),
            cipher.trim()
        ));
    }
    let key = bytes_to_key(password.as_bytes(), &iv[..8], key_len);
    let mut buf = block.contents().to_vec();
    fn open<C: BlockDecryptMut + KeyIvInit>(
        key: &[u8],
        iv: &[u8],
        buf: &mut [u8],
    ) -> Option<Vec<u8>> {
        let decryptor = C::new_from_slices(key, iv).ok()?;
        decryptor
            .decrypt_padded_mut::<Pkcs7>(buf)
            .ok()
            .map(<[u8]>::to_vec)
    }
    let plain = match which {
        Cipher::Aes128 => open::<cbc::Decryptor<aes::Aes128>>(&key, &iv, &mut buf),
        Cipher::Aes192 => open::<cbc::Decryptor<aes::Aes192>>(&key, &iv, &mut buf),
        Cipher::Aes256 => open::<cbc::Decryptor<aes::Aes256>>(&key, &iv, &mut buf),
        Cipher::TdesEde3 => open::<cbc::Decryptor<des::TdesEde3>>(&key, &iv, &mut buf),
    };
    buf.iter_mut().for_each(|b| *b = 0);
    // The padding check fails for all but about one wrong password in 256; the rest give a
    // key that does not parse, said the same way by the caller.
    plain.ok_or_else(|| wrong_password(path, &password.source))
}

/// `EVP_BytesToKey(cipher, MD5, salt, password, count = 1)`'s key: D1 = MD5(password ‖ salt),
/// Di = MD5(Di-1 ‖ password ‖ salt), concatenated to `len` bytes.
fn bytes_to_key(password: &[u8], salt: &[u8], len: usize) -> Vec<u8> {
    use md5::{Digest, Md5};
    let mut key = Vec::with_capacity(len + 16);
    let mut last: Vec<u8> = Vec::new();
    while key.len() < len {
        let mut h = Md5::new();
        h.update(&last);
        h.update(password);
        h.update(salt);
        last = h.finalize().to_vec();
        key.extend_from_slice(&last);
    }
    key.truncate(len);
    key
}

fn hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Whether `key` (a signing key's SubjectPublicKeyInfo) is the public key `cert` carries,
/// compared on the key bits (an algorithm's optional parameters may be encoded either way).
/// The certificate is read whatever its X.509 version.
pub(super) fn belongs(
    spki: &[u8],
    cert: &CertificateDer<'_>,
    cert_path: &Path,
) -> Result<bool, Invalid> {
    let parsed = x509_cert::Certificate::from_der(cert.as_ref()).map_err(|e| {
        crate::invalid!(
            "--tls-cert {}: not an X.509 certificate: {e}",
            cert_path.display()
        )
    })?;
    let in_cert = &parsed.tbs_certificate.subject_public_key_info;
    let of_key = pkcs8::spki::SubjectPublicKeyInfoRef::from_der(spki)
        .map_err(|e| crate::invalid!("the client key's public key: {e}"))?;
    Ok(in_cert.algorithm.oid == of_key.algorithm.oid
        && in_cert.subject_public_key.raw_bytes() == of_key.subject_public_key.raw_bytes())
}
