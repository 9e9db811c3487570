//! Terminal rendering of a probe result: the infrastructure table of reference 000 (one row per
//! environment) followed by one row per fio profile.

use crate::result::probe::{CpuSource, ProbeResult};

/// Renders the headline table and the per-profile table.
pub fn render(r: &ProbeResult) -> String {
    let mut out = String::new();
    let io_mode = if r.direct_io {
        "direct I/O"
    } else {
        "buffered I/O"
    };
    out.push_str(&format!(
        "probe of {} on {} ({}, {io_mode}){}\n",
        r.env,
        r.dir,
        r.fio_version,
        if r.complete { "" } else { " [incomplete]" }
    ));
    if let Some(t) = &r.spec.remote {
        out.push_str(&format!(
            "remote host: {} (over ssh {}), kernel {}\n",
            r.host.hostname, t.dest, r.host.kernel
        ));
    }
    if let Some(d) = &r.disk {
        out.push_str(&format!("disk: {}\n", d.describe()));
    }
    out.push_str(&format!(
        "host: {}, {} cores, {:.1} GiB RAM\n\n",
        if r.host.cpu_model.is_empty() {
            "unknown CPU"
        } else {
            &r.host.cpu_model
        },
        r.host.cores,
        r.host.ram_bytes as f64 / (1u64 << 30) as f64
    ));

    let s = &r.summary;
    let cpu = match (s.cpu_events_s, s.cpu_source) {
        (Some(v), Some(CpuSource::Sysbench)) => format!("{v:.0}"),
        (Some(v), Some(CpuSource::Builtin)) => format!("{v:.0} (builtin)"),
        _ => "-".to_string(),
    };
    out.push_str(&grid(
        &[
            "env",
            "CPU events/s",
            "IOPS",
            "Disk throughput",
            "Disk p99 read latency",
        ],
        &[vec![
            r.env.clone(),
            cpu,
            opt(s.disk_iops, |v| format!("{v:.0}")),
            opt(s.disk_mb_s, |v| format!("{v:.0} MB/s")),
            opt(s.disk_read_p99_us, ms),
        ]],
    ));

    let rows: Vec<Vec<String>> = r
        .profiles
        .iter()
        .map(|p| {
            vec![
                p.name.to_string(),
                format!("{:.0}", p.read_iops),
                format!("{:.0}", p.write_iops),
                format!("{:.1}", p.read_mb_s),
                format!("{:.1}", p.write_mb_s),
                opt(p.read_p50_us, ms),
                opt(p.read_p99_us, ms),
                opt(p.write_p99_us, ms),
                opt(p.sync_p99_us, ms),
            ]
        })
        .collect();
    out.push_str(&grid(
        &[
            "profile",
            "read IOPS",
            "write IOPS",
            "read MB/s",
            "write MB/s",
            "read p50",
            "read p99",
            "write p99",
            "sync p99",
        ],
        &rows,
    ));
    if let Some(cpu) = &r.cpu {
        let source = match cpu.source {
            CpuSource::Sysbench => cpu.tool_version.clone(),
            CpuSource::Builtin => "built-in prime loop, not comparable with sysbench".into(),
        };
        out.push_str(&format!(
            "CPU: {:.0} events/s at 1 thread, {:.0} at {} threads ({source})\n",
            cpu.events_s_1_thread, cpu.events_s_all_threads, cpu.threads
        ));
    }
    for note in &r.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

fn opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".to_string())
}

/// A latency: milliseconds as in reference 000's table, microseconds below 1 ms.
fn ms(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.0} us")
    } else {
        format!("{:.2} ms", us / 1000.0)
    }
}

