//! The `scaling` step (scenario files, reference 004): the same capacity search on local
//! clusters of 1, 2, 3… nodes, each made from the scenario's `cluster:` section with that many
//! nodes, started, searched, stopped and (once its search completed) destroyed, one after the
//! other so that a size never shares the host with another. The result names each size's
//! capacity, the capacity per node and the scaling efficiency (see
//! [`crate::result::scaling`]); `cqlbench plan --capacity INSTANCE=SCALING.json` plans from it.
//!
//! ```yaml
//! - scaling: {nodes: [1, 2, 3], workload: stress, rf: 1, start-rate: 500, step: 30s}
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::capacity::{self as capacity_step, CapacityStep};
use super::cluster::ClusterOptions;
use super::de;
use crate::cluster::Cluster;
use crate::result::ScalingResult;
use crate::result::capacity::CapacityStatus;
use crate::scenario::error::{Doing, refuse};
use crate::scenario::event::{Event, ScalingEvent, Warning};
use crate::scenario::{Context, ScenarioError};

/// The capacity search, the sizes, and the cluster they are made from.
#[derive(Debug, Clone)]
pub struct ScalingStep {
    pub capacity: CapacityStep,
    /// Cluster sizes, ascending.
    pub nodes: Vec<usize>,
    /// The scenario's local cluster (its name and options), which each size's cluster is made
    /// from as `NAME-nN`; set by the scenario, not a key.
    pub base: Option<(String, ClusterOptions)>,
}

/// The `nodes` key alone.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Sizes {
    #[serde(deserialize_with = "sizes")]
    nodes: Vec<usize>,
}

fn sizes<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<usize>, D::Error> {
    use serde::de::Error;
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Form {
        List(Vec<usize>),
        Text(String),
    }
    let list = match Form::deserialize(d).map_err(|_| {
        D::Error::custom("expected a list of node counts, e.g. [1, 2, 3] or \"1,2,3\"")
    })? {
        Form::List(l) => l,
        Form::Text(t) => t
            .split(',')
            .map(|n| {
                n.trim().parse::<usize>().map_err(|_| {
                    D::Error::custom(format!(
                        "'{t}': expected node counts separated by commas, e.g. 1,2,3"
                    ))
                })
            })
            .collect::<Result<_, _>>()?,
    };
    if list.is_empty() {
        return Err(D::Error::custom("give at least one cluster size"));
    }
    if list.contains(&0) {
        return Err(D::Error::custom("a cluster size must be at least 1 node"));
    }
    if list.windows(2).any(|w| w[0] >= w[1]) {
        return Err(D::Error::custom(format!(
            "{list:?}: give the sizes in ascending order, each once"
        )));
    }
    Ok(list)
}

impl<'de> Deserialize<'de> for ScalingStep {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let (s, capacity): (Sizes, CapacityStep) = de::split(d)?;
        if s.nodes.is_empty() {
            return Err(D::Error::custom("nodes: give at least one cluster size"));
        }
        Ok(ScalingStep {
            capacity,
            nodes: s.nodes,
            base: None,
        })
    }
}

/// The keys of a scaling step besides the capacity search's.
pub const KEYS: &[&str] = &["nodes"];

impl ScalingStep {
    /// The options of the cluster of `nodes` nodes: the scenario's, resized (racks at most
    /// one per node).
    pub fn options_for(base: &ClusterOptions, nodes: usize) -> ClusterOptions {
        let mut o = base.clone();
        match &mut o.dcs {
            Some(dcs) => {
                for dc in dcs.iter_mut() {
                    dc.nodes = nodes;
                    dc.racks = dc.racks.min(nodes);
                }
            }
            None => {
                o.nodes = Some(nodes);
                o.racks = o.racks.min(nodes);
            }
        }
        // Each size picks addresses no other cluster in the directory uses.
        o.address_prefix = None;
        o
    }

    /// Each size's cluster name.
    pub fn cluster_name(base: &str, nodes: usize) -> String {
        format!("{base}-n{nodes}")
    }

    /// Where size `nodes`'s capacity result goes: beside the scaling result.
    pub fn search_out(out: &Path, nodes: usize) -> PathBuf {
        let stem = out.file_stem().unwrap_or_default().to_string_lossy();
        out.with_file_name(format!("{stem}.n{nodes}.json"))
    }

