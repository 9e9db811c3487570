//! Worked examples of the disk formulas against the built-in catalogue; the arithmetic is
//! written next to each assertion.

use super::{DiskNeed, DiskQuote, DiskRequest};
use crate::prices::{PriceError, default_catalog};

fn quote(
    disk: &str,
    size_gb: f64,
    iops: Option<f64>,
    mbps: Option<f64>,
) -> Result<DiskQuote, PriceError> {
    let cat = default_catalog().unwrap();
    let d = cat.disk(disk).unwrap();
    d.formula.quote(
        disk,
        &DiskRequest {
            size_gb,
            iops,
            mbps,
        },
        cat.hours_per_month,
    )
}

fn item(q: &DiskQuote, what: &str) -> f64 {
    q.items
        .iter()
        .find(|i| i.what == what)
        .map(|i| i.monthly_usd)
        .unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 0.005
}

#[test]
fn gp3_5tb_16000_iops_1000_mbps() {
    let q = quote("gp3", 5120.0, Some(16000.0), Some(1000.0)).unwrap();
    // storage 5,120 GB × $0.08 = $409.60
    assert!(close(item(&q, "storage"), 409.60));
    // IOPS (16,000 − 3,000 included) × $0.005 = $65.00
    assert!(close(item(&q, "IOPS above the included"), 65.00));
    // throughput (1,000 − 125 included) MB/s × $0.04 = $35.00
    assert!(close(item(&q, "throughput above the included"), 35.00));
    // total $509.60 (ref 003's table shows $474.60: it leaves out the $35 of throughput)
    assert!(close(q.monthly_usd, 509.60), "{}", q.monthly_usd);
    assert_eq!((q.iops, q.mbps), (16000.0, 1000.0));
}

#[test]
fn gp3_defaults_to_the_included_performance() {
    let q = quote("gp3", 1000.0, None, None).unwrap();
    // 1,000 GB × $0.08 = $80.00, nothing provisioned above 3,000 IOPS and 125 MB/s
    assert!(close(q.monthly_usd, 80.0));
    assert_eq!((q.iops, q.mbps), (3000.0, 125.0));
}

#[test]
fn gp3_limits_are_errors() {
    // 20,000 IOPS > 16,000 per volume
    assert!(quote("gp3", 5000.0, Some(20000.0), None).is_err());
    // 16,000 IOPS on 10 GB > 500 IOPS/GB × 10 GB = 5,000
    assert!(quote("gp3", 10.0, Some(16000.0), None).is_err());
    // 1,000 MB/s with 3,000 IOPS > 0.25 MB/s × 3,000 = 750 MB/s
    let err = quote("gp3", 5000.0, None, Some(1000.0))
        .unwrap_err()
        .to_string();
    assert!(err.contains("750"), "{err}");
}

#[test]
fn gp2_3400_gb() {
    let q = quote("gp2", 3400.0, None, None).unwrap();
    // 3,400 GB × $0.10 = $340.00
    assert!(close(q.monthly_usd, 340.0));
    // 3 IOPS/GB × 3,400 GB = 10,200 IOPS, within 100..16,000
    assert_eq!(q.iops, 10200.0);
    // above 170 GB: 250 MB/s
    assert_eq!(q.mbps, 250.0);
    // at or above 1,000 GB the baseline is above the burst: no burst note
    assert!(q.notes.is_empty());
}

#[test]
fn gp2_floor_ceiling_and_burst() {
    // 20 GB × 3 = 60 → the 100 IOPS floor; 128 MB/s at 170 GB or less; bursts to 3,000
    let small = quote("gp2", 20.0, None, None).unwrap();
    assert_eq!((small.iops, small.mbps), (100.0, 128.0));
    assert!(small.notes[0].contains("3,000"));
    // 6,000 GB × 3 = 18,000 → the 16,000 ceiling
    assert_eq!(quote("gp2", 6000.0, None, None).unwrap().iops, 16000.0);
    // gp2 cannot be given IOPS
    assert!(quote("gp2", 1000.0, Some(5000.0), None).is_err());
}

#[test]
fn io2_tiers() {
    let q = quote("io2", 1000.0, Some(80000.0), None).unwrap();
    // storage 1,000 GB × $0.125 = $125.00
    assert!(close(item(&q, "storage"), 125.0));
    // 32,000 × $0.065 = $2,080 + 32,000 × $0.046 = $1,472 + 16,000 × $0.032 = $512 → $4,064
    assert!(close(item(&q, "provisioned IOPS"), 4064.0));
    assert!(close(q.monthly_usd, 4189.0));
    // within the first tier only: 20,000 × $0.065 = $1,300
    let q = quote("io2", 1000.0, Some(20000.0), None).unwrap();
    assert!(close(item(&q, "provisioned IOPS"), 1300.0));
}

#[test]
fn io1_and_pd_extreme_match_ref_003_cost_table() {
    // io1 5 TB + 16,000 IOPS: 5,120 × $0.125 = $640 + 16,000 × $0.065 = $1,040 → $1,680
    assert!(close(
        quote("io1", 5120.0, Some(16000.0), None)
            .unwrap()
            .monthly_usd,
        1680.0
    ));
    // io1 32,000 IOPS: $640 + 32,000 × $0.065 = $2,080 → $2,720
    assert!(close(
        quote("io1", 5120.0, Some(32000.0), None)
            .unwrap()
            .monthly_usd,
        2720.0
    ));
    // pd-extreme: 5,120 × $0.125 = $640 + 16,000 × $0.065 = $1,040 → $1,680
    assert!(close(
        quote("pd-extreme", 5120.0, Some(16000.0), None)
            .unwrap()
            .monthly_usd,
        1680.0
    ));
    // io1 needs its IOPS; 50 IOPS/GB × 100 GB = 5,000 < 16,000
    assert!(quote("io1", 100.0, None, None).is_err());
    assert!(quote("io1", 100.0, Some(16000.0), None).is_err());
}

