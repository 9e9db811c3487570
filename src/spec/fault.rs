//! Faults scheduled into a run's main phase: `AT:ACTION[:NODE[:FOR]]`, e.g. `30s:kill:node2`,
//! `60s:restart:node2`, `20s:pause:node3:2s` (paused for 2 s, then resumed), `45s:repair:node1`,
//! or for a cluster cqlbench does not manage, `30s:hook:COMMAND` (run with `sh -c`).
//!
//! Offsets count from the start of the main phase (its warmup included), like `--duration`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::parse_duration;
use crate::error::Invalid;

/// What a fault does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// SIGKILL the node's JVM.
    Kill,
    /// Drain, then a clean stop (SIGTERM).
    Stop,
    /// Start a node that is not running.
    Start,
    /// Stop the node cleanly if it runs, then start it and wait until it is up.
    Restart,
    /// SIGSTOP: the node keeps its sockets and answers nothing.
    Pause,
    /// SIGCONT.
    Resume,
    /// `nodetool flush`.
    Flush,
    /// `nodetool compact` (a major compaction).
    Compact,
    /// `nodetool repair` (full repair of the node's ranges).
    Repair,
    /// `nodetool drain` (the node stops accepting writes).
    Drain,
    /// A command run with `sh -c` (for clusters cqlbench does not manage).
    Hook,
    /// A lab node cut off from every other node and every loader (its link down).
    Partition,
    /// A partitioned lab node joined again.
    Heal,
    /// A lab data centre cut off from the other data centres and the loaders (its nodes
    /// still reach each other).
    Isolate,
    /// An isolated data centre joined again.
    Rejoin,
}

impl Action {
    pub const ALL: [Action; 15] = [
        Action::Kill,
        Action::Stop,
        Action::Start,
        Action::Restart,
        Action::Pause,
        Action::Resume,
        Action::Flush,
        Action::Compact,
        Action::Repair,
        Action::Drain,
        Action::Hook,
        Action::Partition,
        Action::Heal,
        Action::Isolate,
        Action::Rejoin,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Action::Kill => "kill",
            Action::Stop => "stop",
            Action::Start => "start",
            Action::Restart => "restart",
            Action::Pause => "pause",
            Action::Resume => "resume",
            Action::Flush => "flush",
            Action::Compact => "compact",
            Action::Repair => "repair",
            Action::Drain => "drain",
            Action::Hook => "hook",
            Action::Partition => "partition",
            Action::Heal => "heal",
            Action::Isolate => "isolate",
            Action::Rejoin => "rejoin",
        }
    }

    /// The node's process goes away (or stops answering) for a while: throughput is expected
    /// to recover after it.
    pub fn disrupts(self) -> bool {
        matches!(
            self,
            Action::Kill
                | Action::Stop
                | Action::Restart
                | Action::Pause
                | Action::Drain
                | Action::Partition
                | Action::Isolate
        )
    }

    /// The action that undoes this one after a duration (`AT:ACTION:NODE:FOR`).
    pub fn undone_by(self) -> Option<Action> {
        match self {
            Action::Pause => Some(Action::Resume),
            Action::Partition => Some(Action::Heal),
            Action::Isolate => Some(Action::Rejoin),
            _ => None,
        }
    }

    /// Acts on a data centre (its name), not a node.
    pub fn on_dc(self) -> bool {
        matches!(self, Action::Isolate | Action::Rejoin)
    }
}

/// One scheduled fault.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fault {
    /// Seconds into the main phase.
    pub at_s: f64,
    pub action: Action,
    /// 1-based node of a local cluster (every action but `hook`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<usize>,
    /// `pause`, `partition` and `isolate`: undone after this many seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub for_s: Option<f64>,
    /// `isolate` and `rejoin`: the data centre.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dc: Option<String>,
    /// `hook` only: the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

const FORM: &str = "expected AT:ACTION:NODE (e.g. 30s:kill:node2, 20s:pause:node3:2s, 20s:partition:node2:10s), AT:isolate:DC[:FOR] or AT:hook:COMMAND";

impl FromStr for Fault {
    type Err = Invalid;

