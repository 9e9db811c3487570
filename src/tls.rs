//! Client TLS: a rustls configuration from a [`TlsSpec`] (CA, client certificate, name check,
//! lowest version), the one-line causes of failed handshakes, and the certificate authority
//! of a local cluster (its CA, one certificate per node, one for the client).
//!
//! The driver's TLS backend is rustls with aws-lc-rs as its cryptography (rustls's default,
//! which the driver's rustls feature builds anyway): no system OpenSSL to link or ship in a
//! loader image, and a FIPS-validated module is a feature switch away.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};

use crate::error::Invalid;
use crate::spec::client::{HostnameCheck, TlsSpec, TlsVersion};

mod key;

/// The rustls client configuration `spec` describes, every file read and checked now: a
/// missing or unreadable file, a file without the certificate or key it should hold, an
/// encrypted key or a key that is not the certificate's is refused in one line naming it.
pub fn client_config(spec: &TlsSpec) -> Result<Arc<rustls::ClientConfig>, Invalid> {
    spec.check()?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    for cert in certificates(&spec.ca, "--tls-ca")? {
        roots.add(cert).map_err(|e| {
            crate::invalid!(
                "--tls-ca {}: not a CA certificate this client can use: {e}",
                spec.ca.display()
            )
        })?;
    }
    let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| crate::invalid!("--tls-ca {}: {e}", spec.ca.display()))?;
    let verifier: Arc<dyn ServerCertVerifier> = match &spec.hostname {
        HostnameCheck::Address => webpki,
        other => Arc::new(NameCheck {
            inner: webpki,
            check: other.clone(),
        }),
    };
    let versions: &[&'static rustls::SupportedProtocolVersion] = match spec.min_version {
        TlsVersion::V1_2 => &[&rustls::version::TLS13, &rustls::version::TLS12],
        TlsVersion::V1_3 => &[&rustls::version::TLS13],
    };
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .map_err(|e| crate::invalid!("--tls-min-version {}: {e}", spec.min_version))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let config = match (&spec.cert, &spec.key) {
        (Some(cert), Some(key)) => {
            let chain = certificates(cert, "--tls-cert")?;
            let key_der = key::private_key(key, spec.key_password.as_ref())?;
            let signing = provider
                .key_provider
                .load_private_key(key_der)
                .map_err(|e| {
                    let hint = if spec.key_password.is_some() {
                        " (a wrong password can give this)"
                    } else {
                        ""
                    };
                    crate::invalid!(
                        "--tls-key {}: not a private key this client can use{hint}: {e}",
                        key.display()
                    )
                })?;
            // The key must be the certificate's: compared here rather than by rustls, whose
            // check refuses X.509 v1 certificates (which nodes accept).
            if let Some(public) = signing.public_key()
                && !key::belongs(&public, &chain[0], cert)?
            {
                return Err(crate::invalid!(
                    "--tls-key {} does not belong to --tls-cert {}: their public keys differ",
                    key.display(),
                    cert.display()
                ));
            }
            let certified = Arc::new(rustls::sign::CertifiedKey::new(chain, signing));
            builder.with_client_cert_resolver(Arc::new(ClientCert(certified)))
        }
        _ => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

/// The one client certificate, offered to every node that asks for one.
#[derive(Debug)]
struct ClientCert(Arc<rustls::sign::CertifiedKey>);

impl rustls::client::ResolvesClientCert for ClientCert {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        _sigschemes: &[SignatureScheme],
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        Some(self.0.clone())
    }

    fn has_certs(&self) -> bool {
        true
    }
}

fn read(path: &Path, flag: &str) -> Result<Vec<u8>, Invalid> {
    std::fs::read(path)
        .map_err(|e| crate::invalid!("{flag} {}: cannot read it: {e}", path.display()))
}

/// Every certificate of a PEM file (at least one).
fn certificates(path: &Path, flag: &str) -> Result<Vec<CertificateDer<'static>>, Invalid> {
    let pem = read(path, flag)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| crate::invalid!("{flag} {}: not a PEM file: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(crate::invalid!(
            "{flag} {}: no certificate in it (a PEM '-----BEGIN CERTIFICATE-----' block expected)",
            path.display()
        ));
    }
    Ok(certs)
}

/// The chain checked as usual, the node's name against a fixed name or not at all.
#[derive(Debug)]
struct NameCheck {
    inner: Arc<WebPkiServerVerifier>,
    check: HostnameCheck,
}