#[test]
fn pd_balanced_4tb() {
    let q = quote("pd-balanced", 4096.0, None, None).unwrap();
    // 4,096 GB × $0.10 = $409.60
    assert!(close(q.monthly_usd, 409.60));
    // 3,000 + 6 IOPS/GB × 4,096 GB = 27,576 IOPS, below the 80,000 per-instance cap
    assert_eq!(q.iops, 27576.0);
    // 140 + 0.28 MB/s per GB × 4,096 GB = 1,286.88 MB/s → the 1,200 MB/s per-instance cap
    assert_eq!(q.mbps, 1200.0);
}

#[test]
fn pd_standard_read_and_write_differ() {
    let q = quote("pd-standard", 2000.0, None, None).unwrap();
    // read 0.75 × 2,000 = 1,500; write 1.5 × 2,000 = 3,000; the lower is reported
    assert_eq!(q.iops, 1500.0);
    // 0.12 × 2,000 = 240 MB/s; $0.04 × 2,000 = $80
    assert!(close(q.mbps, 240.0) && close(q.monthly_usd, 80.0));
}

#[test]
fn azure_ultra_4tb_10k_iops_200_mbps() {
    let q = quote("ultra-disk", 4096.0, Some(10000.0), Some(200.0)).unwrap();
    // capacity 4,096 GB × $0.000164 × 730 h = $490.37
    assert!(
        close(item(&q, "capacity"), 490.37),
        "{}",
        item(&q, "capacity")
    );
    // IOPS 10,000 × $0.000068 × 730 h = $496.40
    assert!(close(item(&q, "provisioned IOPS"), 496.40));
    // throughput 200 MB/s × $0.000479 × 730 h = $69.93
    assert!(close(item(&q, "provisioned throughput"), 69.934));
    // total $490.373 + $496.400 + $69.934 = $1,056.71
    assert!(close(q.monthly_usd, 1056.71), "{}", q.monthly_usd);
    // 300 IOPS/GB × 100 GB → 128 GB billed (next power of two) → at most 38,400 IOPS
    assert!(quote("ultra-disk", 100.0, Some(40000.0), Some(200.0)).is_err());
    assert_eq!(super::AzureUltra::billed_gb(100.0), 128.0);
    assert_eq!(super::AzureUltra::billed_gb(3000.0), 3072.0);
}

#[test]
fn azure_tiers_round_up() {
    // 4,000 GB → P50 (4,096 GB): $450.56, 7,500 IOPS, 250 MB/s
    let q = quote("premium-ssd", 4000.0, None, None).unwrap();
    assert!(close(q.monthly_usd, 450.56));
    assert_eq!((q.size_gb, q.iops, q.mbps), (4096.0, 7500.0, 250.0));
    // 4 TB standard SSD = E50 at $307.20 (ref 000's Standard SSD node: $675 − $367.92 instance)
    assert!(close(
        quote("standard-ssd", 4096.0, None, None)
            .unwrap()
            .monthly_usd,
        307.20
    ));
    assert!(quote("premium-ssd", 40000.0, None, None).is_err());
}

#[test]
fn st1_throughput_per_tb() {
    let q = quote("st1", 2048.0, None, None).unwrap();
    // 40 MB/s per TB × 2 TB = 80 MB/s; 2,048 × $0.045 = $92.16
    assert_eq!(q.mbps, 80.0);
    assert!(close(q.monthly_usd, 92.16));
    assert!(quote("st1", 100.0, None, None).is_err(), "below 125 GB");
}

fn fit(disk: &str, gb: f64, iops: f64, mbps: f64) -> Result<DiskQuote, PriceError> {
    let cat = default_catalog().unwrap();
    let d = cat.disk(disk).unwrap();
    d.formula
        .fit(disk, &DiskNeed { gb, iops, mbps }, cat.hours_per_month)
}

#[test]
fn fitting_grows_or_provisions() {
    // gp2 for 10,000 IOPS: 10,000 / 3 = 3,333.3 → 3,334 GB, even for 1,000 GB of data
    let q = fit("gp2", 1000.0, 10000.0, 125.0).unwrap();
    assert_eq!((q.size_gb, q.iops), (3334.0, 10002.0));
    // gp3 for 5,000 IOPS and 200 MB/s: provisions both on 1,000 GB
    let q = fit("gp3", 1000.0, 5000.0, 200.0).unwrap();
    assert_eq!((q.size_gb, q.iops, q.mbps), (1000.0, 5000.0, 200.0));
    // pd-balanced for 15,000 IOPS: (15,000 − 3,000) / 6 = 2,000 GB
    assert_eq!(
        fit("pd-balanced", 500.0, 15000.0, 0.0).unwrap().size_gb,
        2000.0
    );
    // premium-ssd for 10,000 IOPS: P60 (16,000 IOPS) even for 1,000 GB
    assert_eq!(
        fit("premium-ssd", 1000.0, 10000.0, 100.0).unwrap().size_gb,
        8192.0
    );
    // gp2 cannot reach 20,000 IOPS at any size
    assert!(fit("gp2", 1000.0, 20000.0, 0.0).is_err());
}