    fn from_str(s: &str) -> Result<Self, Invalid> {
        let t = s.trim();
        let mut it = t.splitn(3, ':');
        let (at, action, rest) = match (it.next(), it.next(), it.next()) {
            (Some(a), Some(b), rest) => (a, b, rest),
            _ => return Err(crate::invalid!("fault '{s}': {FORM}")),
        };
        let at = parse_duration(at).map_err(|e| crate::invalid!("fault '{s}': {e}"))?;
        let action = Action::ALL
            .into_iter()
            .find(|a| a.name() == action.trim().to_ascii_lowercase())
            .ok_or_else(|| {
                let names: Vec<&str> = Action::ALL.iter().map(|a| a.name()).collect();
                crate::invalid!(
                    "fault '{s}': unknown action '{action}': use one of {}",
                    names.join(", ")
                )
            })?;
        let mut f = Fault {
            at_s: at.as_secs_f64(),
            action,
            node: None,
            for_s: None,
            dc: None,
            command: None,
        };
        if action == Action::Hook {
            let cmd = rest.map(str::trim).unwrap_or("");
            if cmd.is_empty() {
                return Err(crate::invalid!(
                    "fault '{s}': hook needs a command: AT:hook:COMMAND"
                ));
            }
            f.command = Some(cmd.to_string());
            return Ok(f);
        }
        let rest = rest.ok_or_else(|| {
            crate::invalid!(
                "fault '{s}': {} needs a node: AT:{}:NODE",
                action.name(),
                action.name()
            )
        })?;
        let (node, for_) = match rest.split_once(':') {
            Some((n, d)) => (n, Some(d)),
            None => (rest, None),
        };
        if action.on_dc() {
            let dc = node.trim();
            if dc.is_empty()
                || !dc
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(crate::invalid!(
                    "fault '{s}': '{dc}' is not a data centre name: AT:{}:DC",
                    action.name()
                ));
            }
            f.dc = Some(dc.to_string());
        } else {
            f.node = Some(parse_node(node).map_err(|e| crate::invalid!("fault '{s}': {e}"))?);
        }
        match (action.undone_by(), for_) {
            (Some(_), Some(d)) => {
                let d = parse_duration(d).map_err(|e| crate::invalid!("fault '{s}': {e}"))?;
                if d.is_zero() {
                    return Err(crate::invalid!(
                        "fault '{s}': a {} must last more than 0s",
                        action.name()
                    ));
                }
                f.for_s = Some(d.as_secs_f64());
            }
            (None, Some(extra)) => {
                return Err(crate::invalid!(
                    "fault '{s}': unexpected ':{extra}' (only pause, partition and isolate take a duration: AT:pause:NODE:FOR)"
                ));
            }
            _ => {}
        }
        Ok(f)
    }
}

/// `node2`, `n2` or `2` → 2.
fn parse_node(s: &str) -> Result<usize, Invalid> {
    let t = s.trim();
    let digits = t
        .strip_prefix("node")
        .or_else(|| t.strip_prefix('n'))
        .unwrap_or(t);
    match digits.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(crate::invalid!(
            "'{s}' is not a node: use node1, node2, … (or 1, 2, …)"
        )),
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}s:{}", fmt_s(self.at_s), self.action.name())?;
        if let Some(n) = self.node {
            write!(f, ":node{n}")?;
        }
        if let Some(dc) = &self.dc {
            write!(f, ":{dc}")?;
        }
        if let Some(d) = self.for_s {
            write!(f, ":{}s", fmt_s(d))?;
        }
        if let Some(c) = &self.command {
            write!(f, ":{c}")?;
        }
        Ok(())
    }
}

