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
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};

use crate::error::Invalid;
use crate::spec::client::{HostnameCheck, TlsSpec, TlsVersion};

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
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .map_err(|e| crate::invalid!("--tls-min-version {}: {e}", spec.min_version))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let config = match (&spec.cert, &spec.key) {
        (Some(cert), Some(key)) => {
            let chain = certificates(cert, "--tls-cert")?;
            let key_der = private_key(key)?;
            builder.with_client_auth_cert(chain, key_der).map_err(|e| {
                crate::invalid!(
                    "--tls-key {} does not belong to --tls-cert {}: {e}",
                    key.display(),
                    cert.display()
                )
            })?
        }
        _ => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
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

/// The first private key of a PEM file; an encrypted one is refused (no password is taken).
fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, Invalid> {
    let pem = read(path, "--tls-key")?;
    if String::from_utf8_lossy(&pem).contains("ENCRYPTED PRIVATE KEY") {
        return Err(crate::invalid!(
            "--tls-key {}: the key is encrypted; give it unencrypted (e.g. openssl pkcs8 -in KEY -out PLAIN -nocrypt, kept readable only by you)",
            path.display()
        ));
    }
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        crate::invalid!(
            "--tls-key {}: no private key in it (PEM PKCS#8, PKCS#1 or SEC1 expected): {e}",
            path.display()
        )
    })
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

    fn spec(ca: PathBuf) -> TlsSpec {
        TlsSpec {
            ca,
            cert: None,
            key: None,
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
        assert!(e.contains("the key is encrypted"), "{e}");
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
