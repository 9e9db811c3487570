//! How the client connects: TLS, and the driver settings an operator tunes to match an
//! application (retries, speculative execution, compression, connections, routing, paging).
//! Recorded in every result's fingerprint, so two runs that differ only here say so.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::Invalid;

/// Client TLS: the CA that signs the nodes' certificates, an optional client certificate
/// (mutual TLS), how the node's name is checked and the lowest protocol version accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsSpec {
    /// PEM file of the certificate authorities trusted for the nodes' certificates.
    pub ca: PathBuf,
    /// PEM certificate (chain) presented to nodes that require client authentication.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert: Option<PathBuf>,
    /// PEM private key of `cert` (PKCS#8, PKCS#1 or SEC1; encrypted PKCS#8 or OpenSSL's
    /// older encrypted PEM with `key_password`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<PathBuf>,
    /// Where the password of an encrypted `key` is read: the place, never the password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_password: Option<KeyPassword>,
    pub hostname: HostnameCheck,
    pub min_version: TlsVersion,
}

impl TlsSpec {
    /// The rules a TLS setting meets wherever it came from: a certificate and its key come
    /// together.
    pub fn check(&self) -> Result<(), Invalid> {
        match (&self.cert, &self.key) {
            (Some(_), None) => Err(crate::invalid!(
                "--tls-cert needs --tls-key (the certificate's private key)"
            )),
            (None, Some(_)) => Err(crate::invalid!(
                "--tls-key needs --tls-cert (the certificate the key belongs to)"
            )),
            (None, None) if self.key_password.is_some() => Err(crate::invalid!(
                "--tls-key-password-file and --tls-key-password-env need --tls-key (the encrypted key they open)"
            )),
            _ => Ok(()),
        }
    }
}

/// Where an encrypted client key's password is read. A password is never a flag's value: a
/// command line is visible to every user of the host (`ps`) and kept in shell histories.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyPassword {
    /// The first line of a file (`--tls-key-password-file`), as `openssl -passin file:` reads it.
    File(PathBuf),
    /// An environment variable of the client's process (`--tls-key-password-env`).
    Env(String),
}

impl fmt::Display for KeyPassword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyPassword::File(p) => write!(f, "--tls-key-password-file {}", p.display()),
            KeyPassword::Env(v) => write!(f, "--tls-key-password-env {v}"),
        }
    }
}

/// Which name the node's certificate must carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostnameCheck {
    /// The address the client connects to (an IP subject alternative name): the default.
    Address,
    /// A fixed DNS name for every node (a certificate issued for a service name, as
    /// K8ssandra's and cert-manager's often are).
    Name(String),
    /// The chain is verified, the name is not (`--tls-no-hostname-check`).
    Skip,
}

/// The lowest TLS version the client offers (1.2 unless told).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum TlsVersion {
    #[serde(rename = "1.2")]
    #[default]
    V1_2,
    #[serde(rename = "1.3")]
    V1_3,
}

impl FromStr for TlsVersion {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        match s.trim() {
            "1.2" | "TLSv1.2" => Ok(TlsVersion::V1_2),
            "1.3" | "TLSv1.3" => Ok(TlsVersion::V1_3),
            other => Err(crate::invalid!(
                "'{other}' is not a TLS version this client speaks (1.2 or 1.3)"
            )),
        }
    }
}

impl fmt::Display for TlsVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TlsVersion::V1_2 => "1.2",
            TlsVersion::V1_3 => "1.3",
        })
    }
}

/// The driver settings of a run. `Default` is the driver's own configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct DriverSpec {
    pub retry: Retry,
    pub speculative: Speculative,
    pub compression: Compression,
    /// Connections to each node (the driver's default: one per node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections_per_host: Option<usize>,
    /// Rack-aware routing: replicas in this rack of the local DC first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack: Option<String>,
    /// Rows per page of a read (the driver's default: 5,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_size: Option<u32>,
    /// The addresses the nodes report, each translated to the one the client reaches that
    /// node at (`--address-map`): behind NAT, a load balancer or a port-forward.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub address_map: Vec<AddressMapping>,
    /// A run that reaches fewer nodes of its data centre than the cluster reports is refused.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub require_all_nodes: bool,
}

/// One address translation, `INTERNAL=EXTERNAL[:PORT]`: the address a node reports
/// (`IP[:PORT]`, port 9042 when left out) and the one the client reaches it at (port: the
/// internal one when left out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AddressMapping {
    pub internal: std::net::SocketAddr,
    pub external: std::net::SocketAddr,
}

