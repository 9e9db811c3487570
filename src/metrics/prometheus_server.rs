//! The nodes' and their hosts' figures fetched after a run from a Prometheus server that
//! scraped the hosts' node exporters and the nodes' metrics endpoints, for clusters whose
//! endpoints the client cannot reach: range queries (`/api/v1/query_range` of the server's
//! HTTP API, over `ureq`, its JSON answers decoded into [`api`]'s types) of the very series the
//! direct scrapes read over the run's window, at the run's sampling period.
//! - A host's: the exporter's counters ([`node_exporter::NAMES`]); each step's values become
//!   the exporter's counters ([`node_exporter::counters_of`]) and two steps one [`HostSample`]
//!   through [`node_exporter::sample`].
//! - A node's: the series of each figure's sources ([`sources::ALL`], every exporter dialect);
//!   each step's values become a [`NodeReading`] through [`reading`] and two steps one
//!   [`NodeSample`] through [`node_sample`].
//!
//! One model per kind, another source. Each node is mapped to an `instance` label of each
//! kind (an instance with `node_cpu_seconds_total` is a host's exporter, one with a
//! Cassandra-only name a node's endpoint), as given (`NODE=INSTANCE`, either kind) or found
//! from the node's address (an instance whose host part is the address); what was not found
//! (a node without an instance, an instance without some series) is listed in the result.
//! Rates are taken over the time between the two scrapes a pair of steps saw (the server's
//! `timestamp(up)`), so a step that saw no new scrape gives no sample rather than a zero.
//!
//! [`HostSample`]: crate::result::series::HostSample
//! [`NodeSample`]: crate::result::series::NodeSample

mod api;
pub mod latest;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::names::{Source, cassandra_only, sources};
use super::node_exporter::{self, Counters, NAMES};
use super::prometheus::Sample as Line;
use super::reading::{NodeReading, node_sample, reading};
use crate::result::series::{Fetched, FetchedNode, HostSample, NodeHost, NodeSample, Sample};

/// A Prometheus server, by its URL (`http[s]://host[:port][/prefix]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Server {
    pub url: String,
}

impl Server {
    /// Parses and checks a server URL.
    pub fn parse(s: &str) -> Result<Server, crate::error::Invalid> {
        let bad = |why: &str| {
            crate::invalid!(
                "'{s}' is not a Prometheus server URL: {why} (expected http[s]://host:port, e.g. http://10.0.0.9:9090)"
            )
        };
        let t = s.trim();
        if !(t.starts_with("http://") || t.starts_with("https://")) {
            return Err(bad("it must start with http:// or https://"));
        }
        if t.starts_with("https://") {
            crate::tls::available(&format!("'{t}'"))?;
        }
        if t.contains(['?', '#']) {
            return Err(bad("no query or fragment"));
        }
        // The host is checked first: the URI parser calls a bare `http://` an empty string.
        let authority = t.split_once("://").map_or("", |(_, r)| r);
        let authority = authority.split('/').next().unwrap_or("");
        if authority.is_empty() || authority.starts_with(':') {
            return Err(bad("empty host"));
        }
        let _: ureq::http::Uri = t
            .parse()
            .map_err(|e: ureq::http::uri::InvalidUri| bad(&e.to_string()))?;
        // The parser keeps any digits as the port.
        let port = authority.rsplit_once(':').map(|(_, p)| p);
        if port.is_some_and(|p| !p.contains(']') && p.parse::<u16>().is_err()) {
            return Err(bad("invalid port"));
        }
        Ok(Server {
            url: t.trim_end_matches('/').to_string(),
        })
    }
}

/// A node's host's exporter as the server labels it: `NODE=INSTANCE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeInstance {
    /// The Cassandra node (`node1`, `10.0.0.5`).
    pub node: String,
    /// The exporter's `instance` label (`10.0.0.5:9100`).
    pub instance: String,
}

impl NodeInstance {
    /// Parses `NODE=INSTANCE`.
    pub fn parse(s: &str) -> Result<NodeInstance, crate::error::Invalid> {
        let bad = |why: &str| {
            crate::invalid!(
                "'{s}' is not a node's instance: {why} (expected NODE=INSTANCE, e.g. node1=10.0.0.5:9100)"
            )
        };
        let (node, instance) = s.split_once('=').ok_or_else(|| bad("no '='"))?;
        let (node, instance) = (node.trim(), instance.trim());
        if node.is_empty() {
            return Err(bad("no node name"));
        }
        if instance.is_empty() {
            return Err(bad("no instance"));
        }
        if instance.contains(|c: char| c.is_whitespace() || c == '"' || c == '\\') {
            return Err(bad("an instance has no spaces, quotes or backslashes"));
        }
        Ok(NodeInstance {
            node: node.to_string(),
            instance: instance.to_string(),
        })
    }
}

/// How a request gets past a server's front door (a reverse proxy's, or Prometheus's own
/// `--web.config.file`): credentials, and the CA of an https server signed by a private one.
/// Never recorded in results; its Debug form hides the secrets.
#[derive(Clone, Default, PartialEq)]
pub struct Access {
    pub auth: Option<Auth>,
    /// PEM certificates trusted instead of the platform's roots (checked by [`Access::ca`]).
    pub ca_pem: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq)]
pub enum Auth {
    Basic { user: String, password: String },
    Bearer(String),
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let auth = match &self.auth {
            None => "none",
            Some(Auth::Basic { .. }) => "basic (hidden)",
            Some(Auth::Bearer(_)) => "bearer token (hidden)",
        };
        write!(
            f,
            "Access {{ auth: {auth}, ca: {} }}",
            self.ca_pem.is_some()
        )
    }
}