    /// Checks every value that can be checked before any cluster starts.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        self.capacity.validate()?;
        let Some((name, options)) = &self.base else {
            refuse!(
                "a scaling step makes its clusters from the scenario's local cluster (`cluster:`); this one has none"
            );
        };
        let run = &self.capacity.run;
        if !run.hosts.is_empty() || run.cluster.as_deref() != Some(name.as_str()) {
            refuse!(
                "a scaling step makes its own clusters ({}-n1, …): give no cluster or hosts",
                name
            );
        }
        if options.dcs.as_ref().is_some_and(|d| d.len() > 1) {
            refuse!(
                "a scaling step grows a cluster of one data centre: the scenario's cluster has {}",
                options.dcs.as_ref().map_or(0, |d| d.len())
            );
        }
        let Some(rf) = &run.rf else {
            refuse!(
                "a scaling step needs rf: the same replication at every size (the default follows the node count)"
            );
        };
        let smallest = self.nodes[0];
        let rf = rf.per_dc();
        if let Some((dc, n)) = rf.iter().find(|(_, n)| **n as usize > smallest) {
            refuse!("rf {dc}:{n} needs at least {n} nodes; the smallest size is {smallest}");
        }
        for &n in &self.nodes {
            let o = Self::options_for(options, n);
            o.validate(&Self::cluster_name(name, n))
                .doing(|| format!("the {n}-node cluster"))?;
        }
        Ok(())
    }
}

/// Runs the search at each size in turn. With `resume` (the scenario's `--resume`), sizes
/// whose search completed are kept and an interrupted one continues on its kept cluster.
pub fn run(a: &ScalingStep, ctx: &Context) -> Result<ScalingResult, ScenarioError> {
    a.validate()?;
    let out = a
        .capacity
        .run
        .out
        .clone()
        .unwrap_or_else(|| a.capacity.run.default_out(ctx, "scaling"));
    super::prepare_out(&out)?;
    let sizes: Vec<u32> = a.nodes.iter().map(|n| *n as u32).collect();
    let env = a.capacity.run.env_label();
    // A resumed result is kept only for the same sizes; it is written before the first
    // search, so an interrupted first size can be resumed too.
    let mut result = a
        .capacity
        .search
        .resume
        .then(|| crate::result::read_scaling(&out).ok())
        .flatten()
        .filter(|r| r.sizes == sizes)
        .unwrap_or_else(|| ScalingResult::new(&env, &a.capacity.run.workload.to_string(), &sizes));
    write(&result, &out)?;
    ctx.emit(Event::ResultAt {
        what: "scaling result",
        path: &out,
    });
    for &n in &a.nodes {
        if let Err(e) = size(a, n, &out, &mut result, ctx) {
            result.status = CapacityStatus::Interrupted;
            write(&result, &out)?;
            return Err(e);
        }
        write(&result, &out)?;
        if ctx.cancel.is_cancelled() {
            return Err(ScenarioError::Interrupted {
                when: format!("after {n} node(s)"),
                kept: format!(
                    "the sizes searched so far are in {} (--resume continues)",
                    out.display()
                ),
            });
        }
    }
    result.status = CapacityStatus::Completed;
    result.finished_unix_s = Some(crate::host::unix_now_s());
    write(&result, &out)?;
    ctx.emit(Event::Scaling(ScalingEvent::Done { result: &result }));
    ctx.emit(Event::ResultAt {
        what: "scaling result",
        path: &out,
    });
    Ok(result)
}

fn write(r: &ScalingResult, out: &Path) -> Result<(), ScenarioError> {
    r.write(out)
        .map_err(|e| ScenarioError::io("writing", out, e))
}

/// Size `n`: kept when its search completed before (`--resume`), else searched on a cluster
/// of its own (made, started, stopped, then destroyed once its search completed).
fn size(
    a: &ScalingStep,
    n: usize,
    out: &Path,
    result: &mut ScalingResult,
    ctx: &Context,
) -> Result<(), ScenarioError> {
    let (base_name, base) = a.base.as_ref().expect("validated");
    let name = ScalingStep::cluster_name(base_name, n);
    let search_out = ScalingStep::search_out(out, n);
    let file = search_out
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    let earlier = match a.capacity.search.resume {
        true => crate::result::read_capacity(&search_out).ok(),
        false => None,
    };
    if let Some(done) = earlier
        .as_ref()
        .filter(|r| r.status == CapacityStatus::Completed)
    {
        ctx.emit(Event::Scaling(ScalingEvent::SizeKept {
            nodes: n,
            file: &file,
        }));
        result.workload = done.workload.label();
        result.record(n as u32, &file, done);
        // Its cluster, if one was left behind (interrupted before it was destroyed).
        if let Ok(c) = Cluster::open(&ctx.clusters, &name) {
            destroy(c, ctx);
        }
        return Ok(());
    }
    ctx.emit(Event::Scaling(ScalingEvent::Size {
        nodes: n,
        cluster: &name,
    }));
    let existed = Cluster::open(&ctx.clusters, &name).is_ok();
    let lease = crate::scenario::runner::lease(ctx, &name, &ScalingStep::options_for(base, n))?;
    if lease.cluster.nodes().len() != n {
        refuse!(
            "cluster {name} exists with {} nodes, not {n}: destroy it (cqlbench cluster destroy {name}) or name the scenario's cluster otherwise",
            lease.cluster.nodes().len()
        );
    }
    let mut search = a.capacity.clone();
    search.run.cluster = Some(name.clone());
    search.run.out = Some(search_out);
    search.run.env = Some(format!("{}-n{n}", a.capacity.run.env_label()));
    // Continues on the cluster kept from the interrupted run, else starts over (a cluster
    // made now holds none of the earlier search's data).
    search.search.resume = earlier.is_some() && existed;
    let outcome = capacity_step::run(&search, ctx);
    let cluster = crate::scenario::runner::release(ctx, lease, false);
    let searched = outcome.doing(|| format!("the {n}-node search"))?;
    result.workload = searched.workload.label();
    result.record(n as u32, &file, &searched);
    if searched.status != CapacityStatus::Completed {
        return Err(ScenarioError::Interrupted {
            when: format!("at {n} node(s)"),
            kept: format!(
                "cluster {name} is kept and the sizes searched so far are in {} (--resume continues)",
                out.display()
            ),
        });
    }
    // Its data is of no further use; the disks (emulated ones too) are freed.
    destroy(cluster, ctx);
    Ok(())
}