impl FromStr for AddressMapping {
    type Err = Invalid;

    fn from_str(s: &str) -> Result<Self, Invalid> {
        let bad = |why: &str| {
            crate::invalid!(
                "--address-map '{s}': {why}; expected INTERNAL=EXTERNAL[:PORT], e.g. 10.0.0.5=203.0.113.7:30042"
            )
        };
        let (internal, external) = s.trim().split_once('=').ok_or_else(|| bad("no '='"))?;
        let internal = socket_addr(internal.trim(), 9042)
            .ok_or_else(|| bad("the internal address is not IP[:PORT]"))?;
        let external = socket_addr(external.trim(), internal.port())
            .ok_or_else(|| bad("the external address is not IP[:PORT]"))?;
        Ok(AddressMapping { internal, external })
    }
}

impl fmt::Display for AddressMapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.internal, self.external)
    }
}

/// `IP`, `IP:PORT`, `[IPv6]:PORT` or a bare IPv6 address, with `port` when none is given.
fn socket_addr(s: &str, port: u16) -> Option<std::net::SocketAddr> {
    if let Ok(a) = s.parse::<std::net::SocketAddr>() {
        return (a.port() != 0).then_some(a);
    }
    s.trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>()
        .ok()
        .map(|ip| std::net::SocketAddr::new(ip, port))
}

/// The mappings one `--address-map` gives (a list, or a file's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressMap(pub Vec<AddressMapping>);

impl FromStr for AddressMap {
    type Err = Invalid;

    fn from_str(s: &str) -> Result<Self, Invalid> {
        parse_address_map(s).map(AddressMap)
    }
}

impl fmt::Display for AddressMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&items.join(","))
    }
}

/// The mappings of `--address-map`: `INTERNAL=EXTERNAL,…`, or `@FILE` with one mapping per
/// line (blank lines and `#` comments skipped).
pub fn parse_address_map(s: &str) -> Result<Vec<AddressMapping>, Invalid> {
    let text = match s.trim().strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| crate::invalid!("--address-map @{path}: {e}"))?,
        None => s.replace(',', "\n"),
    };
    let out: Vec<AddressMapping> = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    if out.is_empty() {
        return Err(crate::invalid!("--address-map '{s}': no mapping given"));
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some(dup) = out.iter().find(|m| !seen.insert(m.internal)) {
        return Err(crate::invalid!(
            "--address-map: {} is mapped twice",
            dup.internal
        ));
    }
    Ok(out)
}

/// Most connections per node a run opens.
pub const MAX_CONNECTIONS_PER_HOST: usize = 64;

impl DriverSpec {
    pub fn check(&self) -> Result<(), Invalid> {
        if let Some(n) = self.connections_per_host
            && !(1..=MAX_CONNECTIONS_PER_HOST).contains(&n)
        {
            return Err(crate::invalid!(
                "--connections-per-host {n}: give 1 to {MAX_CONNECTIONS_PER_HOST}"
            ));
        }
        if let Some(p) = self.page_size
            && !(1..=i32::MAX as u32).contains(&p)
        {
            return Err(crate::invalid!(
                "--page-size {p}: give 1 to {} rows",
                i32::MAX
            ));
        }
        if let Some(r) = &self.rack
            && r.trim().is_empty()
        {
            return Err(crate::invalid!("--rack: give a rack name"));
        }
        let mut seen = std::collections::BTreeSet::new();
        if let Some(dup) = self.address_map.iter().find(|m| !seen.insert(m.internal)) {
            return Err(crate::invalid!(
                "--address-map: {} is mapped twice",
                dup.internal
            ));
        }
        Ok(())
    }
}

/// What the driver does when a request fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Retry {
    /// The driver's default policy (read timeouts with enough replies retried once on the
    /// same node, unavailable once on the next node, overloaded and broken connections on
    /// the next node for idempotent requests).
    #[default]
    Default,
    /// Every failure is the operation's error.
    None,
    /// Up to N retries on the next node, for any failure of an idempotent request that
    /// another node may not repeat (timeouts, unavailable, overloaded, broken connections).
    Count(u32),
}

/// Most retries per request `--retry N` takes.
pub const MAX_RETRIES: u32 = 10;

impl FromStr for Retry {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        match s.trim() {
            "default" => Ok(Retry::Default),
            "none" | "0" => Ok(Retry::None),
            n => match n.parse::<u32>() {
                Ok(n) if n <= MAX_RETRIES => Ok(Retry::Count(n)),
                _ => Err(crate::invalid!(
                    "--retry '{n}': give default, none or a number of retries from 1 to {MAX_RETRIES}"
                )),
            },
        }
    }
}