impl Access {
    /// The certificates of a PEM text, refused in one line when it holds none or a bad one.
    pub fn ca(pem: Vec<u8>, name: &str) -> Result<Vec<u8>, crate::error::Invalid> {
        crate::tls::available(name)?;
        #[cfg(feature = "tls")]
        {
            let certs = api::certificates(&pem)
                .map_err(|e| crate::invalid!("{name}: not a PEM certificate file: {e}"))?;
            if certs.is_empty() {
                return Err(crate::invalid!("{name}: no certificate in it"));
            }
        }
        Ok(pem)
    }

    /// The `Authorization` header's value, if any.
    fn authorization(&self) -> Option<String> {
        use base64::Engine;
        match &self.auth {
            None => None,
            Some(Auth::Basic { user, password }) => Some(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
            )),
            Some(Auth::Bearer(t)) => Some(format!("Bearer {t}")),
        }
    }
}

/// What to fetch, and over which window.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchSpec {
    pub server: Server,
    /// Credentials and CA for the server.
    pub access: Access,
    /// Instances given for nodes (the others are found from their addresses).
    pub instances: Vec<NodeInstance>,
    /// The run's nodes: name and address.
    pub nodes: Vec<(String, String)>,
    /// The window, Unix seconds.
    pub start_unix_s: f64,
    pub end_unix_s: f64,
    /// The run's start (the origin of `t_s`), Unix seconds.
    pub t0_unix_s: f64,
    /// The range queries' step.
    pub step_s: f64,
    /// How long one request may take.
    pub timeout: Duration,
}

/// Why nothing could be fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The server did not answer, or answered with an error.
    #[error("Prometheus server {url}: {what}")]
    Server { url: String, what: String },
    /// No node could be mapped to an instance of either kind.
    #[error(
        "Prometheus server {url}: no node exporter's or Cassandra metrics' instance for any node ({nodes}); instances in the run's window: {seen} (give --prometheus-instance NODE=INSTANCE)"
    )]
    NoneMapped {
        url: String,
        nodes: String,
        seen: String,
    },
}

/// A node mapped to its exporter's series.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapped {
    pub node: String,
    pub instance: String,
    pub job: Option<String>,
}

/// The host part of an instance label: `10.0.0.5` of `10.0.0.5:9100`, `::1` of `[::1]:9100`.
pub fn host_part(instance: &str) -> &str {
    if let Some(rest) = instance.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match instance.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') && p.chars().all(|c| c.is_ascii_digit()) => h,
        _ => instance,
    }
}

/// The instances a server scraped in the run's window, with their jobs, by kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Seen {
    /// Node exporters' (with `node_cpu_seconds_total`).
    pub hosts: Vec<(String, String)>,
    /// Cassandra nodes' metrics endpoints (with a Cassandra-only name).
    pub nodes: Vec<(String, String)>,
}

/// Maps nodes to the `(instance, job)`s the server has, of each kind: the instances given
/// first (to the kind whose series they have), then each other node to an instance whose
/// host part is its address (or its name). Returns the nodes mapped to hosts' exporters, to
/// nodes' endpoints, and what was not found, one line per node and kind.
pub fn map_nodes(
    given: &[NodeInstance],
    nodes: &[(String, String)],
    seen: &Seen,
) -> (Vec<Mapped>, Vec<Mapped>, Vec<String>) {
    let job_in = |list: &[(String, String)], instance: &str| {
        list.iter()
            .find(|(i, _)| i == instance)
            .map(|(_, j)| j.clone())
    };
    let (mut hosts, mut cassandra, mut missing) = (Vec::new(), Vec::new(), Vec::new());
    for g in given {
        let mapped = |job: String| Mapped {
            node: g.node.clone(),
            instance: g.instance.clone(),
            job: Some(job),
        };
        let (h, c) = (
            job_in(&seen.hosts, &g.instance),
            job_in(&seen.nodes, &g.instance),
        );
        if h.is_none() && c.is_none() {
            missing.push(format!(
                "{}: instance '{}' has neither node_cpu_seconds_total nor a Cassandra metric in the run's window",
                g.node, g.instance
            ));
        }
        hosts.extend(h.map(mapped));
        cassandra.extend(c.map(mapped));
    }
    // A node with an instance given: that one, or (not found) none of this kind.
    let given_for = |name: &str, address: &str, mapped: &[Mapped]| {
        given.iter().any(|g| {
            (g.node == name || g.node == address)
                && (mapped.iter().any(|m| m.instance == g.instance)
                    || !(seen.hosts.iter().chain(&seen.nodes)).any(|(i, _)| i == &g.instance))
        })
    };
    for (list, mapped, what) in [
        (&seen.hosts, &mut hosts, "node exporter"),
        (&seen.nodes, &mut cassandra, "Cassandra metrics"),
    ] {
        for (name, address) in nodes {
            if given_for(name, address, mapped) {
                continue;
            }
            let address = host_part(address);
            match list
                .iter()
                .find(|(i, _)| host_part(i) == address || host_part(i) == name)
            {
                Some((instance, job)) => mapped.push(Mapped {
                    node: name.clone(),
                    instance: instance.clone(),
                    job: Some(job.clone()),
                }),
                None => missing.push(format!(
                    "{name}: no {what} instance with host {address} (give --prometheus-instance {name}=INSTANCE)"
                )),
            }
        }
    }
    (hosts, cassandra, missing)
}

/// One series of a range query's matrix: its metric name, labels and points `(t, value)`.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeSeries {
    pub name: String,
    pub labels: Vec<(String, String)>,
    pub points: Vec<(f64, f64)>,
}

