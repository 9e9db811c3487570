//! Pricing a cluster: nodes × instance + nodes × volume + the managed Kubernetes fee, each line
//! with the arithmetic and the catalogue entry it came from.

use std::fmt;

use serde::Serialize;

use super::CostError;
use crate::format::{rate, thousands, usd};
use crate::prices::PriceError;
use crate::prices::catalog::{Catalog, Instance, Source};
use crate::prices::disk::{DiskQuote, DiskRequest};
use crate::prices::units::{DiskSpec, Pricing};

/// Where a number printed by `cost` or `plan` came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum Origin {
    /// A catalogue entry, with its source and date.
    Catalogue(String),
    /// A formula applied to other numbers.
    Formula(String),
    /// A measured result file.
    Measured(String),
    /// A default or a figure assumed, not measured.
    Assumed(String),
    /// Given on the command line.
    Input,
}

impl Origin {
    pub fn catalogue(entry: &str, s: &Source) -> Origin {
        Origin::Catalogue(format!("{entry} ({}, {})", s.source, s.date))
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Catalogue(s) => write!(f, "catalogue: {s}"),
            Origin::Formula(s) => write!(f, "formula: {s}"),
            Origin::Measured(s) => write!(f, "measured: {s}"),
            Origin::Assumed(s) => write!(f, "assumed: {s}"),
            Origin::Input => f.write_str("input"),
        }
    }
}

/// The cluster to price: nodes of one cloud instance type, a volume each, and the fee of a
/// managed Kubernetes service.
#[derive(Debug, Clone, Serialize)]
pub struct CloudCluster {
    pub nodes: u32,
    pub instance: String,
    /// One volume per node; `None` prices no data disk, `local` uses the instance's own disks.
    pub disk: Option<DiskSpec>,
    /// A managed Kubernetes service of the catalogue (eks, gke, aks).
    pub k8s: Option<String>,
    pub pricing: Pricing,
}

/// One priced line of a breakdown.
#[derive(Debug, Clone, Serialize)]
pub struct CostLine {
    pub item: String,
    pub how: String,
    pub monthly_usd: f64,
    pub origin: Origin,
}

/// A cluster's monthly cost, split into instances, disks and the Kubernetes fee.
#[derive(Debug, Clone, Serialize)]
pub struct CostBreakdown {
    pub nodes: u32,
    pub instance: String,
    pub provider: String,
    pub pricing: Pricing,
    pub vcpus: u32,
    pub ram_gb: f64,
    pub local_disk_gb: f64,
    pub instance_monthly_usd: f64,
    pub instances_monthly_usd: f64,
    pub disks_monthly_usd: f64,
    pub k8s_fee_monthly_usd: f64,
    pub total_monthly_usd: f64,
    /// The volume of one node, with its IOPS and MB/s limits.
    pub disk: Option<DiskQuote>,
    pub lines: Vec<CostLine>,
    pub notes: Vec<String>,
}

impl CostBreakdown {
    /// Dollars per month for each 1,000 ops/s of `ops_per_s`.
    pub fn cost_per_1k_ops_usd(&self, ops_per_s: f64) -> Option<f64> {
        cost_per_1k_ops_usd(self.total_monthly_usd, ops_per_s)
    }
}

/// Dollars per month for each 1,000 ops/s: `monthly / (ops_per_s / 1000)`; none for no
/// throughput.
pub fn cost_per_1k_ops_usd(monthly_usd: f64, ops_per_s: f64) -> Option<f64> {
    (ops_per_s > 0.0 && ops_per_s.is_finite()).then(|| monthly_usd / (ops_per_s / 1000.0))
}

/// The monthly price of one instance under a pricing model.
#[derive(Debug, Clone, Serialize)]
pub struct InstancePrice {
    pub monthly_usd: f64,
    pub how: String,
    pub origin: Origin,
}

