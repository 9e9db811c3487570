//! A scenario as a person follows it: the plan, environments, clusters, step headers, the
//! report and the time taken; a probe's progress; a scaling step's sizes.

use std::fmt::Write;

use crate::scenario::event::{ClusterEvent, Event, ProbeEvent, ScalingEvent, Warning};
use crate::scenario::file::{Matrix, Plan};

pub(super) fn text(e: &Event) -> String {
    match e {
        Event::Planned { matrix } => plan(matrix),
        Event::Remaining { estimate_s } => {
            format!("estimate of what is left: {:.1} min\n", estimate_s / 60.0)
        }
        Event::Environment {
            label,
            index,
            count,
        } => format!("━━ environment {label} ({index}/{count})\n"),
        Event::Cluster(c) => cluster(c),
        Event::StepStarted {
            index,
            count,
            name,
            command_line,
            ..
        } => format!("━━ step {index}/{count} {name}: {command_line}\n"),
        Event::StepKept { index, count, name } => {
            format!("━━ step {index}/{count} {name}: done before, kept\n")
        }
        Event::Scaling(s) => scaling(s),
        Event::Smoke(r) => format!(
            "smoke check: {} rows at RF {}, {} in flight — written at QUORUM in {:.2}s ({:.0} rows/s), read back at QUORUM in {:.2}s ({:.0} rows/s), {} mismatches\n",
            r.rows,
            r.replication_factor,
            r.in_flight,
            r.write_time.as_secs_f64(),
            r.rows as f64 / r.write_time.as_secs_f64(),
            r.read_time.as_secs_f64(),
            r.rows as f64 / r.read_time.as_secs_f64(),
            r.mismatches
        ),
        Event::ClusterStatus { cluster, nodes } => cluster_status(cluster, nodes),
        Event::Report { txt, html, text } => format!(
            "━━ report: {} and {}\n{text}",
            txt.display(),
            html.display()
        ),
        Event::Finished {
            took_s,
            estimate_s,
            dir,
        } => format!(
            "took {:.1} min (estimated {:.1} min); results: {}\n",
            took_s / 60.0,
            estimate_s / 60.0,
            dir.display()
        ),
        Event::Warning(Warning::StopFailed { cluster, error }) => {
            format!("warning: stopping {cluster}: {error}\n")
        }
        Event::Warning(Warning::DestroyFailed { cluster, error }) => {
            format!("warning: destroying {cluster}: {error}\n")
        }
        Event::Warning(Warning::FetchFailed { error }) => {
            format!("warning: no series fetched: {error}\n")
        }
        Event::Warning(Warning::Unreached { nodes }) => format!(
            "warning: not reached over CQL within a few seconds, so their figures are not read: {} (see `cqlbench metrics check`)\n",
            nodes.join(", ")
        ),
        Event::SeriesFetched { fetched } => series_fetched(fetched),
        // Rendered by the console's other parts.
        _ => String::new(),
    }
}

/// What a fetch from a Prometheus server found (one line) and did not (one more line).
fn series_fetched(f: &crate::result::series::Fetched) -> String {
    let count = |has: &dyn Fn(&crate::result::series::Sample) -> bool| {
        f.samples.iter().filter(|s| has(s)).count()
    };
    let hosts: Vec<String> = f
        .hosts
        .iter()
        .enumerate()
        .map(|(j, h)| {
            let n = count(&|s| s.node_hosts.get(j).is_some_and(Option::is_some));
            format!("{} = {} ({n} samples)", h.node, h.exporter)
        })
        .collect();
    let nodes: Vec<String> = f
        .nodes
        .iter()
        .enumerate()
        .map(|(i, node)| {
            let n = count(&|s| s.nodes.get(i).is_some_and(|x| x.missing.is_none()));
            format!("{} = {} ({n} samples)", node.node, node.instance)
        })
        .collect();
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    let mut out = format!(
        "series from Prometheus {} every {}s: hosts {}; Cassandra nodes {}\n",
        f.server,
        f.step_s,
        list(&hosts),
        list(&nodes)
    );
    if !f.missing.is_empty() {
        let _ = writeln!(
            out,
            "warning: not found on {}: {}",
            f.server,
            f.missing.join("; ")
        );
    }
    out
}

fn cluster(c: &ClusterEvent) -> String {
    match c {
        ClusterEvent::Reused { name, dir } => format!(
            "reusing cluster {name} in {} (its options stay as created)\n",
            dir.display()
        ),
        ClusterEvent::Created {
            name,
            nodes,
            software,
            heap,
        } => format!("created {name}: {nodes} nodes, {software}, heap {heap}\n"),
        ClusterEvent::Started { name, nodes, secs } => {
            format!("{name}: {} up (UN) in {secs:.1}s\n", nodes.join(", "))
        }
        ClusterEvent::Stopping {
            name,
            for_scaling: false,
        } => format!("━━ stopping cluster {name}\n"),
        ClusterEvent::Stopping {
            name,
            for_scaling: true,
        } => format!("━━ stopping cluster {name} for the scaling step\n"),
        ClusterEvent::LogTail { tail } => {
            format!("--- last lines of the node's log ---\n{tail}\n---\n")
        }
    }
}

fn scaling(s: &ScalingEvent) -> String {
    match s {
        ScalingEvent::Size { nodes, cluster } => {
            format!("━━ {nodes} node(s): cluster {cluster}\n")
        }
        ScalingEvent::SizeKept { nodes, file } => {
            format!("━━ {nodes} node(s): searched before, kept ({file})\n")
        }
        ScalingEvent::Done { result } => format!(
            "\n{}",
            crate::report::capacity::scaling_table(result).text()
        ),
    }
}