fn fmt_s(s: f64) -> String {
    let t = format!("{s:.3}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

impl Fault {
    /// What the fault does, without its time: "kill node2", "pause node3 for 2s", "hook".
    pub fn label(&self) -> String {
        let mut l = self.action.name().to_string();
        if let Some(n) = self.node {
            l.push_str(&format!(" node{n}"));
        }
        if let Some(dc) = &self.dc {
            l.push_str(&format!(" {dc}"));
        }
        if let Some(d) = self.for_s {
            l.push_str(&format!(" for {}s", fmt_s(d)));
        }
        l
    }
}

/// Checks a schedule against a main phase of `phase_s` seconds (None: an operation count,
/// whose length is not known) and a cluster of `nodes` nodes (None: not a local cluster).
pub fn check_schedule(
    faults: &[Fault],
    phase_s: Option<f64>,
    nodes: Option<usize>,
) -> Result<(), Invalid> {
    for f in faults {
        let Some(secs) = phase_s else {
            return Err(crate::invalid!(
                "--fault {f}: faults need --duration (their offsets are into the main phase)"
            ));
        };
        let end = f.at_s + f.for_s.unwrap_or(0.0);
        if end >= secs {
            return Err(crate::invalid!(
                "--fault {f}: {} is beyond the main phase ({}s)",
                if f.for_s.is_some() {
                    format!("its end at {}s", fmt_s(end))
                } else {
                    format!("{}s", fmt_s(f.at_s))
                },
                fmt_s(secs)
            ));
        }
        match (f.action, f.node, nodes) {
            (Action::Hook, _, _) => {}
            (a, None, None) if a.on_dc() => {
                return Err(crate::invalid!(
                    "--fault {f}: {} needs a lab cluster (--cluster of one made with `cluster create --netns`); for other clusters use AT:hook:COMMAND",
                    a.name()
                ));
            }
            (_, Some(_), None) => {
                return Err(crate::invalid!(
                    "--fault {f}: node faults need a local cluster (--cluster); for other clusters use AT:hook:COMMAND"
                ));
            }
            (_, Some(n), Some(count)) if n > count => {
                return Err(crate::invalid!(
                    "--fault {f}: the cluster has no node{n} (it has node1..node{count})"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        let f: Fault = "30s:kill:node2".parse().unwrap();
        assert_eq!((f.at_s, f.action, f.node), (30.0, Action::Kill, Some(2)));
        let f: Fault = "1.5s:pause:3:2s".parse().unwrap();
        assert_eq!((f.at_s, f.node, f.for_s), (1.5, Some(3), Some(2.0)));
        assert_eq!(f.to_string(), "1.5s:pause:node3:2s");
        assert_eq!(f.label(), "pause node3 for 2s");
        let f: Fault = "1m:Repair:n1".parse().unwrap();
        assert_eq!((f.at_s, f.action, f.node), (60.0, Action::Repair, Some(1)));
        let f: Fault = "10s:hook:ssh db2 'sudo systemctl stop cassandra'"
            .parse()
            .unwrap();
        assert_eq!(
            f.command.as_deref(),
            Some("ssh db2 'sudo systemctl stop cassandra'")
        );
        assert_eq!(f.to_string().parse::<Fault>().unwrap(), f);
        let f: Fault = "20s:partition:node2:10s".parse().unwrap();
        assert_eq!(
            (f.action, f.node, f.for_s),
            (Action::Partition, Some(2), Some(10.0))
        );
        assert_eq!(f.label(), "partition node2 for 10s");
        assert_eq!(f.to_string().parse::<Fault>().unwrap(), f);
        let f: Fault = "5s:isolate:dc2:3s".parse().unwrap();
        assert_eq!(
            (f.action, f.dc.as_deref(), f.node),
            (Action::Isolate, Some("dc2"), None)
        );
        assert_eq!(f.to_string(), "5s:isolate:dc2:3s");
        assert_eq!(f.to_string().parse::<Fault>().unwrap(), f);
    }

    #[test]
    fn refuses_bad_faults_with_one_line() {
        for (s, want) in [
            ("30s", "expected AT:ACTION:NODE"),
            ("30s:explode:node2", "unknown action 'explode'"),
            ("soon:kill:node2", "is not a duration"),
            ("30s:kill", "kill needs a node"),
            ("30s:kill:node0", "is not a node"),
            ("30s:kill:db2", "is not a node"),
            (
                "30s:kill:node2:2s",
                "only pause, partition and isolate take a duration",
            ),
            ("30s:pause:node2:0s", "more than 0s"),
            ("30s:hook:", "hook needs a command"),
            ("99999999999999999999h:kill:node1", "too long"),
        ] {
            let e = s.parse::<Fault>().unwrap_err().to_string();
            assert!(e.contains(want), "{s}: {e}");
            assert!(!e.contains('\n'), "{s}: {e}");
        }
    }

    #[test]
    fn schedules_are_checked_against_the_phase_and_the_cluster() {
        let f = |s: &str| s.parse::<Fault>().unwrap();
        assert!(check_schedule(&[f("30s:kill:node2")], Some(90.0), Some(3)).is_ok());
        let e = check_schedule(&[f("95s:kill:node2")], Some(90.0), Some(3)).unwrap_err();
        assert!(e.contains("beyond the main phase (90s)"), "{e}");
        let e = check_schedule(&[f("89s:pause:node2:2s")], Some(90.0), Some(3)).unwrap_err();
        assert!(e.contains("its end at 91s"), "{e}");
        let e = check_schedule(&[f("30s:kill:node4")], Some(90.0), Some(3)).unwrap_err();
        assert!(e.contains("no node4 (it has node1..node3)"), "{e}");
        let e = check_schedule(&[f("30s:kill:node1")], Some(90.0), None).unwrap_err();
        assert!(e.contains("need a local cluster"), "{e}");
        assert!(check_schedule(&[f("30s:hook:true")], Some(90.0), None).is_ok());
        let e = check_schedule(&[f("30s:hook:true")], None, None).unwrap_err();
        assert!(e.contains("need --duration"), "{e}");
    }
}