/// One node's monthly price: on-demand (less any sustained-use discount), an explicit reserved
/// price (upfront spread over the term plus the hourly rate), or the provider's reserved
/// discount off on-demand.
pub fn instance_monthly(
    cat: &Catalog,
    inst: &Instance,
    pricing: Pricing,
) -> Result<InstancePrice, CostError> {
    let h = cat.hours_per_month;
    let entry = format!("instance {}", inst.name);
    let Some(term) = pricing.term() else {
        let sud = inst.sustained_use_discount;
        let monthly = inst.usd_per_hour * h * (1.0 - sud);
        let how = if sud > 0.0 {
            format!(
                "${}/h × {h} h × (1 − {:.0}% sustained-use discount)",
                rate(inst.usd_per_hour),
                sud * 100.0
            )
        } else {
            format!("${}/h × {h} h", inst.usd_per_hour)
        };
        return Ok(InstancePrice {
            monthly_usd: monthly,
            how,
            origin: Origin::catalogue(&entry, &inst.source),
        });
    };
    if let Some(r) = inst.reserved.iter().find(|r| r.term == term) {
        let months = pricing.term_months();
        return Ok(InstancePrice {
            monthly_usd: r.upfront_usd / months + r.usd_per_hour * h,
            how: format!(
                "{} upfront / {months} months + ${}/h × {h} h",
                usd(r.upfront_usd),
                rate(r.usd_per_hour)
            ),
            origin: Origin::catalogue(&format!("{entry} reserved {term}"), &r.source),
        });
    }
    if let Some(d) = cat.reserved_discount(&inst.provider, term) {
        return Ok(InstancePrice {
            monthly_usd: inst.usd_per_hour * h * (1.0 - d.discount),
            how: format!(
                "${}/h × {h} h × (1 − {:.0}% {} {term} discount)",
                rate(inst.usd_per_hour),
                d.discount * 100.0,
                inst.provider
            ),
            origin: Origin::catalogue(
                &format!(
                    "{} reserved {term} discount, {entry} {}",
                    inst.provider, inst.source.date
                ),
                &d.source,
            ),
        });
    }
    Err(PriceError::NoReservedPrice {
        instance: inst.name.clone(),
        term: term.to_string(),
    }
    .into())
}

/// Prices a cluster from the catalogue.
pub fn price_cluster(cat: &Catalog, spec: &CloudCluster) -> Result<CostBreakdown, CostError> {
    if spec.nodes == 0 {
        return Err(CostError::Plan("a cluster needs at least one node".into()));
    }
    let inst = cat.instance(&spec.instance)?;
    let n = f64::from(spec.nodes);
    let price = instance_monthly(cat, inst, spec.pricing)?;
    let mut lines = vec![CostLine {
        item: "instances".into(),
        how: format!("{} × {}", spec.nodes, price.how),
        monthly_usd: n * price.monthly_usd,
        origin: price.origin.clone(),
    }];
    let mut notes = Vec::new();
    let mut quote = None;
    match &spec.disk {
        None if inst.local_disk_gb == 0.0 => notes.push(format!(
            "{} has no local disk and no --disk was given: no data disk priced",
            inst.name
        )),
        None => {}
        Some(d) if d.is_local() => notes.push(local_disk_note(inst)?),
        Some(d) => {
            let (line, q) = volumes(cat, inst, d, spec.nodes)?;
            lines.push(line);
            quote = Some(q);
        }
    }
    if let Some(k) = &spec.k8s {
        lines.push(kubernetes_fee(cat, inst, k)?);
    }
    let sum = |item: &str| -> f64 {
        lines
            .iter()
            .filter(|l| l.item == item || (item == "fee" && l.item.ends_with(" fee")))
            .map(|l| l.monthly_usd)
            .sum()
    };
    let (instances, disks, k8s) = (sum("instances"), sum("disks"), sum("fee"));
    Ok(CostBreakdown {
        nodes: spec.nodes,
        instance: inst.name.clone(),
        provider: inst.provider.clone(),
        pricing: spec.pricing,
        vcpus: inst.vcpus,
        ram_gb: inst.ram_gb,
        local_disk_gb: inst.local_disk_gb,
        instance_monthly_usd: price.monthly_usd,
        instances_monthly_usd: instances,
        disks_monthly_usd: disks,
        k8s_fee_monthly_usd: k8s,
        total_monthly_usd: instances + disks + k8s,
        disk: quote,
        lines,
        notes,
    })
}

/// The instance's own disks: in its price, when it has some.
fn local_disk_note(inst: &Instance) -> Result<String, CostError> {
    if inst.local_disk_gb == 0.0 {
        return Err(PriceError::disk(
            "local",
            format!("{} has no local (instance-store) disk", inst.name),
        )
        .into());
    }
    Ok(format!(
        "local {} disk, {} GB per node, included in the instance price; its IOPS are \
         not catalogued: measure them with cqlbench probe",
        inst.local_disk_kind.as_deref().unwrap_or("?"),
        thousands(inst.local_disk_gb)
    ))
}