impl ServerCertVerifier for NameCheck {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match &self.check {
            HostnameCheck::Name(name) => {
                let fixed = ServerName::try_from(name.as_str())
                    .map_err(|e| rustls::Error::General(format!("--tls-server-name: {e}")))?;
                self.inner
                    .verify_server_cert(end_entity, intermediates, &fixed, ocsp_response, now)
            }
            HostnameCheck::Skip => match self.inner.verify_server_cert(
                end_entity,
                intermediates,
                server_name,
                ocsp_response,
                now,
            ) {
                Err(rustls::Error::InvalidCertificate(
                    CertificateError::NotValidForName
                    | CertificateError::NotValidForNameContext { .. },
                )) => Ok(ServerCertVerified::assertion()),
                other => other,
            },
            HostnameCheck::Address => self.inner.verify_server_cert(
                end_entity,
                intermediates,
                server_name,
                ocsp_response,
                now,
            ),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
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

/// Why a TLS connection to `addr` (`host:port`) fails, read from a handshake of its own: the
/// driver may see only a broken connection when a TLS 1.3 node refuses the client's
/// certificate after the handshake (the alert comes after the client's last handshake
/// message, and the driver's first request, still unread when the node closes, turns the
/// close into a reset that discards the alert). So the probe first completes the handshake
/// and listens without sending anything; only when the node stays silent does it send a CQL
/// OPTIONS request and read the answer. None when that works or `addr` cannot be reached.
pub fn probe(addr: &str, config: Arc<rustls::ClientConfig>) -> Option<String> {
    use std::io::{ErrorKind, Read, Write};
    use std::net::ToSocketAddrs;
    let sock = addr.to_socket_addrs().ok()?.next()?;
    let timeout = std::time::Duration::from_secs(5);
    let mut tcp = std::net::TcpStream::connect_timeout(&sock, timeout).ok()?;
    tcp.set_write_timeout(Some(timeout)).ok()?;
    tcp.set_read_timeout(Some(timeout)).ok()?;
    let name = ServerName::IpAddress(sock.ip().into());
    let mut conn = rustls::ClientConnection::new(config, name).ok()?;
    // The handshake, and the client's last handshake message sent (complete_io flushes it),
    // with nothing after it.
    if let Err(e) = conn.complete_io(&mut tcp) {
        return Some(e.to_string());
    }
    // A node that refuses the certificate says so now; one that accepts it says nothing
    // until asked (a loaded node may take a while to judge).
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(3)))
        .ok()?;
    let mut tls = rustls::Stream::new(&mut conn, &mut tcp);
    let mut byte = [0u8; 1];
    match tls.read(&mut byte) {
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
        Err(e) => return Some(e.to_string()),
        Ok(0) => return Some("the node closed the connection after the handshake".into()),
        Ok(_) => return None,
    }
    tls.sock.set_read_timeout(Some(timeout)).ok()?;
    // Protocol v4 OPTIONS: version, flags, stream 0, opcode 5, empty body.
    const OPTIONS: [u8; 9] = [0x04, 0, 0, 0, 0x05, 0, 0, 0, 0];
    let written = tls.write_all(&OPTIONS).and_then(|_| tls.flush());
    // The node's alert may arrive before the request is out (a closed socket fails the
    // write): reading processes it either way, and names the cause better than the write.
    let mut header = [0u8; 9];
    match (tls.read_exact(&mut header), written) {
        (Ok(()), Ok(())) => None,
        (Err(read), Err(write)) if !read.to_string().contains("alert") => Some(write.to_string()),
        (Err(read), _) => Some(read.to_string()),
        (Ok(()), Err(write)) => Some(write.to_string()),
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
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            crate::invalid!(
                "creating the cluster's {what} in {}: {e}",
                self.dir.display()
            )
        };
        std::fs::create_dir_all(&self.dir).map_err(|e| fail("certificate directory", &e))?;
        let ca_key = rcgen::KeyPair::generate().map_err(|e| fail("CA key", &e))?;
        let mut ca_params =
            rcgen::CertificateParams::new(Vec::<String>::new()).map_err(|e| fail("CA", &e))?;
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "cqlbench local cluster CA");
        ca_params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
            rcgen::KeyUsagePurpose::DigitalSignature,
        ];
        let ca_cert = ca_params.self_signed(&ca_key).map_err(|e| fail("CA", &e))?;
        self.write(&self.ca_key(), &ca_key.serialize_pem(), "CA key")?;
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        self.write(&self.ca(), &ca_cert.pem(), "CA")?;
        let leaf = |names: Vec<String>, cn: &str| -> Result<(String, String), Invalid> {
            let key = rcgen::KeyPair::generate().map_err(|e| fail("key", &e))?;
            let mut p =
                rcgen::CertificateParams::new(names).map_err(|e| fail("certificate", &e))?;
            p.distinguished_name.push(rcgen::DnType::CommonName, cn);
            p.extended_key_usages = vec![
                rcgen::ExtendedKeyUsagePurpose::ServerAuth,
                rcgen::ExtendedKeyUsagePurpose::ClientAuth,
            ];
            let cert = p
                .signed_by(&key, &issuer)
                .map_err(|e| fail("certificate", &e))?;
            Ok((cert.pem(), key.serialize_pem()))
        };
        for (i, addr) in node_addrs.iter().enumerate() {
            let (cert, key) = leaf(vec![addr.clone(), "localhost".into()], addr)?;
            self.write(
                &self.node_keystore(i + 1),
                &format!("{key}{cert}"),
                "node key",
            )?;
        }
        let (cert, key) = leaf(vec!["cqlbench-client".into()], "cqlbench-client")?;
        self.write(&self.client_cert(), &cert, "client certificate")?;
        self.write(&self.client_key(), &key, "client key")?;
        Ok(())
    }

    fn write(&self, path: &Path, text: &str, what: &str) -> Result<(), Invalid> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| crate::invalid!("writing the {what} {}: {e}", path.display()))?;
        f.write_all(text.as_bytes())
            .map_err(|e| crate::invalid!("writing the {what} {}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
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
