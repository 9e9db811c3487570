//! Running a run step: its plan on the load engine (or as `--loaders` processes), with its
//! events sent to the context and its result returned.

use std::path::Path;

use super::RunStep;
use crate::metrics::prometheus_server::{self, FetchSpec};
use crate::result::series::MetricSeries;
use crate::result::{RunResult, RunStatus};
use crate::scenario::event::{Event, LoadersEvent, Warning};
use crate::scenario::{Context, ScenarioError};
use crate::shards::launch::{self, Launch, LaunchEvent};
use crate::step::order::Task;

/// Runs the step; an error for a run that did not complete (an interrupted run keeps its
/// result and is returned).
pub fn execute(a: &RunStep, ctx: &Context) -> Result<RunResult, ScenarioError> {
    let plan = a.to_plan(ctx)?;
    // The server's files are read before the run, not found bad after it.
    let fetch = a.prometheus_fetch(ctx)?;
    crate::scenario::steps::prepare_out(&plan.out)?;
    if let Some(n) = a.loaders {
        return loaders(a, n, &plan.out, fetch, ctx);
    }
    ctx.emit(Event::ResultAt {
        what: "result",
        path: &plan.out,
    });
    let mut result = crate::load::run(&plan, ctx.cancel.flag(), &mut |e| ctx.emit(Event::Load(e)))?;
    if let Some(spec) = fetch {
        fetch_hosts(&mut result, spec, &plan.out, ctx);
    }
    ctx.emit(Event::RunDone { result: &result });
    ctx.emit(Event::ResultAt {
        what: "result",
        path: &plan.out,
    });
    match &result.status {
        RunStatus::Completed | RunStatus::Interrupted => Ok(result),
        RunStatus::TooManyErrors => Err(ScenarioError::RunEnded(format!(
            "stopped: more than --max-errors {} errors",
            a.max_errors
        ))),
        other => Err(ScenarioError::RunEnded(format!("run ended as {other:?}"))),
    }
}

/// The run's window fetched from `--prometheus-server` into its result (written again): a
/// server that does not answer, or answers an error, is a warning and the result stays as
/// the run wrote it.
fn fetch_hosts(result: &mut RunResult, mut spec: FetchSpec, out: &Path, ctx: &Context) {
    // The cluster's other nodes, as the node asked saw them, beside the contact points.
    for n in &result.fingerprint.nodes {
        let host = prometheus_server::host_part(&n.address);
        if !spec
            .nodes
            .iter()
            .any(|(_, a)| prometheus_server::host_part(a) == host)
        {
            spec.nodes.push((host.to_string(), n.address.clone()));
        }
    }
    spec.t0_unix_s = result.started_unix_s as f64;
    spec.start_unix_s = spec.t0_unix_s;
    spec.end_unix_s = result
        .finished_unix_s
        .map_or_else(crate::host::unix_now, |s| s as f64);
    let fetched = match prometheus_server::fetch(&spec) {
        Ok(f) => f,
        Err(e) => {
            ctx.emit(Event::Warning(Warning::FetchFailed {
                error: e.to_string(),
            }));
            return;
        }
    };
    ctx.emit(Event::SeriesFetched { fetched: &fetched });
    let metrics = result.metrics.get_or_insert_with(|| {
        Box::new(MetricSeries {
            interval_s: spec.step_s,
            ..MetricSeries::default()
        })
    });
    metrics.fetched = Some(Box::new(fetched));
    if let Err(e) = result.write(out) {
        ctx.emit(Event::Warning(Warning::FetchFailed {
            error: format!("writing {} with the host series: {e}", out.display()),
        }));
    }
}