fn destroy(cluster: Cluster, ctx: &Context) {
    let name = cluster.name().to_string();
    if let Err(e) = cluster.destroy() {
        ctx.emit(Event::Warning(Warning::DestroyFailed {
            cluster: &name,
            error: e.to_string(),
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(text: &str) -> Result<ScalingStep, crate::error::Invalid> {
        de::from_value(crate::yaml::from_str(text).unwrap())
    }

    #[test]
    fn sizes_are_a_list_or_text_ascending_and_positive() {
        let s = step("{nodes: [1, 2, 3], workload: stress, rf: 1}").unwrap();
        assert_eq!(s.nodes, [1, 2, 3]);
        let s = step("{nodes: '1, 3', workload: stress}").unwrap();
        assert_eq!(s.nodes, [1, 3]);
        for (bad, says) in [
            ("{nodes: [], workload: stress}", "at least one"),
            ("{nodes: [0, 1], workload: stress}", "at least 1 node"),
            ("{nodes: [2, 1], workload: stress}", "ascending"),
            ("{nodes: [1, 1], workload: stress}", "ascending"),
            ("{nodes: 'a,b', workload: stress}", "separated by commas"),
            ("{nodes: {x: 1}, workload: stress}", "list of node counts"),
        ] {
            let e = step(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        // The capacity keys are the capacity step's (unknown ones refused).
        let e = step("{nodes: [1], workload: stress, strat-rate: 5}").unwrap_err();
        assert!(e.contains("strat-rate"), "{e}");
    }

    #[test]
    fn each_size_is_the_scenarios_cluster_resized() {
        let base: ClusterOptions = de::from_value(
            crate::yaml::from_str("{nodes: 3, racks: 3, heap: 256M, address-prefix: '127.0.9.'}")
                .unwrap(),
        )
        .unwrap();
        let o = ScalingStep::options_for(&base, 2);
        assert_eq!((o.nodes, o.racks, o.address_prefix), (Some(2), 2, None));
        assert_eq!(o.heap, base.heap);
        let base: ClusterOptions =
            de::from_value(crate::yaml::from_str("{dcs: 'east:3:3'}").unwrap()).unwrap();
        let dc = &ScalingStep::options_for(&base, 1).dcs.unwrap()[0];
        assert_eq!((dc.name.as_str(), dc.nodes, dc.racks), ("east", 1, 1));
        assert_eq!(
            ScalingStep::search_out(Path::new("/r/03-scaling.json"), 2),
            Path::new("/r/03-scaling.n2.json")
        );
    }

    #[test]
    fn a_step_without_its_scenarios_cluster_or_with_a_growing_rf_is_refused() {
        let mut s = step("{nodes: [1, 2], workload: stress, rf: 1}").unwrap();
        let e = s.validate().unwrap_err().one_line();
        assert!(e.contains("`cluster:`"), "{e}");
        let base: ClusterOptions =
            de::from_value(crate::yaml::from_str("{heap: 256M}").unwrap()).unwrap();
        s.base = Some(("sc".into(), base));
        s.capacity.run.cluster = Some("sc".into());
        s.capacity.run.rf = Some("2".parse().unwrap());
        let e = s.validate().unwrap_err().one_line();
        assert!(e.contains("smallest size is 1"), "{e}");
        s.capacity.run.rf = None;
        let e = s.validate().unwrap_err().one_line();
        assert!(e.contains("needs rf"), "{e}");
        s.capacity.run.rf = Some("1".parse().unwrap());
        s.capacity.run.cluster = Some("other".into());
        let e = s.validate().unwrap_err().one_line();
        assert!(e.contains("its own clusters"), "{e}");
    }
}