pub(super) fn probe(p: &ProbeEvent) -> String {
    match p {
        ProbeEvent::Disk { dc, node, class } => {
            format!("probe: {dc} on {node}'s emulated disk ({class})\n")
        }
        ProbeEvent::Pinned { cpus } => format!("probe: on the cluster's CPUs {cpus:?}\n"),
        ProbeEvent::Progress(line) => format!("probe: {line}\n"),
        ProbeEvent::Done { .. } => String::new(),
    }
}

/// The plan: one line per step (and the command that does the same), per environment, and
/// the time it should take.
pub fn plan(m: &Matrix) -> String {
    let steps: usize = m.envs.iter().map(|p| p.steps.len()).sum();
    let mut out = format!(
        "scenario {}: {} environment(s), {steps} steps\n",
        m.name,
        m.envs.len()
    );
    for p in &m.envs {
        if m.envs.len() > 1 {
            let label = p.steps[0].placement.env.as_deref().unwrap_or("-");
            let _ = writeln!(out, "environment {label}:");
        }
        out.push_str(&env_plan(p));
    }
    let (est, unknown) = crate::scenario::runner::estimate_s(m);
    let _ = writeln!(
        out,
        "estimate: {:.1} min{}",
        est / 60.0,
        match unknown {
            0 => String::new(),
            n => format!(" plus {n} step(s) that end at a data size (fill)"),
        }
    );
    out
}

/// One environment's steps.
pub fn env_plan(p: &Plan) -> String {
    let mut out = String::new();
    if !p.connection.is_empty() {
        let settings: Vec<String> = p
            .connection
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    crate::yaml::Value::String(s) => s.clone(),
                    v => serde_json::to_string(v).unwrap_or_default(),
                };
                format!("{}={v}", k)
            })
            .collect();
        let _ = writeln!(out, "  connection: {}", settings.join(" "));
    }
    for (i, s) in p.steps.iter().enumerate() {
        let options = serde_json::to_string(&s.options).unwrap_or_default();
        let _ = writeln!(out, "  {}. {}: {} {options}", i + 1, s.name, s.command);
        let _ = writeln!(out, "     → {}", s.step.describe());
    }
    out
}

/// A local cluster's status: a line naming it, then one row per node.
pub fn cluster_status(
    c: &crate::cluster::Cluster,
    rows: &[crate::cluster::status::NodeStatus],
) -> String {
    let table = crate::format::Table {
        title: format!(
            "cluster {} — {} — {}",
            c.name(),
            c.state.dist.describe(),
            c.dir.display()
        ),
        header: [
            "node",
            "address",
            "dc",
            "rack",
            "state",
            "pid",
            "heap",
            "heap used",
            "load",
            "cpus",
        ]
        .map(String::from)
        .to_vec(),
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    r.name.clone(),
                    r.address.clone(),
                    r.dc.clone(),
                    r.rack.clone(),
                    match r.paused {
                        true => format!("{} (paused)", r.state),
                        false => r.state.clone(),
                    },
                    r.pid.map_or_else(|| "-".into(), |p| p.to_string()),
                    r.heap.to_string(),
                    r.heap_used_bytes
                        .map_or_else(|| "-".into(), |b| format!("{}M", b / (1024 * 1024))),
                    r.load.clone().unwrap_or_else(|| "-".into()),
                    r.cpus.clone().unwrap_or_else(|| "-".into()),
                ]
            })
            .collect(),
        text_columns: (1..10).collect(),
    };
    table.text()
}

/// A network lab as a person needs it: where each node and loader lives and at which
/// addresses the outside reaches the nodes.
pub fn lab_summary(lab: &crate::lab::Lab) -> String {
    use crate::spec::lab;
    let name = &lab.name;
    let table = crate::format::Table {
        title: format!(
            "network lab {}: nodes and loaders in namespaces of their own, routed by its gateway",
            lab::gateway_ns(name)
        ),
        header: ["node", "namespace", "address", "outside (NAT)"]
            .map(String::from)
            .to_vec(),
        rows: lab
            .nodes
            .iter()
            .map(|n| {
                vec![
                    format!("node{}", n.index),
                    lab::node_ns(name, n.index),
                    lab::node_address(n.dc_index, n.index),
                    format!("{}:9042", lab::nat_address(n.index)),
                ]
            })
            .collect(),
        text_columns: (0..4).collect(),
    };
    let inside: Vec<String> = (1..=lab.spec.clients)
        .map(|k| format!("{} ({})", lab::client_ns(name, k), lab::client_address(k)))
        .collect();
    let outside: Vec<String> = (1..=lab.spec.outside)
        .map(|k| format!("{} ({})", lab::outside_ns(name, k), lab::outside_address(k)))
        .collect();
    let mut text = table.text();
    text.push_str(&format!("loaders inside: {}\n", inside.join(", ")));
    if !outside.is_empty() {
        text.push_str(&format!(
            "loaders outside, reaching the nodes only through NAT: {}; {}:9042 forwards to node1\n",
            outside.join(", "),
            lab::outside_gateway()
        ));
    }
    if let Some(mbit) = lab.spec.link_mbit {
        text.push_str(&format!("each node's link: {mbit} Mbit/s each way\n"));
    }
    text
}
