//! Client TLS as rustls and aws-lc-rs build it (the `tls` feature): the client configuration
//! of a [`TlsSpec`], a handshake of our own that names why a node refused one, and a local
//! cluster's certificates (rcgen).

use std::path::Path;
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, SignatureScheme};

use super::{LocalCa, key};
use crate::error::Invalid;
use crate::spec::client::{HostnameCheck, TlsSpec, TlsVersion};

/// The rustls client configuration `spec` describes, every file read and checked now: a
/// missing or unreadable file, a file without the certificate or key it should hold, an
/// encrypted key or a key that is not the certificate's is refused in one line naming it.
pub(super) fn config(spec: &TlsSpec) -> Result<Arc<rustls::ClientConfig>, Invalid> {
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

/// Why a TLS connection to `addr` (`host:port`) fails, read from a handshake of its own: the
/// driver may see only a broken connection when a TLS 1.3 node refuses the client's
/// certificate after the handshake (the alert comes after the client's last handshake
/// message, and the driver's first request, still unread when the node closes, turns the
/// close into a reset that discards the alert). So the probe first completes the handshake
/// and listens without sending anything; only when the node stays silent does it send a CQL
/// OPTIONS request and read the answer. None when that works or `addr` cannot be reached.
pub(super) fn probe(addr: &str, config: Arc<rustls::ClientConfig>) -> Option<String> {
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

/// Creates the CA of `ca`, a certificate for each node address (its IP as the subject
/// alternative name) and one for the client ([`LocalCa::create`]).
pub(super) fn create_ca(ca: &LocalCa, node_addrs: &[String]) -> Result<(), Invalid> {
    let fail = |what: &str, e: &dyn std::fmt::Display| {
        crate::invalid!("creating the cluster's {what} in {}: {e}", ca.dir.display())
    };
    std::fs::create_dir_all(&ca.dir).map_err(|e| fail("certificate directory", &e))?;
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
    write(&ca.ca_key(), &ca_key.serialize_pem(), "CA key")?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    write(&ca.ca(), &ca_cert.pem(), "CA")?;
    let leaf = |names: Vec<String>, cn: &str| -> Result<(String, String), Invalid> {
        let key = rcgen::KeyPair::generate().map_err(|e| fail("key", &e))?;
        let mut p = rcgen::CertificateParams::new(names).map_err(|e| fail("certificate", &e))?;
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
        write(
            &ca.node_keystore(i + 1),
            &format!("{key}{cert}"),
            "node key",
        )?;
    }
    let (cert, key) = leaf(vec!["cqlbench-client".into()], "cqlbench-client")?;
    write(&ca.client_cert(), &cert, "client certificate")?;
    write(&ca.client_key(), &key, "client key")?;
    Ok(())
}

fn write(path: &Path, text: &str, what: &str) -> Result<(), Invalid> {
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
