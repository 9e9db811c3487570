//! Client TLS: a rustls configuration from a [`TlsSpec`] (CA, client certificate, name check,
//! lowest version), the one-line causes of failed handshakes, and the certificate authority
//! of a local cluster (its CA, one certificate per node, one for the client).
//!
//! The driver's TLS backend is rustls with aws-lc-rs as its cryptography (rustls's default,
//! which the driver's rustls feature builds anyway): no system OpenSSL to link or ship in a
//! loader image, and a FIPS-validated module is a feature switch away.
//!
//! All of the cryptography is the `tls` feature (on by default; `client`, `key`). A build
//! without it (the quickstart's, which then compiles no C cryptography library) keeps this
//! module's shape: [`client_config`], [`LocalCa::create`] and [`available`] refuse in one line
//! that says how to build with TLS, and [`ClientTls`] has no values, so nothing after a refusal
//! can run.

use std::path::PathBuf;

use scylla::client::session_builder::SessionBuilder;

use crate::error::Invalid;
use crate::spec::client::{HostnameCheck, TlsSpec, TlsVersion};

#[cfg(feature = "tls")]
mod client;
#[cfg(feature = "tls")]
mod key;

/// A client TLS configuration, every file read and checked: what the driver's sessions and
/// [`probe`] take.
#[cfg(feature = "tls")]
pub type ClientTls = std::sync::Arc<rustls::ClientConfig>;

/// A build without the `tls` feature has no client TLS configuration: [`client_config`]
/// refuses every one, so none exists.
#[cfg(not(feature = "tls"))]
#[derive(Debug, Clone)]
pub enum ClientTls {}

/// Whether this build has TLS: a build without the `tls` feature refuses `what` in one line,
/// before anything is fetched or written.
pub fn available(what: &str) -> Result<(), Invalid> {
    #[cfg(feature = "tls")]
    return {
        let _ = what;
        Ok(())
    };
    #[cfg(not(feature = "tls"))]
    Err(not_built(what))
}

/// Why a build without the `tls` feature refuses `what`, in one line.
#[cfg(not(feature = "tls"))]
fn not_built(what: &str) -> Invalid {
    crate::error::not_built(what, "TLS", "tls")
}

/// The client configuration `spec` describes, every file read and checked now: a missing or
/// unreadable file, a file without the certificate or key it should hold, an encrypted key or
/// a key that is not the certificate's is refused in one line naming it.
pub fn client_config(spec: &TlsSpec) -> Result<ClientTls, Invalid> {
    #[cfg(feature = "tls")]
    return client::config(spec);
    #[cfg(not(feature = "tls"))]
    {
        let _ = spec;
        Err(not_built("--tls-ca"))
    }
}

/// A driver session builder that connects with `tls`.
pub fn with_tls(b: SessionBuilder, tls: ClientTls) -> SessionBuilder {
    #[cfg(feature = "tls")]
    return b.tls_context(Some(scylla::client::session::TlsContext::Rustls023(tls)));
    #[cfg(not(feature = "tls"))]
    {
        let _ = b;
        match tls {}
    }
}

/// What a failed connection's message means for TLS, in words that name the fault and the
/// file to look at; None when the message is not about TLS (or about credentials).
pub fn explain(message: &str, tls: Option<&TlsSpec>) -> Option<String> {
    let lower = message.to_ascii_lowercase();
    let has = |s: &str| lower.contains(&s.to_ascii_lowercase());
    let ca = tls.map(|t| t.ca.display().to_string()).unwrap_or_default();
    let cert = tls
        .and_then(|t| t.cert.as_ref())
        .map(|c| c.display().to_string());
    let alert = has("received fatal alert");
    Some(if has("UnknownIssuer") || has("BadSignature") {
        format!("the node's certificate is not signed by a CA in --tls-ca {ca}")
    } else if has("NotValidForName") || has("not valid for name") {
        "the node's certificate does not name the address connected to: give --tls-server-name NAME (a name it carries) or --tls-no-hostname-check".into()
    } else if (has("Expired") || has("certificate expired")) && !alert {
        "the node's certificate has expired (or the client's clock is wrong)".into()
    } else if has("NotValidYet") || has("not valid yet") {
        "the node's certificate is not valid yet (or the client's clock is wrong)".into()
    } else if has("CertificateRequired") || (cert.is_none() && has("HandshakeFailure")) {
        "the node requires a client certificate: give --tls-cert and --tls-key".into()
    } else if has("UnknownCA")
        || has("BadCertificate")
        || has("CertificateUnknown")
        || has("CertificateExpired")
        || (alert && cert.is_some())
    {
        format!(
            "the node refused the client certificate --tls-cert {} (not signed by a CA it trusts, or expired)",
            cert.unwrap_or_default()
        )
    } else if tls.is_some() && (has("InvalidContentType") || has("corrupt message")) {
        "the node does not speak TLS on this port: its client encryption is off (connect without --tls-ca) or this is not its native transport port".into()
    } else if tls.is_none()
        && (has("early eof")
            || has("UnexpectedEof")
            || has("reset by peer")
            || has("Broken pipe")
            || has("frame"))
        && has("onnection")
    {
        "the node closed a plain-text connection: it may accept TLS only (give --tls-ca)".into()
    } else if has("Bad credentials") || has("Authentication") && has("fail") {
        "the node refused the user name or password (CQLBENCH_USERNAME / CQLBENCH_PASSWORD or --credentials-file)".into()
    } else {
        return None;
    })
}