impl fmt::Display for Retry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Retry::Default => f.write_str("default"),
            Retry::None => f.write_str("none"),
            Retry::Count(n) => write!(f, "{n}"),
        }
    }
}

/// Speculative execution: another node is asked when the first is slow to answer
/// (idempotent requests only).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Speculative {
    #[default]
    Off,
    /// After a fixed delay, up to `max` extra requests, one per delay.
    Delay { delay_ms: f64, max: u32 },
    /// After the given percentile of the recent service times of the run, up to `max`.
    Percentile { percentile: f64, max: u32 },
}

impl Eq for Speculative {}

/// Most extra requests a speculative execution sends.
pub const MAX_SPECULATIVE: u32 = 4;

impl FromStr for Speculative {
    type Err = Invalid;
    /// `off`; `DELAY[:MAX]` (a duration, e.g. `20ms:2`); `pNN[:MAX]` (e.g. `p99`, `p99.9:1`).
    fn from_str(s: &str) -> Result<Self, Invalid> {
        let s = s.trim();
        let bad = || {
            crate::invalid!(
                "--speculative '{s}': give off, a delay (20ms, 20ms:2 for up to 2 extra requests) or a percentile of recent service times (p99, p99:2)"
            )
        };
        if s == "off" {
            return Ok(Speculative::Off);
        }
        let (when, max) = match s.split_once(':') {
            Some((w, m)) => (w, m.parse::<u32>().map_err(|_| bad())?),
            None => (s, 1),
        };
        if !(1..=MAX_SPECULATIVE).contains(&max) {
            return Err(crate::invalid!(
                "--speculative '{s}': give 1 to {MAX_SPECULATIVE} extra requests"
            ));
        }
        if let Some(p) = when.strip_prefix('p') {
            let percentile: f64 = p.parse().map_err(|_| bad())?;
            if !(percentile > 0.0 && percentile < 100.0) {
                return Err(crate::invalid!(
                    "--speculative '{s}': a percentile lies between 0 and 100"
                ));
            }
            return Ok(Speculative::Percentile { percentile, max });
        }
        let delay = crate::spec::parse_duration(when).map_err(|_| bad())?;
        if delay.is_zero() || delay > Duration::from_secs(60) {
            return Err(crate::invalid!(
                "--speculative '{s}': give a delay above 0 and up to 60s"
            ));
        }
        Ok(Speculative::Delay {
            delay_ms: delay.as_secs_f64() * 1000.0,
            max,
        })
    }
}

impl fmt::Display for Speculative {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Speculative::Off => f.write_str("off"),
            Speculative::Delay { delay_ms, max } => {
                let d = Duration::from_secs_f64(delay_ms / 1000.0);
                write!(f, "{}:{max}", humantime::format_duration(d))
            }
            Speculative::Percentile { percentile, max } => write!(f, "p{percentile}:{max}"),
        }
    }
}

/// Compression of the frames between client and nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Compression {
    #[default]
    None,
    Lz4,
    Snappy,
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::None => "none",
            Compression::Lz4 => "lz4",
            Compression::Snappy => "snappy",
        })
    }
}

impl FromStr for Compression {
    type Err = Invalid;
    fn from_str(s: &str) -> Result<Self, Invalid> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" | "off" => Ok(Compression::None),
            "lz4" => Ok(Compression::Lz4),
            "snappy" => Ok(Compression::Snappy),
            other => Err(crate::invalid!(
                "--compression '{other}': give none, lz4 or snappy"
            )),
        }
    }
}

/// TLS and driver settings together, as a result records them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ClientSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsSpec>,
    #[serde(default)]
    pub driver: DriverSpec,
}