/// One network volume `d` per node: the line of the `nodes` volumes, and one volume's quote.
fn volumes(
    cat: &Catalog,
    inst: &Instance,
    d: &DiskSpec,
    nodes: u32,
) -> Result<(CostLine, DiskQuote), CostError> {
    let disk = cat.disk(&d.kind)?;
    if disk.provider != inst.provider {
        return Err(PriceError::disk(
            &d.kind,
            format!(
                "is an {} disk; instance {} is {}",
                disk.provider, inst.name, inst.provider
            ),
        )
        .into());
    }
    let req = DiskRequest {
        size_gb: d.size.map_or(0.0, |s| s.gb),
        iops: d.iops,
        mbps: d.mbps,
    };
    let q = disk.formula.quote(&disk.name, &req, cat.hours_per_month)?;
    let parts: Vec<&str> = q.items.iter().map(|i| i.how.as_str()).collect();
    let line = CostLine {
        item: "disks".into(),
        how: format!(
            "{nodes} × ({}) = {nodes} × {}",
            parts.join(" + "),
            usd(q.monthly_usd)
        ),
        monthly_usd: f64::from(nodes) * q.monthly_usd,
        origin: Origin::catalogue(&format!("disk {}", disk.name), &disk.source),
    };
    Ok((line, q))
}