/// Why a TLS connection to `addr` (`host:port`) fails, read from a handshake of its own (the
/// driver may see only a broken connection when a TLS 1.3 node refuses the client's
/// certificate after the handshake); None when that works or `addr` cannot be reached.
pub fn probe(addr: &str, config: ClientTls) -> Option<String> {
    #[cfg(feature = "tls")]
    return client::probe(addr, config);
    #[cfg(not(feature = "tls"))]
    {
        let _ = addr;
        match config {}
    }
}

/// The files of a local cluster's certificate authority (in the cluster's `tls/` directory).
#[derive(Debug, Clone)]
pub struct LocalCa {
    pub dir: PathBuf,
}

impl LocalCa {
    pub fn at(dir: impl Into<PathBuf>) -> LocalCa {
        LocalCa { dir: dir.into() }
    }
    pub fn ca(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }
    /// The CA's private key (owner-readable only): for signing client certificates of one's
    /// own (`openssl x509 -req -CA ca.pem -CAkey ca-key.pem …`), which the nodes then accept.
    pub fn ca_key(&self) -> PathBuf {
        self.dir.join("ca-key.pem")
    }
    /// Node `n`'s private key followed by its certificate (what Cassandra's PEM key store
    /// reads).
    pub fn node_keystore(&self, n: usize) -> PathBuf {
        self.dir.join(format!("node{n}.pem"))
    }
    pub fn client_cert(&self) -> PathBuf {
        self.dir.join("client.pem")
    }
    pub fn client_key(&self) -> PathBuf {
        self.dir.join("client-key.pem")
    }

    /// The client's settings against this CA: the CA, the client certificate and key, node
    /// addresses checked.
    pub fn client_spec(&self) -> TlsSpec {
        TlsSpec {
            ca: self.ca(),
            cert: Some(self.client_cert()),
            key: Some(self.client_key()),
            key_password: None,
            hostname: HostnameCheck::Address,
            min_version: TlsVersion::V1_2,
        }
    }

    /// Creates a CA and a certificate for each node address (its IP as the subject
    /// alternative name) and one for the client. Keys are ECDSA P-256, written readable by
    /// the owner only.
    pub fn create(&self, node_addrs: &[String]) -> Result<(), Invalid> {
        #[cfg(feature = "tls")]
        return client::create_ca(self, node_addrs);
        #[cfg(not(feature = "tls"))]
        {
            let _ = node_addrs;
            Err(not_built("cluster create --tls"))
        }
    }
}

#[cfg(test)]
#[cfg(feature = "tls")]
mod tests {
    use std::path::Path;

    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;

    use super::*;
    use crate::spec::client::KeyPassword;

    fn spec(ca: PathBuf) -> TlsSpec {
        TlsSpec {
            ca,
            cert: None,
            key: None,
            key_password: None,
            hostname: HostnameCheck::Address,
            min_version: TlsVersion::V1_2,
        }
    }