impl ClientSpec {
    /// A short description for a report's settings table: `plain`, or what differs from the
    /// driver's defaults (`mTLS 1.3+, lz4, retry 2, speculative 20ms:1, 2 conns, page 100`).
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if let Some(t) = &self.tls {
            let kind = if t.cert.is_some() { "mTLS" } else { "TLS" };
            parts.push(match t.min_version {
                TlsVersion::V1_2 => kind.to_string(),
                TlsVersion::V1_3 => format!("{kind} 1.3"),
            });
        }
        let d = &self.driver;
        if d.compression != Compression::None {
            parts.push(d.compression.to_string());
        }
        if d.retry != Retry::Default {
            parts.push(format!("retry {}", d.retry));
        }
        if d.speculative != Speculative::Off {
            parts.push(format!("speculative {}", d.speculative));
        }
        if let Some(n) = d.connections_per_host {
            parts.push(format!("{n} conns"));
        }
        if let Some(r) = &d.rack {
            parts.push(format!("rack {r}"));
        }
        if let Some(p) = d.page_size {
            parts.push(format!("page {p}"));
        }
        if !d.address_map.is_empty() {
            parts.push(format!("{} addresses mapped", d.address_map.len()));
        }
        if parts.is_empty() {
            "plain".into()
        } else {
            parts.join(", ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_speculative_and_compression_read_back_what_they_print() {
        for s in ["default", "none", "3"] {
            assert_eq!(s.parse::<Retry>().unwrap().to_string(), s);
        }
        assert_eq!("0".parse::<Retry>().unwrap(), Retry::None);
        assert!("11".parse::<Retry>().unwrap_err().contains("1 to 10"));
        assert!("many".parse::<Retry>().is_err());
        for (given, shown) in [
            ("off", "off"),
            ("20ms", "20ms:1"),
            ("1s:2", "1s:2"),
            ("p99", "p99:1"),
            ("p99.9:3", "p99.9:3"),
        ] {
            let s: Speculative = given.parse().unwrap();
            assert_eq!(s.to_string(), shown);
            assert_eq!(shown.parse::<Speculative>().unwrap(), s);
        }
        for bad in [
            "p100", "p0", "20ms:0", "20ms:9", "0ms", "soon", "p99:x", "2m",
        ] {
            assert!(bad.parse::<Speculative>().is_err(), "{bad}");
        }
        assert_eq!("LZ4".parse::<Compression>().unwrap(), Compression::Lz4);
        assert!("zstd".parse::<Compression>().is_err());
        assert_eq!("1.3".parse::<TlsVersion>().unwrap(), TlsVersion::V1_3);
        assert!(
            "1.1"
                .parse::<TlsVersion>()
                .unwrap_err()
                .contains("1.2 or 1.3")
        );
    }

    #[test]
    fn address_maps_parse_from_flags_and_files() {
        let m =
            parse_address_map("198.18.0.11=198.19.1.1, 198.18.0.12:9042=198.19.0.1:30042").unwrap();
        assert_eq!(m[0].to_string(), "198.18.0.11:9042=198.19.1.1:9042");
        assert_eq!(m[1].to_string(), "198.18.0.12:9042=198.19.0.1:30042");
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("map.txt");
        std::fs::write(
            &f,
            "# lab\n198.18.0.11=198.19.1.1\n\n198.18.0.12=198.19.1.2 # two\n",
        )
        .unwrap();
        let from_file = parse_address_map(&format!("@{}", f.display())).unwrap();
        assert_eq!(from_file.len(), 2);
        for (bad, why) in [
            ("198.18.0.11", "no '='"),
            ("node1=198.19.1.1", "internal address"),
            ("198.18.0.11=lb.example", "external address"),
            ("198.18.0.11=1.1.1.1,198.18.0.11=1.1.1.2", "mapped twice"),
            ("", "no mapping"),
            ("@/no/such/map", "@/no/such/map"),
        ] {
            let e = parse_address_map(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn driver_and_tls_settings_are_checked() {
        let d = DriverSpec {
            connections_per_host: Some(0),
            ..Default::default()
        };
        assert!(d.check().unwrap_err().contains("--connections-per-host 0"));
        let d = DriverSpec {
            page_size: Some(0),
            ..Default::default()
        };
        assert!(d.check().unwrap_err().contains("--page-size 0"));
        assert!(DriverSpec::default().check().is_ok());
        let t = TlsSpec {
            ca: "ca.pem".into(),
            cert: Some("c.pem".into()),
            key: None,
            key_password: None,
            hostname: HostnameCheck::Address,
            min_version: TlsVersion::V1_2,
        };
        assert!(t.check().unwrap_err().contains("--tls-key"));
        assert_eq!(ClientSpec::default().summary(), "plain");
        let c = ClientSpec {
            tls: Some(TlsSpec {
                key: Some("k.pem".into()),
                min_version: TlsVersion::V1_3,
                ..t
            }),
            driver: DriverSpec {
                retry: Retry::Count(2),
                compression: Compression::Lz4,
                speculative: "20ms:1".parse().unwrap(),
                connections_per_host: Some(2),
                rack: None,
                page_size: Some(100),
                address_map: vec![],
                require_all_nodes: false,
            },
        };
        assert_eq!(
            c.summary(),
            "mTLS 1.3, lz4, retry 2, speculative 20ms:1, 2 conns, page 100"
        );
    }
}