/// A table of `headers` and `rows` (first column left-aligned, the others right-aligned), as
/// every terminal table is rendered.
fn grid(headers: &[&str], rows: &[Vec<String>]) -> String {
    crate::format::Table {
        title: String::new(),
        header: headers.iter().map(|h| h.to_string()).collect(),
        rows: rows.to_vec(),
        text_columns: Vec::new(),
    }
    .text()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::HostFacts;
    use crate::result::probe::{CpuFigures, ProfileFigures, Summary};
    use crate::spec::probe::{ProbeSpec, Profile, Timing};

    fn sample() -> ProbeResult {
        let profile = |name, read_iops: f64, write_mb_s: f64, p99: Option<f64>| ProfileFigures {
            name,
            description: String::new(),
            runtime_s: 4,
            iops: read_iops,
            read_iops,
            write_iops: 0.0,
            mb_s: write_mb_s,
            read_mb_s: read_iops * 4096.0 / 1e6,
            write_mb_s,
            latency_job: String::new(),
            read_lat_mean_us: p99,
            read_p50_us: p99.map(|v| v / 2.0),
            read_p99_us: p99,
            write_lat_mean_us: None,
            write_p50_us: None,
            write_p99_us: None,
            sync_p50_us: None,
            sync_p99_us: None,
            job_file: String::new(),
        };
        ProbeResult {
            schema_version: 1,
            env: "laptop".into(),
            complete: true,
            started_at: "2026-11-22T02:30:05Z".into(),
            started_unix_s: 0,
            finished_at: None,
            host: HostFacts {
                hostname: "h".into(),
                cpu_model: "AMD EPYC 7B13".into(),
                cores: 2,
                ram_bytes: 24 << 30,
                kernel: "6.1".into(),
            },
            dir: "/data".into(),
            disk: None,
            fio_version: "fio-3.33".into(),
            direct_io: true,
            summary: Summary {
                cpu_events_s: Some(7244.09),
                cpu_source: Some(CpuSource::Sysbench),
                disk_iops: Some(15724.6),
                disk_mb_s: Some(1034.0),
                disk_read_p99_us: Some(1892.352),
            },
            cpu: Some(CpuFigures {
                source: CpuSource::Sysbench,
                tool_version: "sysbench 1.0.20".into(),
                threads: 2,
                duration_s: 3.0,
                events_s_1_thread: 3626.0,
                events_s_all_threads: 7244.09,
            }),
            profiles: vec![
                profile(Profile::Lcs, 19505.2, 33.5, Some(1728.512)),
                profile(Profile::SeqWrite64k, 0.0, 1034.0, None),
            ],
            notes: vec!["a note".into()],
            spec: ProbeSpec {
                dir: "/data".into(),
                env: "laptop".into(),
                quick: true,
                timing: Timing::QUICK,
                profiles: vec![],
                cpu: true,
                fio_path: "fio".into(),
                sysbench_path: "sysbench".into(),
                write_jobs_dir: None,
                out: "/x.json".into(),
                tags: Vec::new(),
                remote: None,
            },
        }
    }

    #[test]
    fn renders_the_infrastructure_and_profile_tables() {
        let want = "\
probe of laptop on /data (fio-3.33, direct I/O)
host: AMD EPYC 7B13, 2 cores, 24.0 GiB RAM

  env     CPU events/s   IOPS  Disk throughput  Disk p99 read latency
  laptop          7244  15725        1034 MB/s                1.89 ms

  profile        read IOPS  write IOPS  read MB/s  write MB/s  read p50  read p99  write p99  sync p99
  lcs                19505           0       79.9        33.5    864 us   1.73 ms          -         -
  seq_write_64k          0           0        0.0      1034.0         -         -          -         -

CPU: 3626 events/s at 1 thread, 7244 at 2 threads (sysbench 1.0.20)
note: a note
";
        assert_eq!(render(&sample()), want);
    }

    #[test]
    fn marks_incomplete_results_and_builtin_cpu_scores() {
        let mut r = sample();
        r.complete = false;
        r.summary.cpu_source = Some(CpuSource::Builtin);
        let text = render(&r);
        assert!(text.lines().next().unwrap().ends_with("[incomplete]"));
        assert!(text.contains("7244 (builtin)"));
    }

    #[test]
    fn names_the_remote_host_and_its_disk() {
        let mut r = sample();
        r.spec.remote = Some(crate::spec::ssh::SshTarget {
            dest: "root@10.0.0.5:2222".parse().unwrap(),
            identity: None,
            options: Vec::new(),
            connect_timeout_s: 10,
        });
        r.disk = crate::result::probe::DiskFacts::parse_df("/dev/sdb xfs 1048576 1 2 1% /data\n");
        let text = render(&r);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[1],
            "remote host: h (over ssh root@10.0.0.5:2222), kernel 6.1"
        );
        assert_eq!(lines[2], "disk: /dev/sdb (xfs, 1.0 GiB, mounted on /data)");
        assert_eq!(r.host_label(), "h (ssh root@10.0.0.5:2222)");
    }
}