/// `--loaders N`: this step run as shards 0..N by N child processes of the cqlbench the
/// context names, merged into `out`.
fn loaders(
    a: &RunStep,
    n: u64,
    out: &std::path::Path,
    fetch: Option<crate::metrics::prometheus_server::FetchSpec>,
    ctx: &Context,
) -> Result<RunResult, ScenarioError> {
    // The hosts' series are fetched once, into the merged result.
    let each = RunStep {
        loaders: None,
        out: None,
        quiet: false,
        prometheus_server: None,
        prometheus_instance: Vec::new(),
        prometheus_credentials: None,
        prometheus_token: None,
        prometheus_ca: None,
        ..a.clone()
    };
    let mut merged = launch_loaders(Task::Run(Box::new(each)), n, a.run_id.clone(), out, ctx)?;
    if let Some(spec) = fetch {
        fetch_hosts(&mut merged, spec, out, ctx);
    }
    Ok(merged)
}

/// `task` run by `n` child processes of the cqlbench the context names, as shards 0..n of
/// run `run_id` (a new one when none is given), their results merged into `out`.
pub fn launch_loaders(
    task: Task,
    n: u64,
    run_id: Option<String>,
    out: &std::path::Path,
    ctx: &Context,
) -> Result<RunResult, ScenarioError> {
    let Some(exe) = &ctx.exe else {
        crate::scenario::error::refuse!(
            "--loaders starts cqlbench processes: this caller gave no cqlbench executable"
        );
    };
    let run_id = run_id.unwrap_or_else(|| {
        crate::spec::load::default_run_id(crate::host::unix_now_s(), Some(std::process::id()))
    });
    let l = Launch::all(exe.clone(), task, n, run_id.clone(), out.to_path_buf());
    ctx.emit(Event::Loaders(LoadersEvent::Started {
        count: n,
        run_id: &run_id,
    }));
    let merged = launch::run(&l, &ctx.cancel, &mut |e| match e {
        LaunchEvent::Started {
            index,
            count,
            out,
            log,
        } => ctx.emit(Event::Loaders(LoadersEvent::Shard {
            index,
            count,
            out,
            log,
        })),
    })?;
    ctx.emit(Event::RunDone { result: &merged });
    if let Some(m) = &merged.merged {
        ctx.emit(Event::Loaders(LoadersEvent::Merged {
            count: n,
            start_spread_ms: m.start_spread_ms,
            out,
        }));
    }
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use super::*;
    use crate::metrics::prometheus_server::Server;
    use crate::result::fixture::{RunShape, run};

    fn spec(url: &str) -> FetchSpec {
        FetchSpec {
            server: Server::parse(url).unwrap(),
            instances: vec![],
            nodes: vec![("node1".into(), "127.0.0.1".into())],
            start_unix_s: 0.0,
            end_unix_s: 0.0,
            t0_unix_s: 0.0,
            step_s: 1.0,
            timeout: Duration::from_secs(5),
            access: Default::default(),
        }
    }

    /// A context whose events' lines (warnings and fetches) are kept.
    fn listening(dir: &Path) -> (Context, Arc<Mutex<Vec<String>>>) {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let h = heard.clone();
        let ctx = Context::new(dir, dir).with_sink(Arc::new(move |e: &Event| match e {
            Event::Warning(Warning::FetchFailed { error }) => {
                h.lock().unwrap().push(format!("warning: {error}"))
            }
            Event::SeriesFetched { fetched } => h.lock().unwrap().push(format!(
                "fetched {} missing {:?}",
                fetched.hosts.len(),
                fetched.missing
            )),
            _ => {}
        }));
        (ctx, heard)
    }

    /// A result as the run wrote it: its file, and its bytes.
    fn written(dir: &Path) -> (RunResult, std::path::PathBuf, Vec<u8>) {
        let mut result = run("remote", &RunShape::default());
        result.started_unix_s = 1000;
        result.finished_unix_s = Some(1002);
        result.metrics = None;
        let out = dir.join("run.json");
        result.write(&out).unwrap();
        let bytes = std::fs::read(&out).unwrap();
        (result, out, bytes)
    }

    #[test]
    fn a_server_that_does_not_answer_is_a_warning_and_the_written_result_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (mut result, out, before) = written(dir.path());
        let (ctx, heard) = listening(dir.path());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        fetch_hosts(&mut result, spec(&url), &out, &ctx);
        assert_eq!(
            std::fs::read(&out).unwrap(),
            before,
            "the result file is intact"
        );
        assert!(result.metrics.is_none());
        let heard = heard.lock().unwrap();
        assert_eq!(heard.len(), 1, "{heard:?}");
        assert!(
            heard[0].starts_with(&format!("warning: Prometheus server {url}: ")),
            "{heard:?}"
        );
    }

    /// A server that has node1's CPU counters (user and idle of one CPU, one more second of
    /// each per step: half busy) at 1000, 1001 and 1002, and nothing else (no node's own
    /// metrics).
    fn cpu_only_server() -> String {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let url = format!("http://{}", server.server_addr().to_ip().unwrap());
        let labels = r#""instance":"127.0.0.1:9100","job":"node""#;
        let cpu = |mode: &str| {
            format!(
                r#"{{"metric":{{"__name__":"node_cpu_seconds_total","cpu":"0","mode":"{mode}",{labels}}},"values":[[1000,"10"],[1001,"11"],[1002,"12"]]}}"#
            )
        };
        let cpu = format!("[{},{}]", cpu("user"), cpu("idle"));
        std::thread::spawn(move || {
            for request in server.incoming_requests() {
                let u = request.url().to_string();
                let body = if u.starts_with("/api/v1/query_range") {
                    let result = if u.contains("node_cpu_seconds_total") {
                        cpu.as_str()
                    } else {
                        "[]"
                    };
                    format!(
                        r#"{{"status":"success","data":{{"resultType":"matrix","result":{result}}}}}"#
                    )
                } else if u.contains("node_cpu_seconds_total") {
                    format!(
                        r#"{{"status":"success","data":{{"resultType":"vector","result":[{{"metric":{{{labels}}},"value":[1002,"2"]}}]}}}}"#
                    )
                } else {
                    r#"{"status":"success","data":{"resultType":"vector","result":[]}}"#.into()
                };
                let header =
                    tiny_http::Header::from_bytes("Content-Type", "application/json").unwrap();
                let _ = request.respond(tiny_http::Response::from_string(body).with_header(header));
            }
        });
        url
    }

    #[test]
    fn fetched_hosts_are_written_into_the_result_with_what_was_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let (mut result, out, _) = written(dir.path());
        let (ctx, heard) = listening(dir.path());
        fetch_hosts(&mut result, spec(&cpu_only_server()), &out, &ctx);
        let heard = heard.lock().unwrap();
        assert_eq!(heard.len(), 1, "{heard:?}");
        assert!(heard[0].starts_with("fetched 1 missing"), "{heard:?}");
        let read = RunResult::read(&out).unwrap();
        assert_eq!(read, result, "the file holds what the run returns");
        let m = read.metrics.expect("a series made for the fetched hosts");
        let f = m.fetched.expect("fetched hosts");
        assert!(f.server.starts_with("http://127.0.0.1:"), "{}", f.server);
        assert_eq!(
            (f.start_unix_s, f.end_unix_s, f.step_s),
            (1000.0, 1002.0, 1.0)
        );
        assert_eq!(f.hosts.len(), 1);
        assert_eq!(
            (f.hosts[0].node.as_str(), f.hosts[0].exporter.as_str()),
            ("node1", "127.0.0.1:9100")
        );
        assert_eq!(f.hosts[0].job.as_deref(), Some("node"));
        assert_eq!(
            f.samples.iter().map(|s| s.t_s).collect::<Vec<_>>(),
            [0.0, 1.0, 2.0]
        );
        let h = f.samples[2].node_hosts[0].clone().expect("figures");
        assert_eq!((h.cpu_user, h.cpu_system), (0.5, 0.0));
        assert!(f.nodes.is_empty());
        assert_eq!(
            f.missing,
            [
                "node1: no Cassandra metrics instance with host 127.0.0.1 (give --prometheus-instance node1=INSTANCE)",
                "node1 (127.0.0.1:9100): node_disk_*, node_load1, node_memory_*, node_network_*"
            ]
        );
    }
}