impl RangeSeries {
    fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the series is of host `h`'s exporter.
    fn of(&self, h: &Mapped) -> bool {
        self.label("instance") == Some(h.instance.as_str())
            && h.job
                .as_deref()
                .is_none_or(|j| self.label("job") == Some(j))
    }
}

/// The steps of a window: `start`, `start + step`, … up to its end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grid {
    pub start_unix_s: f64,
    pub step_s: f64,
    pub steps: usize,
}

impl Grid {
    pub fn new(start_unix_s: f64, end_unix_s: f64, step_s: f64) -> Grid {
        let n = ((end_unix_s - start_unix_s).max(0.0) / step_s + 1e-9).floor();
        Grid {
            start_unix_s,
            step_s,
            steps: n as usize + 1,
        }
    }

    fn time(&self, i: usize) -> f64 {
        self.start_unix_s + i as f64 * self.step_s
    }

    /// The step a point at `t` is on (the nearest), if it is in the window.
    fn index(&self, t: f64) -> Option<usize> {
        let i = ((t - self.start_unix_s) / self.step_s).round();
        (i >= 0.0 && (i as usize) < self.steps).then_some(i as usize)
    }
}

/// The fetched figures of range queries' series over `grid`: `series` (the counters, of
/// every instance, one series per name and labels) and `scrapes` (`timestamp(up)`: when the
/// scrape each step saw was taken, per instance; an instance without it takes the step's
/// time), for `hosts` (node exporters) and `nodes` (nodes' metrics endpoints), on the run's
/// axis from `t0_unix_s`. Returns one sample per step, each host's devices, and what each
/// host's and node's instance lacked.
pub fn samples_of(
    series: &[RangeSeries],
    scrapes: &[RangeSeries],
    (hosts, nodes): (&[Mapped], &[Mapped]),
    grid: Grid,
    t0_unix_s: f64,
) -> (Vec<Sample>, Vec<Vec<String>>, Vec<String>) {
    let mut per_host: Vec<Vec<Option<HostSample>>> = Vec::new();
    let (mut devices, mut missing) = (Vec::new(), Vec::new());
    for h in hosts {
        let mine: Vec<&RangeSeries> = series.iter().filter(|s| s.of(h)).collect();
        missing.extend(missing_series(h, &mine));
        let (at, scraped) = steps_of(&mine, scrapes, h, grid);
        let mut prev: Option<(f64, Counters)> = None;
        let mut host_devices: Vec<String> = Vec::new();
        let figures = (0..grid.steps)
            .map(|i| {
                let now = node_exporter::counters_of(&at[i]);
                if now.cpu.total() == 0 {
                    return None;
                }
                if host_devices.is_empty() {
                    host_devices = now.devices();
                }
                let when = scraped[i].unwrap_or(grid.time(i));
                match &prev {
                    Some((p, _)) if when <= *p + 1e-6 => None,
                    _ => {
                        let figures = prev.as_ref().map(|(p, before)| {
                            node_exporter::sample(&now, before, &host_devices, when - p)
                        });
                        prev = Some((when, now));
                        figures
                    }
                }
            })
            .collect();
        per_host.push(figures);
        devices.push(host_devices);
    }
    let mut per_node: Vec<Vec<NodeSample>> = Vec::new();
    for n in nodes {
        let mine: Vec<&RangeSeries> = series.iter().filter(|s| s.of(n)).collect();
        missing.extend(missing_figures(n, &mine));
        let (at, scraped) = steps_of(&mine, scrapes, n, grid);
        let mut prev: Option<(f64, NodeReading)> = None;
        let without = |why: &str| NodeSample {
            missing: Some(why.to_string()),
            ..NodeSample::default()
        };
        let figures = (0..grid.steps)
            .map(|i| {
                if at[i].is_empty() {
                    return without("no scrape held by Prometheus at this step");
                }
                let now = reading(&at[i]);
                let when = scraped[i].unwrap_or(grid.time(i));
                match &prev {
                    Some((p, _)) if when <= *p + 1e-6 => {
                        without("no new scrape held by Prometheus since the previous step")
                    }
                    _ => {
                        let sample = node_sample(
                            &now,
                            prev.as_ref().map(|(_, r)| r),
                            prev.as_ref().map_or(0.0, |(p, _)| when - p),
                        );
                        prev = Some((when, now));
                        sample
                    }
                }
            })
            .collect();
        per_node.push(figures);
    }
    let samples = (0..grid.steps)
        .map(|i| Sample {
            t_s: grid.time(i) - t0_unix_s,
            nodes: per_node.iter().map(|f| f[i].clone()).collect(),
            host: None,
            node_hosts: per_host
                .iter()
                .map(|f: &Vec<Option<HostSample>>| f[i].clone())
                .collect(),
        })
        .collect();
    (samples, devices, missing)
}

/// An instance's series by step (each step the points on it, a point on the step nearest
/// its time, one per series) and when the scrape each step saw was taken.
fn steps_of(
    mine: &[&RangeSeries],
    scrapes: &[RangeSeries],
    m: &Mapped,
    grid: Grid,
) -> (Vec<Vec<Line>>, Vec<Option<f64>>) {
    let mut at: Vec<Vec<Line>> = vec![Vec::new(); grid.steps];
    for s in mine {
        let mut last = None;
        for (t, v) in &s.points {
            let Some(i) = grid.index(*t).filter(|i| last != Some(*i)) else {
                continue;
            };
            last = Some(i);
            at[i].push(Line {
                name: s.name.clone(),
                labels: s.labels.clone(),
                value: *v,
            });
        }
    }
    let mut scraped: Vec<Option<f64>> = vec![None; grid.steps];
    for s in scrapes.iter().filter(|s| s.of(m)) {
        for (t, v) in &s.points {
            if let Some(i) = grid.index(*t) {
                scraped[i] = Some(*v);
            }
        }
    }
    (at, scraped)
}