/// The managed Kubernetes service `k`'s cluster fee; it must be of the instance's provider.
fn kubernetes_fee(cat: &Catalog, inst: &Instance, k: &str) -> Result<CostLine, CostError> {
    let fee = cat.kubernetes(k)?;
    if fee.provider != inst.provider {
        return Err(CostError::Plan(format!(
            "kubernetes service {k} is {}, instance {} is {}",
            fee.provider, inst.name, inst.provider
        )));
    }
    Ok(CostLine {
        item: format!("{k} fee"),
        how: format!(
            "${}/h × {} h per cluster",
            rate(fee.usd_per_hour),
            cat.hours_per_month
        ),
        monthly_usd: fee.usd_per_hour * cat.hours_per_month,
        origin: Origin::catalogue(&format!("kubernetes {k}"), &fee.source),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prices::default_catalog;

    fn spec(
        nodes: u32,
        instance: &str,
        disk: Option<&str>,
        k8s: Option<&str>,
        pricing: Pricing,
    ) -> CloudCluster {
        CloudCluster {
            nodes,
            instance: instance.into(),
            disk: disk.map(|d| d.parse().unwrap()),
            k8s: k8s.map(String::from),
            pricing,
        }
    }

    fn monthly(
        nodes: u32,
        instance: &str,
        disk: Option<&str>,
        k8s: Option<&str>,
        pricing: Pricing,
    ) -> f64 {
        price_cluster(
            &default_catalog().unwrap(),
            &spec(nodes, instance, disk, k8s, pricing),
        )
        .unwrap()
        .total_monthly_usd
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 0.01
    }

    #[test]
    fn ref_000_nodes_per_month() {
        use Pricing::OnDemand as OD;
        // r5.2xlarge $0.504 × 730 = $367.92 + gp2 4,096 GB × $0.10 = $409.60 → $777.52 (ref: $777)
        assert!(close(
            monthly(1, "r5.2xlarge", Some("gp2:4TB"), None, OD),
            777.52
        ));
        // e2-highmem-8 $0.36176 × 730 = $264.08 + pd-balanced $409.60 → $673.68 (ref: $673)
        assert!(close(
            monthly(1, "e2-highmem-8", Some("pd-balanced:4TB"), None, OD),
            673.68
        ));
        // n2-highmem-8 $0.524056 × 730 × 0.8 = $306.05 + $409.60 → $715.65 (ref: $715)
        assert!(close(
            monthly(1, "n2-highmem-8", Some("pd-balanced:4TB"), None, OD),
            715.65
        ));
        // E8s_v4 $0.504 × 730 = $367.92 + E50 $307.20 → $675.12 (ref: $675); + P50 $450.56 → $818.48
        assert!(close(
            monthly(1, "Standard_E8s_v4", Some("standard-ssd:4TB"), None, OD),
            675.12
        ));
        assert!(close(
            monthly(1, "Standard_E8s_v4", Some("premium-ssd:4TB"), None, OD),
            818.48
        ));
        // + Ultra $1,056.71 → $1,424.63 (ref: $1,458)
        let ultra = monthly(
            1,
            "Standard_E8s_v4",
            Some("ultra-disk:4TB:10000iops:200mbps"),
            None,
            OD,
        );
        assert!(close(ultra, 1424.63), "{ultra}");
    }

    #[test]
    fn breakdown_adds_up_with_the_kubernetes_fee() {
        let cat = default_catalog().unwrap();
        let b = price_cluster(
            &cat,
            &spec(
                3,
                "r5.2xlarge",
                Some("gp2:3400GB"),
                Some("eks"),
                Pricing::OnDemand,
            ),
        )
        .unwrap();
        // 3 × $367.92 = $1,103.76; 3 × $340 = $1,020; EKS $0.10 × 730 = $73
        assert!(close(b.instances_monthly_usd, 1103.76));
        assert!(close(b.disks_monthly_usd, 1020.0));
        assert!(close(b.k8s_fee_monthly_usd, 73.0));
        assert!(close(b.total_monthly_usd, 2196.76));
        assert_eq!(b.disk.as_ref().unwrap().iops, 10200.0);
        // $2,196.76 / 22.864 thousand ops/s (ref 000's EC2 throughput) = $96.08 per 1,000 ops/s
        assert!(close(b.cost_per_1k_ops_usd(22864.0).unwrap(), 96.08));
        assert_eq!(cost_per_1k_ops_usd(100.0, 0.0), None);
    }

    #[test]
    fn ref_004_three_year_heavy_use_totals() {
        use Pricing::Reserved3y as R3;
        // hi1.4xlarge: $10,960 upfront + $0.482 × 26,280 h = $23,626.96 per node over 3 years
        let hi1 = monthly(15, "hi1.4xlarge", Some("local"), None, R3) * 36.0;
        // 15 × $23,626.96 = $354,404.40 (ref 004: $354,405)
        assert!(close(hi1, 354_404.40), "{hi1}");
        // 36 × ($1,550 + $0.07 × 26,280) + 48 × ($6,200 + $0.28 × 26,280)
        //   = 36 × $3,389.60 + 48 × $13,558.40 = $772,828.80 (ref 004: $772,806)
        let m2 = (monthly(36, "m2.xlarge", Some("local"), None, R3)
            + monthly(48, "m2.4xlarge", Some("local"), None, R3))
            * 36.0;
        assert!(close(m2, 772_828.80), "{m2}");
        // on demand: 15 × $3.10 = $46.50/h
        assert!(close(
            monthly(15, "hi1.4xlarge", None, None, Pricing::OnDemand) / 730.0,
            46.5
        ));
    }

    #[test]
    fn reserved_discounts_and_missing_prices() {
        // r5.2xlarge 1y: $0.504 × 730 × (1 − 0.37) = $231.79
        assert!(close(
            monthly(1, "r5.2xlarge", None, None, Pricing::Reserved1y),
            231.79
        ));
        let cat = default_catalog().unwrap();
        // the 2012 instances have only the 3y prices of ref 004, and no provider discount applies
        let mut c = cat.clone();
        c.reserved_discounts.clear();
        let e =
            price_cluster(&c, &spec(1, "m2.xlarge", None, None, Pricing::Reserved1y)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "instance \"m2.xlarge\": no 1y reserved price in the catalogue"
        );
    }

    #[test]
    fn mismatches_are_errors() {
        let cat = default_catalog().unwrap();
        let e = |s: CloudCluster| price_cluster(&cat, &s).unwrap_err().to_string();
        assert!(
            e(spec(
                3,
                "r5.2xlarge",
                Some("pd-ssd:1TB"),
                None,
                Pricing::OnDemand
            ))
            .contains("gcp disk")
        );
        assert!(
            e(spec(
                3,
                "r5.2xlarge",
                Some("local"),
                None,
                Pricing::OnDemand
            ))
            .contains("no local")
        );
        assert!(e(spec(3, "r5.2xlarge", None, Some("gke"), Pricing::OnDemand)).contains("gcp"));
        assert!(
            e(spec(3, "r5.9xlarge", None, None, Pricing::OnDemand))
                .starts_with("no instance \"r5.9xlarge\"")
        );
    }
}
