//! Assembling samples from scrapes that answer late. Pure: the sampler hands in ticks and
//! answers with their times, and takes out finished samples in order.
//!
//! Every tick starts a scrape of every node and opens a sample; each answer fills in its own
//! tick's sample, however late it comes (up to the scrape timeout), so a node that answers
//! in 1.5 s on a saturated machine still has a reading for that second, stamped with how long
//! it took (`scrape_s`). Scrapes do not wait for each other: a node may have up to
//! [`MAX_OUTSTANDING`] scrapes running; past that the tick's sample records the node as
//! missing instead of queueing another.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::reading::{NodeReading, node_sample};
use super::scrape::ScrapeError;
use crate::result::series::{HostSample, NodeSample, Sample};

/// Scrapes of one node that may run at once.
pub const MAX_OUTSTANDING: usize = 3;

enum Part {
    Awaiting,
    Answered(Instant, Result<NodeReading, ScrapeError>),
    Skipped(String),
}

struct Open {
    seq: u64,
    tick: Instant,
    t_s: f64,
    host: Option<HostSample>,
    node_hosts: Vec<Option<HostSample>>,
    alive: Vec<Option<bool>>,
    parts: Vec<Part>,
}

/// Samples in the making.
pub struct Assembler {
    timeout: Duration,
    outstanding: Vec<usize>,
    open: VecDeque<Open>,
    /// Each node's last reading and when it was taken (the middle of its scrape).
    prev: Vec<Option<(Instant, NodeReading)>>,
    /// The dialect each node's latest reading came in.
    dialects: Vec<Option<&'static str>>,
    next_seq: u64,
}

impl Assembler {
    /// For `nodes` endpoints whose scrapes give up after `timeout`.
    pub fn new(nodes: usize, timeout: Duration) -> Assembler {
        Assembler {
            timeout,
            outstanding: vec![0; nodes],
            open: VecDeque::new(),
            prev: vec![None; nodes],
            dialects: vec![None; nodes],
            next_seq: 0,
        }
    }