/// Whether a series is one a source names (its name, and its label if the source asks one).
fn is_source(s: &RangeSeries, &(name, label): &Source) -> bool {
    s.name == name && label.is_none_or(|(k, v)| s.label(k) == Some(v))
}

/// The figures node `n`'s instance has no series for, from any source.
fn missing_figures(n: &Mapped, mine: &[&RangeSeries]) -> Vec<String> {
    let absent: Vec<&str> = sources::ALL
        .iter()
        .filter(|(_, srcs)| {
            !srcs
                .iter()
                .any(|src| mine.iter().any(|s| is_source(s, src)))
        })
        .map(|(figure, _)| *figure)
        .collect();
    if absent.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "{} ({}): {}",
        n.node,
        n.instance,
        absent.join(", ")
    )]
}

/// The distinct sources of every figure: one range query each.
fn node_sources() -> Vec<Source> {
    let mut out: Vec<Source> = Vec::new();
    for (_, srcs) in sources::ALL {
        for src in *srcs {
            if !out.contains(src) {
                out.push(*src);
            }
        }
    }
    out
}

/// The series of [`NAMES`] host `h` lacks, by family (`node_disk_*` when all of them).
fn missing_series(h: &Mapped, mine: &[&RangeSeries]) -> Vec<String> {
    let absent: Vec<&str> = NAMES
        .iter()
        .copied()
        .filter(|n| !mine.iter().any(|s| s.name == *n))
        .collect();
    let mut out: Vec<String> = Vec::new();
    for family in [
        "node_cpu_",
        "node_disk_",
        "node_load",
        "node_memory_",
        "node_network_",
    ] {
        let all: Vec<&str> = NAMES
            .iter()
            .copied()
            .filter(|n| n.starts_with(family))
            .collect();
        let gone: Vec<&str> = absent
            .iter()
            .copied()
            .filter(|n| n.starts_with(family))
            .collect();
        if gone.is_empty() {
            continue;
        }
        if gone.len() == all.len() && all.len() > 1 {
            out.push(format!("{family}*"));
        } else {
            out.extend(gone.iter().map(|n| n.to_string()));
        }
    }
    if out.is_empty() {
        return Vec::new();
    }
    vec![format!("{} ({}): {}", h.node, h.instance, out.join(", "))]
}

/// A PromQL regex matching exactly these values (`a|b`, metacharacters escaped).
fn any_of(values: &[&str]) -> String {
    values
        .iter()
        .map(|v| {
            v.chars().fold(String::new(), |mut out, c| {
                if r".+*?()|[]{}^$\".contains(c) {
                    out.push_str("\\\\");
                }
                if c == '"' {
                    out.push('\\');
                }
                out.push(c);
                out
            })
        })
        .collect::<Vec<_>>()
        .join("|")
}

/// The most steps one range query asks for (the server refuses more than 11,000 points per
/// series).
const MAX_STEPS: f64 = 10_000.0;

fn server_error(spec: &FetchSpec, what: impl std::fmt::Display) -> FetchError {
    FetchError::Server {
        url: spec.server.url.clone(),
        what: what.to_string(),
    }
}

/// The `(instance, job)`s with a series of any of `names` in the last `window_s` before `end`
/// (one count per name, joined with `or`: counting over a regex of names would make series
/// that differ only in their name, which PromQL refuses).
fn instances_with(
    client: &api::Client,
    spec: &FetchSpec,
    names: &[&str],
    (window_s, end): (i64, i64),
) -> Result<Vec<(String, String)>, FetchError> {
    let q = names
        .iter()
        .map(|n| format!("count by (instance, job) (count_over_time({n}[{window_s}s]))"))
        .collect::<Vec<_>>()
        .join(" or ");
    let found = client.query(&q, end).map_err(|e| server_error(spec, e))?;
    let mut seen: Vec<(String, String)> = found
        .into_iter()
        .filter_map(|mut m| Some((m.remove("instance")?, m.remove("job")?)))
        .collect();
    seen.sort();
    Ok(seen)
}

/// A selector of `name`, on `matcher`'s instances, with `label` if given (a regex of the
/// value alone: PromQL anchors it).
fn selector(name: &str, label: Option<(&str, &str)>, matcher: &str) -> String {
    match label {
        Some((k, v)) => format!("{name}{{{matcher},{k}=~\"{}\"}}", any_of(&[v])),
        None => format!("{name}{{{matcher}}}"),
    }
}

/// A client of `spec`'s server, with its credentials and CA.
fn client(spec: &FetchSpec) -> api::Client {
    api::Client::new(
        &spec.server.url,
        spec.timeout,
        spec.access.ca_pem.as_deref(),
        spec.access.authorization(),
    )
}

/// The names only a Cassandra node's endpoint serves: what tells its instances on a server.
fn cassandra_names() -> Vec<&'static str> {
    super::names::NAMES
        .iter()
        .copied()
        .filter(|n| cassandra_only(n))
        .collect()
}

