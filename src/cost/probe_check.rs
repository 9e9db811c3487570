//! Measured disk figures (from a `cqlbench probe` result) flagged against a disk's limits.
//!
//! The probe result format is still being written, so only a small, documented subset is read
//! (see docs/cost.md): numeric fields at the top level of the JSON document or one object deep
//! (e.g. `{"disk": {"lcs_read_iops": 2998}}`), by the suffix of their names:
//!
//! - `iops` or `…_iops`: operations per second;
//! - `…_mbps`, `…_mb_s`: MB/s; `…_mib_s`, `…_mibps`: MiB/s (× 1.048576 to MB/s);
//!   `…_bytes_per_s`: bytes/s (÷ 1,000,000).

use serde::Serialize;
use serde_json::Value;

use super::disk::DiskQuote;
use super::units::thousands;

/// What a measured figure counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    Iops,
    Mbps,
}

/// One measured figure of the probe, normalised to IOPS or MB/s.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeFigure {
    /// The JSON path of the field, e.g. `disk.lcs_read_iops`.
    pub field: String,
    pub measure: Measure,
    pub value: f64,
}

/// A measured figure compared with the disk's limit.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeFlag {
    pub field: String,
    pub measure: Measure,
    pub measured: f64,
    pub limit: f64,
    /// measured / limit.
    pub ratio: f64,
    pub verdict: &'static str,
}

/// The figures of a probe result that this module understands.
pub fn probe_figures(doc: &Value) -> Vec<ProbeFigure> {
    let mut out = Vec::new();
    if let Some(map) = doc.as_object() {
        for (k, v) in map {
            match v {
                Value::Object(inner) => {
                    for (k2, v2) in inner {
                        push_figure(&mut out, &format!("{k}.{k2}"), k2, v2);
                    }
                }
                _ => push_figure(&mut out, k, k, v),
            }
        }
    }
    out
}

fn push_figure(out: &mut Vec<ProbeFigure>, path: &str, name: &str, v: &Value) {
    let Some(n) = v.as_f64().filter(|n| n.is_finite() && *n >= 0.0) else {
        return;
    };
    let name = name.to_ascii_lowercase();
    let ends = |s: &str| name == s.trim_start_matches('_') || name.ends_with(s);
    let (measure, value) = if ends("_iops") {
        (Measure::Iops, n)
    } else if ends("_mbps") || ends("_mb_s") {
        (Measure::Mbps, n)
    } else if ends("_mib_s") || ends("_mibps") {
        (Measure::Mbps, n * 1.048_576)
    } else if ends("_bytes_per_s") {
        (Measure::Mbps, n / 1e6)
    } else {
        return;
    };
    out.push(ProbeFigure {
        field: path.to_string(),
        measure,
        value,
    });
}

/// Compares each figure with the disk's sustained IOPS or MB/s limit.
pub fn flag_against(figures: &[ProbeFigure], disk: &DiskQuote) -> Vec<ProbeFlag> {
    figures
        .iter()
        .map(|f| {
            let limit = match f.measure {
                Measure::Iops => disk.iops,
                Measure::Mbps => disk.mbps,
            };
            let ratio = if limit > 0.0 {
                f.value / limit
            } else {
                f64::INFINITY
            };
            let verdict = if ratio > 1.05 {
                "above the sustained limit: burst credits, caching, or not this disk"
            } else if ratio >= 0.9 {
                "at the limit: the disk's provisioned performance is what caps this"
            } else {
                "below the limit: something else caps it (queue depth, VM-size caps, CPU)"
            };
            ProbeFlag {
                field: f.field.clone(),
                measure: f.measure,
                measured: f.value,
                limit,
                ratio,
                verdict,
            }
        })
        .collect()
}

impl ProbeFlag {
    /// One line for people: "disk.read_iops 2,998 IOPS vs limit 10,200 (29%): below …".
    pub fn line(&self) -> String {
        let unit = match self.measure {
            Measure::Iops => "IOPS",
            Measure::Mbps => "MB/s",
        };
        format!(
            "{} {} {unit} vs limit {} ({:.0}%): {}",
            self.field,
            thousands(self.measured),
            thousands(self.limit),
            self.ratio * 100.0,
            self.verdict
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::default_catalog;
    use crate::cost::disk::DiskRequest;

    #[test]
    fn figures_are_read_by_suffix_one_level_deep() {
        let doc = serde_json::json!({
            "schema_version": 1,
            "cpu_score": 6901,
            "read_iops": 2998,
            "disk": {"lcs_mib_s": 125.0, "stcs_write_mbps": 80, "p99_read_ms": 5.1},
            "hostname": "x"
        });
        let f = probe_figures(&doc);
        let names: Vec<&str> = f.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(
            names,
            ["disk.lcs_mib_s", "disk.stcs_write_mbps", "read_iops"]
        );
        // 125 MiB/s × 1.048576 = 131.07 MB/s
        assert!((f[0].value - 131.072).abs() < 1e-9);
    }

    #[test]
    fn ref_000_gp2_probe_against_its_limits() {
        // ref 000: r5.2xlarge + gp2 (3.4 TB): 2,998 IOPS and 125 MiB/s under its fio profile
        let cat = default_catalog().unwrap();
        let gp2 = cat.disk("gp2").unwrap();
        let req = DiskRequest {
            size_gb: 3400.0,
            iops: None,
            mbps: None,
        };
        let q = gp2.formula.quote("gp2", &req, 730.0).unwrap();
        let doc = serde_json::json!({"iops": 2998, "mib_s": 125, "burst_iops": 16000});
        let flags = flag_against(&probe_figures(&doc), &q);
        // 16,000 / 10,200 = 157%: above; 2,998 / 10,200 = 29%: below
        assert!(flags[0].verdict.starts_with("above"), "{:?}", flags[0]);
        assert!(flags[1].verdict.starts_with("below") && (flags[1].ratio - 0.2939).abs() < 1e-3);
        // 131.07 MB/s / 250 = 52%
        assert_eq!(
            flags[2].line(),
            "mib_s 131 MB/s vs limit 250 (52%): below the limit: something else caps it (queue depth, VM-size caps, CPU)"
        );
    }
}