    /// Opens the sample of a tick; returns its number and the nodes to scrape for it.
    /// `alive` is each node's liveness from a source that knows (a local node's process).
    pub fn tick(
        &mut self,
        tick: Instant,
        t_s: f64,
        host: Option<HostSample>,
        alive: Vec<Option<bool>>,
    ) -> (u64, Vec<usize>) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let mut ask = Vec::new();
        let parts = (0..self.outstanding.len())
            .map(|i| {
                if self.outstanding[i] >= MAX_OUTSTANDING {
                    Part::Skipped(format!(
                        "{MAX_OUTSTANDING} scrapes still running (node busy)"
                    ))
                } else {
                    self.outstanding[i] += 1;
                    ask.push(i);
                    Part::Awaiting
                }
            })
            .collect();
        self.open.push_back(Open {
            seq,
            tick,
            t_s,
            host,
            node_hosts: Vec::new(),
            alive,
            parts,
        });
        (seq, ask)
    }

    /// The node exporters' hosts' figures of sample `seq`, taken at its tick.
    pub fn node_hosts(&mut self, seq: u64, hosts: Vec<Option<HostSample>>) {
        if let Some(o) = self.open.iter_mut().find(|o| o.seq == seq) {
            o.node_hosts = hosts;
        }
    }

    /// Some open sample still waits for an answer.
    pub fn awaiting(&self) -> bool {
        self.open
            .iter()
            .any(|o| o.parts.iter().any(|p| matches!(p, Part::Awaiting)))
    }

    /// The answer of node `node`'s scrape for sample `seq`, received at `at`.
    pub fn answer(
        &mut self,
        seq: u64,
        node: usize,
        at: Instant,
        r: Result<NodeReading, ScrapeError>,
    ) {
        if let Some(n) = self.outstanding.get_mut(node) {
            *n = n.saturating_sub(1);
        }
        if let (Ok(r), Some(d)) = (&r, self.dialects.get_mut(node))
            && r.dialect.is_some()
        {
            *d = r.dialect;
        }
        if let Some(o) = self.open.iter_mut().find(|o| o.seq == seq)
            && let Some(p @ Part::Awaiting) = o.parts.get_mut(node)
        {
            *p = Part::Answered(at, r);
        }
    }

    /// The dialect each node's figures came in, as far as its readings told.
    pub fn dialects(&self) -> &[Option<&'static str>] {
        &self.dialects
    }

    /// The samples finished by `now`, in order: every part answered, or the oldest open one
    /// waited past the timeout (a second more than the scrape's own, whose error normally
    /// comes first). With `end`, every open sample is finished, its unanswered nodes
    /// recorded as such. Also returns the scrape errors met.
    pub fn ready(&mut self, now: Instant, end: bool) -> (Vec<Sample>, Vec<ScrapeError>) {
        let (mut out, mut errors) = (Vec::new(), Vec::new());
        while let Some(o) = self.open.front() {
            let complete = o.parts.iter().all(|p| !matches!(p, Part::Awaiting));
            let expired =
                now.saturating_duration_since(o.tick) > self.timeout + Duration::from_secs(1);
            if !(complete || expired || end) {
                break;
            }
            let o = self.open.pop_front().expect("front exists");
            let why_open = if end && !expired {
                "the run ended before the scrape answered".to_string()
            } else {
                format!("no answer within {:.1}s", self.timeout.as_secs_f64())
            };
            let nodes = o
                .parts
                .into_iter()
                .enumerate()
                .map(|(i, part)| {
                    let alive = o.alive.get(i).copied().flatten();
                    let missing = |why: String, up: Option<bool>| NodeSample {
                        up,
                        missing: Some(why),
                        ..NodeSample::default()
                    };
                    match part {
                        Part::Answered(at, Ok(r)) => {
                            // The reading was taken somewhere inside the scrape.
                            let taken = o.tick + at.saturating_duration_since(o.tick) / 2;
                            let s = match &self.prev[i] {
                                Some((t, p)) => node_sample(
                                    &r,
                                    Some(p),
                                    taken.saturating_duration_since(*t).as_secs_f64(),
                                ),
                                None => node_sample(&r, None, 0.0),
                            };
                            self.prev[i] = Some((taken, r));
                            NodeSample {
                                up: alive.or(Some(true)),
                                scrape_s: Some(at.saturating_duration_since(o.tick).as_secs_f64()),
                                ..s
                            }
                        }
                        Part::Answered(_, Err(e)) => {
                            let s =
                                missing(e.message.clone(), alive.or(e.refused.then_some(false)));
                            errors.push(e);
                            s
                        }
                        Part::Skipped(why) => missing(why, alive),
                        Part::Awaiting => missing(why_open.clone(), alive),
                    }
                })
                .collect();
            out.push(Sample {
                t_s: o.t_s,
                nodes,
                host: o.host,
                node_hosts: o.node_hosts,
            });
        }
        (out, errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(pending: f64, cpu_s: f64) -> NodeReading {
        NodeReading {
            pending_compactions: Some(pending),
            cpu_seconds: Some(cpu_s),
            ..NodeReading::default()
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_late_answer_fills_its_own_sample_and_samples_come_out_in_order() {
        let t0 = Instant::now();
        let mut a = Assembler::new(2, Duration::from_secs(5));
        let (s0, ask) = a.tick(t0, 1.0, None, vec![Some(true), None]);
        assert_eq!(ask, [0, 1]);
        a.answer(s0, 0, t0 + ms(20), Ok(reading(1.0, 10.0)));
        // Node 1 is slow: sample 0 waits for it, and so does sample 1 behind it.
        let (s1, _) = a.tick(t0 + ms(1000), 2.0, None, vec![Some(true), None]);
        a.answer(s1, 0, t0 + ms(1020), Ok(reading(2.0, 11.0)));
        a.answer(s1, 1, t0 + ms(1030), Ok(reading(5.0, 3.0)));
        assert!(a.ready(t0 + ms(1100), false).0.is_empty());
        // Sample 0's answer from node 1 comes 1.5 s late, after sample 1's.
        a.answer(s0, 1, t0 + ms(1500), Ok(reading(4.0, 2.0)));
        let (done, errors) = a.ready(t0 + ms(1500), false);
        assert!(errors.is_empty());
        assert_eq!(done.len(), 2);
        assert_eq!((done[0].t_s, done[1].t_s), (1.0, 2.0));
        let n1 = &done[0].nodes[1];
        assert_eq!((n1.missing.as_deref(), n1.up), (None, Some(true)));
        assert_eq!(n1.pending_compactions, Some(4.0));
        assert!((n1.scrape_s.unwrap() - 1.5).abs() < 1e-9);
        // Rates come from two readings over the time between them (the middle of each
        // scrape): node 0 at 10 ms and 1010 ms used 1 CPU-second.
        assert!((done[1].nodes[0].cpu_cores.unwrap() - 1.0).abs() < 1e-9);
        // Node 1's second reading was taken at 1015 ms, its first at 750 ms.
        let c = done[1].nodes[1].cpu_cores.unwrap();
        assert!((c - 1.0 / 0.265).abs() < 1e-6, "{c}");
    }

    #[test]
    fn no_more_than_three_scrapes_run_at_once_and_a_dead_node_is_told_from_a_slow_one() {
        let t0 = Instant::now();
        let mut a = Assembler::new(1, Duration::from_secs(5));
        let alive = || vec![Some(true)];
        for k in 0..3u64 {
            let (_, ask) = a.tick(t0 + ms(1000 * k), k as f64, None, alive());
            assert_eq!(ask, [0]);
        }
        let (_, ask) = a.tick(t0 + ms(3000), 3.0, None, alive());
        assert!(ask.is_empty(), "a fourth scrape is not queued");
        // Past the timeout the oldest sample is finished without its answer.
        let (done, _) = a.ready(t0 + ms(6100), false);
        assert_eq!(done.len(), 1);
        assert_eq!(
            done[0].nodes[0].missing.as_deref(),
            Some("no answer within 5.0s")
        );
        assert_eq!(done[0].nodes[0].up, Some(true), "the process is alive");
        // The scrape's own error then arrives for a sample already finished: it only frees
        // a slot.
        a.answer(
            0,
            0,
            t0 + ms(6200),
            Err(ScrapeError {
                message: "x".into(),
                refused: false,
            }),
        );
        let (_, ask) = a.tick(t0 + ms(6300), 6.0, None, alive());
        assert_eq!(ask, [0]);
        // A refused connection on a remote node (no process to ask) is a node that is down.
        let mut r = Assembler::new(1, Duration::from_secs(5));
        let (s, _) = r.tick(t0, 0.0, None, vec![None]);
        let refused = ScrapeError {
            message: "node1: 10.0.0.1:7070: connection refused".into(),
            refused: true,
        };
        r.answer(s, 0, t0 + ms(5), Err(refused));
        let (done, errors) = r.ready(t0 + ms(5), false);
        assert_eq!(done[0].nodes[0].up, Some(false));
        assert_eq!(errors.len(), 1);
        // The end of the run finishes what is still open, saying so.
        let (_, _) = r.tick(t0 + ms(1000), 1.0, None, vec![None]);
        let (done, _) = r.ready(t0 + ms(1100), true);
        let n = &done[0].nodes[0];
        assert_eq!(
            (n.up, n.missing.as_deref()),
            (None, Some("the run ended before the scrape answered"))
        );
        let (done, _) = a.ready(t0 + ms(6400), true);
        assert_eq!(done.len(), 4);
        assert_eq!(
            done[0].nodes[0].missing.as_deref(),
            Some("the run ended before the scrape answered")
        );
        assert_eq!(
            done[2].nodes[0].missing.as_deref(),
            Some("3 scrapes still running (node busy)")
        );
    }
}
