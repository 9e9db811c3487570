//! Measured disk figures (from a `cqlbench probe` result) flagged against a disk's limits: each
//! profile's IOPS and MB/s (read and write together) against the disk's sustained IOPS and MB/s.

use serde::Serialize;

use crate::format::thousands;
use crate::prices::disk::DiskQuote;
use crate::result::probe::ProbeResult;

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

/// The figures of a probe result: per profile, its IOPS and its MB/s (fio's MB/s are 10^6
/// bytes per second, as the catalogue's disk limits).
pub fn probe_figures(probe: &ProbeResult) -> Vec<ProbeFigure> {
    probe
        .profiles
        .iter()
        .flat_map(|p| {
            [
                ProbeFigure {
                    field: format!("{}.iops", p.name),
                    measure: Measure::Iops,
                    value: p.iops,
                },
                ProbeFigure {
                    field: format!("{}.mb_s", p.name),
                    measure: Measure::Mbps,
                    value: p.mb_s,
                },
            ]
        })
        .filter(|f| f.value.is_finite() && f.value > 0.0)
        .collect()
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
    use crate::prices::default_catalog;
    use crate::prices::disk::DiskRequest;

    fn probe() -> ProbeResult {
        serde_json::from_str(include_str!("../probe/testdata/probe-result.json")).unwrap()
    }

    #[test]
    fn each_profile_gives_its_iops_and_mb_s() {
        let p = probe();
        let f = probe_figures(&p);
        assert_eq!(f.len(), 2 * p.profiles.len());
        let first = &p.profiles[0];
        assert_eq!(f[0].field, format!("{}.iops", first.name));
        assert_eq!((f[0].measure, f[0].value), (Measure::Iops, first.iops));
        assert_eq!((f[1].measure, f[1].value), (Measure::Mbps, first.mb_s));
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
        let figure = |field: &str, measure, value| ProbeFigure {
            field: field.into(),
            measure,
            value,
        };
        let figures = [
            figure("burst.iops", Measure::Iops, 16000.0),
            figure("lcs.iops", Measure::Iops, 2998.0),
            // 125 MiB/s = 131.07 MB/s
            figure("lcs.mb_s", Measure::Mbps, 125.0 * 1.048576),
        ];
        let flags = flag_against(&figures, &q);
        // 16,000 / 10,200 = 157%: above; 2,998 / 10,200 = 29%: below
        assert!(flags[0].verdict.starts_with("above"), "{:?}", flags[0]);
        assert!(flags[1].verdict.starts_with("below") && (flags[1].ratio - 0.2939).abs() < 1e-3);
        // 131.07 MB/s / 250 = 52%
        assert_eq!(
            flags[2].line(),
            "lcs.mb_s 131 MB/s vs limit 250 (52%): below the limit: something else caps it (queue depth, VM-size caps, CPU)"
        );
    }
}