    #[test]
    fn a_local_ca_gives_a_client_configuration_and_bad_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let ca = LocalCa::at(dir.path().join("tls"));
        ca.create(&["127.0.0.1".into(), "127.0.0.2".into()])
            .unwrap();
        assert!(ca.node_keystore(2).exists());
        let mode = std::fs::metadata(ca.client_key()).unwrap();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
            0o600
        );
        client_config(&ca.client_spec()).unwrap();
        let only_tls13 = TlsSpec {
            min_version: TlsVersion::V1_3,
            hostname: HostnameCheck::Skip,
            ..ca.client_spec()
        };
        client_config(&only_tls13).unwrap();

        let missing = dir.path().join("nope.pem");
        let e = client_config(&spec(missing.clone())).unwrap_err();
        assert!(
            e.starts_with(&format!("--tls-ca {}: cannot read it", missing.display())),
            "{e}"
        );
        let e = client_config(&spec(ca.client_key())).unwrap_err();
        assert!(e.contains("no certificate in it"), "{e}");

        // The key of another certificate.
        let other = LocalCa::at(dir.path().join("other"));
        other.create(&["127.0.0.1".into()]).unwrap();
        let mismatched = TlsSpec {
            key: Some(other.client_key()),
            ..ca.client_spec()
        };
        let e = client_config(&mismatched).unwrap_err();
        assert!(e.contains("does not belong to --tls-cert"), "{e}");
        // A certificate where the key should be.
        let swapped = TlsSpec {
            key: Some(ca.client_cert()),
            ..ca.client_spec()
        };
        let e = client_config(&swapped).unwrap_err();
        assert!(e.contains("no private key in it"), "{e}");
        let encrypted = dir.path().join("enc.pem");
        std::fs::write(
            &encrypted,
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n",
        )
        .unwrap();
        let e = client_config(&TlsSpec {
            key: Some(encrypted),
            ..ca.client_spec()
        })
        .unwrap_err();
        assert!(e.contains("the key is encrypted: give its password"), "{e}");
    }

    /// `openssl ARGS…` in `dir`, which must succeed.
    fn openssl(dir: &Path, args: &[&str]) {
        let o = std::process::Command::new("openssl")
            .current_dir(dir)
            .args(args)
            .output()
            .expect("openssl runs");
        assert!(
            o.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }

    /// The client certificates and keys users make with openssl: an X.509 v1 certificate
    /// (`openssl x509 -req` without extensions) and its key unencrypted, as encrypted PKCS#8
    /// (AES with PBKDF2, 3DES, scrypt) and in the older encrypted PEM (AES-128/256, 3DES; EC
    /// and RSA), the password from a file or an environment variable. Each gives a client
    /// configuration; a wrong or missing password and another certificate's key are refused
    /// in one line naming the file.
    #[test]
    fn keys_and_certificates_as_openssl_writes_them_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let ca = LocalCa::at(d.join("tls"));
        ca.create(&["127.0.0.1".into()]).unwrap();
        let ca_pem = ca.ca().to_str().unwrap().to_string();
        let ca_key = ca.ca_key().to_str().unwrap().to_string();
        std::fs::write(d.join("pw"), "s3cret pass\nsecond line ignored\n").unwrap();
        std::fs::write(d.join("wrong"), "not it\n").unwrap();
        let pw = "file:pw";
        let spec = |cert: &str, key: &str, password: Option<KeyPassword>| TlsSpec {
            cert: Some(d.join(cert)),
            key: Some(d.join(key)),
            key_password: password,
            ..ca.client_spec()
        };
        let file = |f: &str| Some(KeyPassword::File(d.join(f)));
        for (alg, key) in [("EC", "ec.key"), ("RSA", "rsa.key")] {
            let mut genkey = vec!["genpkey", "-algorithm", alg, "-out", key];
            if alg == "EC" {
                genkey.extend(["-pkeyopt", "ec_paramgen_curve:P-256"]);
            } else {
                genkey.extend(["-pkeyopt", "rsa_keygen_bits:2048"]);
            }
            openssl(d, &genkey);
            let csr = format!("{key}.csr");
            let cert = format!("{key}.v1.pem");
            openssl(
                d,
                &[
                    "req", "-new", "-key", key, "-subj", "/CN=user", "-out", &csr,
                ],
            );
            openssl(
                d,
                &[
                    "x509",
                    "-req",
                    "-in",
                    &csr,
                    "-CA",
                    &ca_pem,
                    "-CAkey",
                    &ca_key,
                    "-CAcreateserial",
                    "-days",
                    "2",
                    "-out",
                    &cert,
                ],
            );
            let text = std::fs::read_to_string(d.join(&cert)).unwrap();
            let der = CertificateDer::from_pem_slice(text.as_bytes()).unwrap();
            assert!(is_v1(&der), "openssl wrote a v1 certificate for {alg}");
            client_config(&spec(&cert, key, None)).unwrap();
            let mut encrypted: Vec<(String, Vec<&str>)> = vec![
                (
                    format!("{key}.p8-aes"),
                    vec!["pkcs8", "-topk8", "-v2", "aes-256-cbc"],
                ),
                (
                    format!("{key}.p8-3des"),
                    vec!["pkcs8", "-topk8", "-v2", "des3"],
                ),
                (
                    format!("{key}.p8-scrypt"),
                    vec!["pkcs8", "-topk8", "-scrypt"],
                ),
                (
                    format!("{key}.pem-aes128"),
                    vec!["pkey", "-traditional", "-aes128"],
                ),
                (
                    format!("{key}.pem-aes256"),
                    vec!["pkey", "-traditional", "-aes256"],
                ),
                (
                    format!("{key}.pem-3des"),
                    vec!["pkey", "-traditional", "-des3"],
                ),
            ];
            for (out, args) in encrypted.iter_mut() {
                args.extend(["-in", key, "-out", out.as_str(), "-passout", pw]);
                openssl(d, args);
                let text = std::fs::read_to_string(d.join(&*out)).unwrap();
                if out.contains(".pem-") {
                    assert!(text.contains("Proc-Type: 4,ENCRYPTED"), "{out}: {text}");
                } else {
                    assert!(text.contains("ENCRYPTED PRIVATE KEY"), "{out}");
                }
                client_config(&spec(&cert, out, file("pw")))
                    .unwrap_or_else(|e| panic!("{out}: {e}"));
                let e = client_config(&spec(&cert, out, file("wrong"))).unwrap_err();
                assert!(
                    e.contains("does not open it") || e.contains("a wrong password can give this"),
                    "{out}: {e}"
                );
                assert!(
                    e.starts_with(&format!("--tls-key {}", d.join(&*out).display())),
                    "{e}"
                );
                let e = client_config(&spec(&cert, out, None)).unwrap_err();
                assert!(
                    e.contains("the key is encrypted: give its password"),
                    "{out}: {e}"
                );
            }
            // The other algorithm's key with this certificate.
            let other = if alg == "EC" { "rsa.key" } else { "ec.key" };
            if d.join(other).exists() {
                let e = client_config(&spec(&cert, other, None)).unwrap_err();
                assert!(e.contains("does not belong to --tls-cert"), "{e}");
            }
        }
        // The password from the environment: set by this test for a name only it uses.
        let var = format!("CQLBENCH_TEST_KEY_PASSWORD_{}", std::process::id());
        // SAFETY: a variable no other thread reads or writes (its name carries this process's
        // id and is used by this test only).
        unsafe { std::env::set_var(&var, "s3cret pass") };
        client_config(&spec(
            "ec.key.v1.pem",
            "ec.key.pem-aes256",
            Some(KeyPassword::Env(var.clone())),
        ))
        .unwrap();
        unsafe { std::env::remove_var(&var) };
        let e = client_config(&spec(
            "ec.key.v1.pem",
            "ec.key.pem-aes256",
            Some(KeyPassword::Env(var.clone())),
        ))
        .unwrap_err();
        assert!(e.contains("is not set"), "{e}");
        let e =
            client_config(&spec("ec.key.v1.pem", "ec.key.pem-aes256", file("nope"))).unwrap_err();
        assert!(
            e.contains("--tls-key-password-file") && e.contains("cannot read it"),
            "{e}"
        );
    }

    /// Whether `cert` is X.509 v1 (so the test above tests what it claims).
    fn is_v1(cert: &CertificateDer<'_>) -> bool {
        use pkcs8::der::Decode;
        x509_cert::Certificate::from_der(cert.as_ref())
            .unwrap()
            .tbs_certificate
            .version
            == x509_cert::Version::V1
    }
    #[test]
    fn handshake_failures_are_explained() {
        let t = spec("/x/ca.pem".into());
        let e = explain("invalid peer certificate: UnknownIssuer", Some(&t)).unwrap();
        assert_eq!(
            e,
            "the node's certificate is not signed by a CA in --tls-ca /x/ca.pem"
        );
        assert!(explain("invalid peer certificate: certificate not valid for name \"db\"; certificate is only valid for IpAddress(127.0.0.1)", Some(&t)).unwrap().contains("--tls-server-name"));
        assert!(explain("invalid peer certificate: certificate expired: verification time 1, but certificate is not valid after 0", Some(&t)).unwrap().contains("has expired"));
        let with_cert = TlsSpec {
            cert: Some("/x/c.pem".into()),
            key: Some("/x/k.pem".into()),
            ..t.clone()
        };
        assert!(
            explain(
                "Failed to read the frame header: received fatal alert: InternalError",
                Some(&with_cert)
            )
            .unwrap()
            .contains("refused the client certificate --tls-cert /x/c.pem")
        );
        assert!(
            explain("received fatal alert: CertificateRequired", Some(&t))
                .unwrap()
                .contains("requires a client certificate")
        );
        assert!(
            explain(
                "received corrupt message of type InvalidContentType",
                Some(&t)
            )
            .unwrap()
            .contains("does not speak TLS")
        );
        assert!(explain("Provided credentials were rejected by the server: Authentication error: Bad credentials", None).unwrap().contains("user name or password"));
        assert_eq!(explain("Connection refused (os error 111)", Some(&t)), None);
    }
}