/// Fetches the window's series of the nodes' hosts from the server (blocking). An error when
/// the server does not answer, answers with an error, or has no instance for any node.
pub fn fetch(spec: &FetchSpec) -> Result<Fetched, FetchError> {
    let client = client(spec);
    let (start, end) = (
        spec.start_unix_s.floor() as i64,
        spec.end_unix_s.ceil() as i64,
    );
    // Which exporters and nodes' endpoints the server scraped in the window, with their jobs.
    let window = ((end - start).max(1), end);
    let seen = Seen {
        hosts: instances_with(&client, spec, &["node_cpu_seconds_total"], window)?,
        nodes: instances_with(&client, spec, &cassandra_names(), window)?,
    };
    let (hosts, nodes, mut missing) = map_nodes(&spec.instances, &spec.nodes, &seen);
    if hosts.is_empty() && nodes.is_empty() {
        let all: Vec<String> = seen
            .hosts
            .iter()
            .map(|(i, j)| format!("{i} (job {j}, node exporter)"))
            .chain(
                seen.nodes
                    .iter()
                    .map(|(i, j)| format!("{i} (job {j}, Cassandra)")),
            )
            .collect();
        return Err(FetchError::NoneMapped {
            url: spec.server.url.clone(),
            nodes: spec
                .nodes
                .iter()
                .map(|(n, _)| n.as_str())
                .chain(spec.instances.iter().map(|i| i.node.as_str()))
                .collect::<Vec<_>>()
                .join(", "),
            seen: if all.is_empty() {
                "none".into()
            } else {
                all.join(", ")
            },
        });
    }
    let matcher = |mapped: &[Mapped]| {
        let instances: Vec<&str> = mapped.iter().map(|h| h.instance.as_str()).collect();
        format!("instance=~\"{}\"", any_of(&instances))
    };
    let mut queries: Vec<String> = Vec::new();
    if !hosts.is_empty() {
        let m = matcher(&hosts);
        queries.extend(NAMES.iter().map(|name| selector(name, None, &m)));
    }
    if !nodes.is_empty() {
        let m = matcher(&nodes);
        queries.extend(
            node_sources()
                .iter()
                .map(|(name, label)| selector(name, *label, &m)),
        );
    }
    let both: Vec<Mapped> = hosts.iter().chain(&nodes).cloned().collect();
    let up = format!("timestamp(up{{{}}})", matcher(&both));
    let step = spec.step_s.max(0.001);
    let (mut series, mut scrapes) = (Vec::new(), Vec::new());
    let mut from = start;
    while from <= end {
        let to = end.min(from + (step * MAX_STEPS) as i64);
        for q in &queries {
            series.extend(range(&client, spec, q, (from, to), step)?);
        }
        scrapes.extend(range(&client, spec, &up, (from, to), step)?);
        from = to + step.ceil().max(1.0) as i64;
    }
    let grid = Grid::new(start as f64, end as f64, step);
    let (series, scrapes) = (merged(series), merged(scrapes));
    let (samples, devices, lacking) =
        samples_of(&series, &scrapes, (&hosts, &nodes), grid, spec.t0_unix_s);
    missing.extend(lacking);
    Ok(Fetched {
        server: spec.server.url.clone(),
        step_s: step,
        start_unix_s: start as f64,
        end_unix_s: end as f64,
        hosts: hosts
            .iter()
            .zip(devices)
            .map(|(h, devices)| NodeHost {
                node: h.node.clone(),
                exporter: h.instance.clone(),
                devices,
                job: h.job.clone(),
            })
            .collect(),
        nodes: nodes
            .iter()
            .map(|n| FetchedNode {
                node: n.node.clone(),
                instance: n.instance.clone(),
                job: n.job.clone(),
            })
            .collect(),
        samples,
        missing,
    })
}

/// The chunks' series joined: one series per name and labels, its points in order.
fn merged(chunks: Vec<RangeSeries>) -> Vec<RangeSeries> {
    let mut by: BTreeMap<(String, Vec<(String, String)>), RangeSeries> = BTreeMap::new();
    for s in chunks {
        match by.entry((s.name.clone(), s.labels.clone())) {
            std::collections::btree_map::Entry::Occupied(mut o) => {
                o.get_mut().points.extend(s.points)
            }
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(s);
            }
        }
    }
    by.into_values().collect()
}

