//! Faults as they happened during a run (persisted in the run result): when each began, when
//! it completed and how it ended, on the run's time axis.

use serde::{Deserialize, Serialize};

use crate::spec::fault::{Action, Fault};

/// A fault as it happened, on the run's time axis (seconds since the run's start, the axis of
/// [`crate::result::PhaseResult::offset_s`] and of the server metrics).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FaultEvent {
    pub fault: Fault,
    pub started_s: f64,
    /// When the action returned (a restart: once the node was up again); None while running
    /// or when it never ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_s: Option<f64>,
    /// Why the action failed, or why it did not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl FaultEvent {
    /// Whether the action ran at all (a fault due after the main phase ended did not).
    pub fn applied(&self) -> bool {
        self.finished_s.is_some() || self.error.is_none()
    }
}

/// The nodes the schedule has down at the moment `events` were taken: killed or stopped and
/// not started again since, or in the middle of a restart (a failed start leaves the node down
/// by the schedule's doing too). A node down but not in this set went down on its own.
pub fn taken_down(events: &[FaultEvent]) -> std::collections::BTreeSet<String> {
    let mut down = std::collections::BTreeSet::new();
    for e in events.iter().filter(|e| e.applied()) {
        let Some(n) = e.fault.node else { continue };
        let name = format!("node{n}");
        let up = e.finished_s.is_some() && e.error.is_none();
        match e.fault.action {
            Action::Kill | Action::Stop => {
                down.insert(name);
            }
            Action::Start | Action::Restart if up => {
                down.remove(&name);
            }
            Action::Start | Action::Restart => {
                down.insert(name);
            }
            _ => {}
        }
    }
    down
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(spec: &str, finished: Option<f64>, error: Option<&str>) -> FaultEvent {
        FaultEvent {
            fault: spec.parse().unwrap(),
            started_s: 0.0,
            finished_s: finished,
            error: error.map(String::from),
        }
    }

    #[test]
    fn only_a_kill_stop_or_unfinished_restart_explains_a_node_being_down() {
        let set = |evs: &[FaultEvent]| taken_down(evs).into_iter().collect::<Vec<_>>();
        // A flush or a pause naming node2 does not explain node2 being down.
        assert!(set(&[event("1s:flush:node2", Some(2.0), None)]).is_empty());
        assert!(set(&[event("1s:pause:node2", Some(1.1), None)]).is_empty());
        // Killed: down, and still down while the start runs; up once it finished.
        let kill = event("1s:kill:node2", Some(1.2), None);
        assert_eq!(set(std::slice::from_ref(&kill)), ["node2"]);
        assert_eq!(
            set(&[kill.clone(), event("5s:start:node2", None, None)]),
            ["node2"]
        );
        assert!(set(&[kill.clone(), event("5s:start:node2", Some(40.0), None)]).is_empty());
        // A start that failed leaves it down by the schedule's doing.
        assert_eq!(
            set(&[
                kill.clone(),
                event("5s:start:node2", Some(9.0), Some("boom"))
            ]),
            ["node2"]
        );
        // A restart in progress has node3 down; a finished one does not.
        assert_eq!(set(&[event("1s:restart:node3", None, None)]), ["node3"]);
        assert!(set(&[event("1s:restart:node3", Some(30.0), None)]).is_empty());
        // A kill that was never applied (the phase ended first) explains nothing.
        let late = event(
            "99s:kill:node1",
            None,
            Some("not applied: the main phase ended first"),
        );
        assert!(!late.applied());
        assert!(set(&[late]).is_empty());
    }
}