/// One range query's matrix as [`RangeSeries`] (`__name__` taken out of the labels).
fn range(
    client: &api::Client,
    spec: &FetchSpec,
    query: &str,
    (start, end): (i64, i64),
    step: f64,
) -> Result<Vec<RangeSeries>, FetchError> {
    let matrix = client
        .query_range(query, (start, end), step)
        .map_err(|e| server_error(spec, format!("{query}: {e}")))?;
    Ok(matrix
        .into_iter()
        .map(|(mut metric, points)| {
            let name = metric.remove("__name__").unwrap_or_default();
            RangeSeries {
                name,
                // A BTreeMap's pairs come sorted.
                labels: metric.into_iter().collect(),
                points,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::node_exporter::tests::exposition;
    use crate::metrics::prometheus;

    fn host(node: &str, instance: &str) -> Mapped {
        Mapped {
            node: node.into(),
            instance: instance.into(),
            job: Some("node".into()),
        }
    }

    /// The series a server would hold of exporter answers `exposition(k)` scraped at
    /// `scraped(k)`, seen at steps `step(k)`, labelled `instance` and `job`.
    fn matrix(
        ks: &[f64],
        step: impl Fn(f64) -> f64,
        scraped: impl Fn(f64) -> f64,
        instance: &str,
        job: &str,
        scale: f64,
    ) -> (Vec<RangeSeries>, Vec<RangeSeries>) {
        let mut series: Vec<RangeSeries> = Vec::new();
        for &k in ks {
            for line in prometheus::parse_named(&exposition(k), NAMES) {
                let mut labels = line.labels.clone();
                labels.push(("instance".into(), instance.into()));
                labels.push(("job".into(), job.into()));
                labels.sort();
                let point = (step(k), line.value * scale);
                match series
                    .iter_mut()
                    .find(|s| s.name == line.name && s.labels == labels)
                {
                    Some(s) => s.points.push(point),
                    None => series.push(RangeSeries {
                        name: line.name.clone(),
                        labels,
                        points: vec![point],
                    }),
                }
            }
        }
        let up = RangeSeries {
            name: String::new(),
            labels: vec![
                ("instance".into(), instance.into()),
                ("job".into(), job.into()),
            ],
            points: ks.iter().map(|&k| (step(k), scraped(k))).collect(),
        };
        (series, vec![up])
    }

    #[test]
    fn the_same_counters_through_an_exporter_and_a_server_give_identical_samples() {
        let ks = [3.0, 4.0, 5.0];
        // Steps 2 s apart from 1000 s; scrapes 0.25 s before each step.
        let step = |k: f64| 1000.0 + 2.0 * k;
        let (mut series, mut scrapes) =
            matrix(&ks, step, |k| step(k) - 0.25, "10.0.0.5:9100", "node", 1.0);
        // Another host, and the same host under a second job: neither may leak in.
        let (other, other_up) = matrix(&ks, step, step, "10.0.0.6:9100", "node", 7.0);
        let (dup, dup_up) = matrix(&ks, step, step, "10.0.0.5:9100", "federate", 3.0);
        series.extend(other.into_iter().chain(dup));
        scrapes.extend(other_up.into_iter().chain(dup_up));
        let hosts = [host("node1", "10.0.0.5:9100")];
        let (samples, devices, missing) = samples_of(
            &series,
            &scrapes,
            (&hosts, &[]),
            Grid::new(1006.0, 1010.0, 2.0),
            1000.0,
        );
        assert_eq!(devices, [vec!["vda".to_string()]]);
        assert!(missing.is_empty(), "{missing:?}");
        assert_eq!(
            samples.iter().map(|s| s.t_s).collect::<Vec<_>>(),
            [6.0, 8.0, 10.0],
            "one sample per step, on the run's axis"
        );
        assert_eq!(samples[0].node_hosts, [None], "the first step has no rates");
        let c = |k: f64| node_exporter::counters(&exposition(k));
        let from_exporter =
            |k: f64| node_exporter::sample(&c(k), &c(k - 1.0), &["vda".to_string()], 2.0);
        assert_eq!(samples[1].node_hosts, [Some(from_exporter(4.0))]);
        assert_eq!(samples[2].node_hosts, [Some(from_exporter(5.0))]);
        let h = samples[2].node_hosts[0].clone().unwrap();
        assert!((h.cpu_user - 0.3).abs() < 1e-9, "{h:?}");
    }

    /// A JMX exporter's answer at scrape `k`: counters growing with `k`.
    fn jmx_exposition(k: f64) -> String {
        format!(
            "\
org_apache_cassandra_metrics_compaction_value{{name=\"PendingTasks\"}} {pending}
org_apache_cassandra_metrics_compaction_value{{name=\"CompletedTasks\"}} {completed}
org_apache_cassandra_metrics_storage_count{{name=\"Load\"}} 1000.0
process_cpu_seconds_total {cpu}
org_apache_cassandra_metrics_table_count{{name=\"ReadLatency\"}} {reads}
org_apache_cassandra_metrics_table_count{{name=\"ReadTotalLatency\"}} {read_us}
",
            pending = 3.0 * k,
            completed = 10.0 * k,
            cpu = 1.5 * k,
            reads = 100.0 * k,
            read_us = 250.0 * k,
        )
    }

    /// The series a server holds of a JMX exporter answering `jmx_exposition(k)` at step
    /// `step(k)`, labelled `instance` and `job`.
    fn jmx_matrix(ks: &[f64], step: impl Fn(f64) -> f64, instance: &str) -> Vec<RangeSeries> {
        let mut series: Vec<RangeSeries> = Vec::new();
        for &k in ks {
            for line in prometheus::parse(&jmx_exposition(k)) {
                let mut labels = line.labels.clone();
                labels.push(("instance".into(), instance.into()));
                labels.push(("job".into(), "cassandra".into()));
                labels.sort();
                match series
                    .iter_mut()
                    .find(|s| s.name == line.name && s.labels == labels)
                {
                    Some(s) => s.points.push((step(k), line.value)),
                    None => series.push(RangeSeries {
                        name: line.name.clone(),
                        labels,
                        points: vec![(step(k), line.value)],
                    }),
                }
            }
        }
        series
    }

    #[test]
    fn a_nodes_endpoint_through_a_server_gives_the_samples_a_direct_scrape_would() {
        let step = |k: f64| 500.0 + 5.0 * k;
        // k = 3 is missing from the server (a scrape it lost).
        let series = jmx_matrix(&[1.0, 2.0, 4.0], step, "10.0.0.5:7070");
        let node = Mapped {
            node: "node1".into(),
            instance: "10.0.0.5:7070".into(),
            job: Some("cassandra".into()),
        };
        let (samples, devices, missing) = samples_of(
            &series,
            &[],
            (&[], std::slice::from_ref(&node)),
            Grid::new(505.0, 520.0, 5.0),
            500.0,
        );
        assert!(devices.is_empty());
        assert_eq!(samples.len(), 4);
        assert!(samples.iter().all(|s| s.node_hosts.is_empty()));
        let r = |k: f64| reading(&prometheus::parse(&jmx_exposition(k)));
        assert_eq!(
            samples[0].nodes,
            [node_sample(&r(1.0), None, 0.0)],
            "the first reading: gauges, no rates"
        );
        assert_eq!(samples[1].nodes, [node_sample(&r(2.0), Some(&r(1.0)), 5.0)]);
        let n = &samples[1].nodes[0];
        assert_eq!(n.pending_compactions, Some(6.0));
        assert_eq!(n.compactions_per_s, Some(2.0));
        assert_eq!(n.cpu_cores, Some(0.3));
        assert_eq!(n.local_reads_per_s, Some(20.0));
        assert_eq!(n.local_read_ms, Some(0.0025));
        assert!(
            samples[2].nodes[0]
                .missing
                .as_deref()
                .is_some_and(|m| m.starts_with("no scrape held")),
            "{:?}",
            samples[2].nodes
        );
        // The step after the lost scrape takes its rates over both periods.
        assert_eq!(
            samples[3].nodes,
            [node_sample(&r(4.0), Some(&r(2.0)), 10.0)]
        );
        // What the JMX exporter's answer lacks, by figure.
        assert_eq!(
            missing,
            [
                "node1 (10.0.0.5:7070): bytes compacted, SSTables per read, live SSTables, dropped messages, GC seconds, process CPU share"
            ]
        );
    }

    #[test]
    fn a_step_that_saw_no_new_scrape_gives_no_sample_and_the_next_spans_both() {
        // Steps every second, scrapes every two: odd steps see the even step's scrape.
        let ks = [2.0, 3.0, 4.0];
        let step = |k: f64| 100.0 + k;
        let scraped = |k: f64| 100.0 + 2.0 * (k / 2.0).floor();
        let (mut series, scrapes) = matrix(&ks, step, scraped, "h:9100", "node", 1.0);
        // What the server shows at step 3 is still the scrape of step 2.
        for s in &mut series {
            s.points[1].1 = s.points[0].1;
        }
        let hosts = [host("h", "h:9100")];
        let (samples, _, _) = samples_of(
            &series,
            &scrapes,
            (&hosts, &[]),
            Grid::new(102.0, 104.0, 1.0),
            100.0,
        );
        assert_eq!(samples.len(), 3);
        assert_eq!(samples[1].node_hosts, [None], "no new scrape");
        let c = |k: f64| node_exporter::counters(&exposition(k));
        let want = node_exporter::sample(&c(4.0), &c(2.0), &["vda".to_string()], 2.0);
        assert_eq!(samples[2].node_hosts, [Some(want)]);
    }

    #[test]
    fn series_an_instance_lacks_are_listed_by_family() {
        let step = |k: f64| 10.0 * k;
        let (series, scrapes) = matrix(&[1.0, 2.0], step, step, "h:9100", "node", 1.0);
        let series: Vec<RangeSeries> = series
            .into_iter()
            .filter(|s| !s.name.starts_with("node_disk_") && s.name != "node_load1")
            .collect();
        let (samples, devices, missing) = samples_of(
            &series,
            &scrapes,
            (&[host("node3", "h:9100")], &[]),
            Grid::new(10.0, 20.0, 10.0),
            0.0,
        );
        assert_eq!(missing, ["node3 (h:9100): node_disk_*, node_load1"]);
        assert_eq!(devices, [Vec::<String>::new()]);
        let h = samples[1].node_hosts[0].clone().expect("CPU figures still");
        assert!(h.devices.is_empty() && h.load1.is_none() && h.cpu_user > 0.0);
        // An instance with no series at all has no figures, and says so.
        let (samples, _, missing) = samples_of(
            &series,
            &scrapes,
            (&[host("n", "x:1")], &[]),
            Grid::new(5.0, 25.0, 10.0),
            0.0,
        );
        assert_eq!(
            samples.len(),
            3,
            "one sample per step, with or without figures"
        );
        assert!(samples.iter().all(|s| s.node_hosts == [None]));
        assert_eq!(
            missing,
            [
                "n (x:1): node_cpu_seconds_total, node_disk_*, node_load1, node_memory_*, node_network_*"
            ]
        );
    }

    #[test]
    fn nodes_map_to_instances_given_or_found_by_address() {
        let seen = [
            ("10.0.0.5:9100".to_string(), "node".to_string()),
            ("10.0.0.6:9100".to_string(), "node".to_string()),
            ("[fd00::7]:9100".to_string(), "node".to_string()),
            ("exporter-8".to_string(), "hosts".to_string()),
        ];
        let nodes = [
            ("node1".to_string(), "10.0.0.5".to_string()),
            ("node2".to_string(), "10.0.0.6:9042".to_string()),
            ("fd00::7".to_string(), "fd00::7".to_string()),
            ("node4".to_string(), "10.0.0.9".to_string()),
            ("node8".to_string(), "10.0.0.8".to_string()),
        ];
        let given = [
            NodeInstance::parse("node8=exporter-8").unwrap(),
            NodeInstance::parse("node9=10.0.0.99:9100").unwrap(),
        ];
        let seen = Seen {
            hosts: seen.to_vec(),
            nodes: vec![("10.0.0.5:7070".to_string(), "cassandra".to_string())],
        };
        let (mapped, cassandra, missing) = map_nodes(&given, &nodes, &seen);
        let pairs: Vec<(&str, &str, Option<&str>)> = mapped
            .iter()
            .map(|m| (m.node.as_str(), m.instance.as_str(), m.job.as_deref()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("node8", "exporter-8", Some("hosts")),
                ("node1", "10.0.0.5:9100", Some("node")),
                ("node2", "10.0.0.6:9100", Some("node")),
                ("fd00::7", "[fd00::7]:9100", Some("node")),
            ]
        );
        // The node at 10.0.0.5 has its Cassandra endpoint there too; node8's given
        // instance is an exporter, so its Cassandra endpoint is still looked for by address.
        assert_eq!(
            cassandra
                .iter()
                .map(|m| (m.node.as_str(), m.instance.as_str()))
                .collect::<Vec<_>>(),
            [("node1", "10.0.0.5:7070")]
        );
        assert!(
            missing[0].starts_with("node9: instance '10.0.0.99:9100' has neither"),
            "{missing:?}"
        );
        assert!(
            missing[1].starts_with("node4: no node exporter instance with host 10.0.0.9"),
            "{missing:?}"
        );
        let no_cassandra: Vec<&str> = missing[2..]
            .iter()
            .map(|m| m.split(':').next().unwrap())
            .collect();
        assert_eq!(
            no_cassandra,
            ["node2", "fd00", "node4", "node8"],
            "{missing:?}"
        );
        assert!(
            missing[2].starts_with("node2: no Cassandra metrics instance with host 10.0.0.6"),
            "{missing:?}"
        );
        // An instance given of a node's endpoint maps that kind only.
        let given = [NodeInstance::parse("node2=10.0.0.5:7070").unwrap()];
        let (mapped, cassandra, _) = map_nodes(&given, &nodes[1..2], &seen);
        assert_eq!(mapped.len(), 1);
        assert_eq!(mapped[0].instance, "10.0.0.6:9100", "found by address");
        assert_eq!(cassandra.len(), 1);
        assert_eq!(
            (cassandra[0].node.as_str(), cassandra[0].instance.as_str()),
            ("node2", "10.0.0.5:7070"),
            "as given"
        );
    }

    #[test]
    fn server_urls_and_instances_parse_or_say_what_is_expected() {
        assert_eq!(
            Server::parse("http://10.0.0.9:9090/").unwrap().url,
            "http://10.0.0.9:9090"
        );
        assert!(Server::parse("https://prom.example/prometheus").is_ok());
        for (bad, why) in [
            ("10.0.0.9:9090", "must start with http"),
            ("ftp://h:9090", "must start with http"),
            ("http://", "empty host"),
            ("http://h:99999", "invalid port"),
            ("http://h:9090/?x=1", "no query"),
        ] {
            let err = Server::parse(bad).unwrap_err().to_string();
            assert!(
                err.contains(why) && err.contains("http[s]://host:port"),
                "{bad}: {err}"
            );
            assert!(!err.contains('\n'));
        }
        let i = NodeInstance::parse(" node1 = 10.0.0.5:9100 ").unwrap();
        assert_eq!(
            (i.node.as_str(), i.instance.as_str()),
            ("node1", "10.0.0.5:9100")
        );
        for (bad, why) in [
            ("10.0.0.5:9100", "no '='"),
            ("=h:9100", "no node name"),
            ("n=", "no instance"),
            ("n=a b", "no spaces"),
            ("n=a\"b", "no spaces, quotes"),
        ] {
            let err = NodeInstance::parse(bad).unwrap_err().to_string();
            assert!(
                err.contains(why) && err.contains("NODE=INSTANCE"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn instance_regexes_match_only_themselves() {
        assert_eq!(any_of(&["10.0.0.5:9100", "h"]), r"10\\.0\\.0\\.5:9100|h");
    }

    fn spec(url: String) -> FetchSpec {
        FetchSpec {
            access: Default::default(),
            server: Server::parse(&url).unwrap(),
            instances: vec![],
            nodes: vec![("node1".into(), "127.0.0.1".into())],
            start_unix_s: 1000.0,
            end_unix_s: 1010.0,
            t0_unix_s: 1000.0,
            step_s: 1.0,
            timeout: Duration::from_secs(5),
        }
    }

    /// A server answering every request with `status` and `body` (as JSON when `json`).
    fn answering(status: u16, body: &'static str, json: bool) -> String {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let url = format!("http://{}", server.server_addr().to_ip().unwrap());
        std::thread::spawn(move || {
            for request in server.incoming_requests() {
                let mut r = tiny_http::Response::from_string(body).with_status_code(status);
                if json {
                    r.add_header(
                        tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap(),
                    );
                }
                let _ = request.respond(r);
            }
        });
        url
    }

    #[test]
    fn a_server_that_does_not_answer_or_answers_an_error_is_named_with_its_answer() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let closed = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let err = fetch(&spec(closed.clone())).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("Prometheus server {closed}: ")),
            "{err}"
        );
        assert!(err.to_lowercase().contains("connect"), "{err}");

        let url = answering(503, "Service Unavailable", false);
        let err = fetch(&spec(url.clone())).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("Prometheus server {url}: ")),
            "{err}"
        );
        assert!(err.contains("503"), "{err}");
        assert!(!err.contains("for url"), "the URL is not repeated: {err}");

        let url = answering(
            400,
            r#"{"status":"error","errorType":"bad_data","error":"invalid parameter \"query\""}"#,
            true,
        );
        let err = fetch(&spec(url.clone())).unwrap_err().to_string();
        assert!(
            err.contains("answered an error: bad_data: invalid parameter"),
            "{err}"
        );

        // A server with no node exporter's series in the window.
        let url = answering(
            200,
            r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#,
            true,
        );
        let err = fetch(&spec(url)).unwrap_err().to_string();
        assert!(
            err.contains("no node exporter's or Cassandra metrics' instance for any node (node1)")
                && err.contains("none"),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
    }
}
