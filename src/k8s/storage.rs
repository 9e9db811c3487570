//! StorageClasses for Cassandra's data volumes: one per disk type (and provisioned IOPS / MB/s)
//! a cluster uses, with the cloud's CSI provisioner, xfs, `Retain` and
//! `WaitForFirstConsumer` (reference 003's advice). Disk types and their limits come from the
//! price catalogue (`catalog/prices.yaml`), so a volume the catalogue cannot price is refused.

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::storage::v1::StorageClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::error::Invalid;
use crate::prices::catalog::Catalog;
use crate::prices::disk::quote_volume;
use crate::spec::storage::{StorageArg, Volume};

/// The cloud whose managed Kubernetes the cluster runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Cloud {
    /// EKS: EBS volumes (`ebs.csi.aws.com`).
    Aws,
    /// GKE: persistent disks (`pd.csi.storage.gke.io`).
    Gcp,
    /// AKS: managed disks (`disk.csi.azure.com`).
    Azure,
}

impl Cloud {
    /// The catalogue's provider name.
    pub fn provider(self) -> &'static str {
        match self {
            Cloud::Aws => "aws",
            Cloud::Gcp => "gcp",
            Cloud::Azure => "azure",
        }
    }

    /// The CSI driver that provisions the cloud's block volumes.
    pub fn provisioner(self) -> &'static str {
        match self {
            Cloud::Aws => "ebs.csi.aws.com",
            Cloud::Gcp => "pd.csi.storage.gke.io",
            Cloud::Azure => "disk.csi.azure.com",
        }
    }
}

impl fmt::Display for Cloud {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.provider())
    }
}

/// Checks `arg`'s volume on `cloud` against the catalogue: a disk type of that cloud, IOPS and
/// MB/s given where (and only where) the type provisions them, and within its limits.
pub fn check(cloud: Cloud, catalog: &Catalog, arg: &StorageArg) -> Result<(), Invalid> {
    let v = &arg.volume;
    let s = &arg.text;
    let known: Vec<&str> = catalog
        .disks
        .iter()
        .filter(|d| d.provider == cloud.provider() && csi_type(cloud, &d.name).is_some())
        .map(|d| d.name.as_str())
        .collect();
    let disk = catalog
        .disks
        .iter()
        .find(|d| d.name == v.disk && d.provider == cloud.provider())
        .filter(|d| csi_type(cloud, &d.name).is_some())
        .ok_or_else(|| {
            crate::invalid!(
                "--storage '{s}': '{}' is not a disk type of {cloud}: give one of {}",
                v.disk,
                known.join(", ")
            )
        })?;
    quote_volume(disk, arg, catalog.hours_per_month)?;
    Ok(())
}

/// The CSI driver's name for a catalogue disk type (`type` on AWS and GCP, `skuName` on
/// Azure); `None` for a type the driver does not provision.
fn csi_type(cloud: Cloud, disk: &str) -> Option<&'static str> {
    Some(match (cloud, disk) {
        (Cloud::Aws, "gp2") => "gp2",
        (Cloud::Aws, "gp3") => "gp3",
        (Cloud::Aws, "io1") => "io1",
        (Cloud::Aws, "io2") => "io2",
        (Cloud::Aws, "st1") => "st1",
        (Cloud::Aws, "sc1") => "sc1",
        (Cloud::Gcp, "pd-standard") => "pd-standard",
        (Cloud::Gcp, "pd-balanced") => "pd-balanced",
        (Cloud::Gcp, "pd-ssd") => "pd-ssd",
        (Cloud::Gcp, "pd-extreme") => "pd-extreme",
        (Cloud::Azure, "standard-hdd") => "Standard_LRS",
        (Cloud::Azure, "standard-ssd") => "StandardSSD_LRS",
        (Cloud::Azure, "premium-ssd") => "Premium_LRS",
        (Cloud::Azure, "ultra-disk") => "UltraSSD_LRS",
        _ => return None,
    })
}

/// The StorageClass of `volume` (already [`check`]ed) named `name`.
pub fn storage_class(
    cloud: Cloud,
    name: &str,
    labels: BTreeMap<String, String>,
    volume: &Volume,
) -> StorageClass {
    let kind = csi_type(cloud, &volume.disk).expect("a checked volume has a CSI type");
    let mut p = BTreeMap::from([("csi.storage.k8s.io/fstype".to_string(), "xfs".to_string())]);
    let mut set = |k: &str, v: String| {
        p.insert(k.to_string(), v);
    };
    match cloud {
        Cloud::Aws => {
            set("type", kind.to_string());
            set("encrypted", "true".to_string());
            if let Some(iops) = volume.iops {
                set("iops", iops.to_string());
            }
            if let Some(mbps) = volume.mbps {
                set("throughput", mbps.to_string());
            }
        }
        Cloud::Gcp => {
            set("type", kind.to_string());
            set("replication-type", "none".to_string());
            if let Some(iops) = volume.iops {
                set("provisioned-iops-on-create", iops.to_string());
            }
        }
        Cloud::Azure => {
            set("skuName", kind.to_string());
            if volume.disk == "ultra-disk" {
                // Ultra disks take no host caching.
                set("cachingMode", "None".to_string());
            }
            if let Some(iops) = volume.iops {
                set("DiskIOPSReadWrite", iops.to_string());
            }
            if let Some(mbps) = volume.mbps {
                set("DiskMBpsReadWrite", mbps.to_string());
            }
        }
    }
    StorageClass {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(labels),
            ..Default::default()
        },
        provisioner: cloud.provisioner().to_string(),
        parameters: Some(p),
        reclaim_policy: Some("Retain".to_string()),
        volume_binding_mode: Some("WaitForFirstConsumer".to_string()),
        allow_volume_expansion: Some(true),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        crate::prices::load::default_catalog().unwrap()
    }

    #[test]
    fn storage_arguments_parse() {
        let a: StorageArg = "dc3=io2:2Ti:16000".parse().unwrap();
        assert_eq!(a.dc.as_deref(), Some("dc3"));
        assert_eq!(
            a.volume,
            Volume {
                disk: "io2".into(),
                size_gib: 2048,
                iops: Some(16000),
                mbps: None
            }
        );
        assert_eq!(a.volume.quantity(), "2Ti");
        assert_eq!(a.volume.class_suffix(), "io2-16000iops");
        let a: StorageArg = "gp3:500Gi:6000:250".parse().unwrap();
        assert_eq!(a.dc, None);
        assert_eq!(a.volume.quantity(), "500Gi");
        assert_eq!(a.volume.class_suffix(), "gp3-6000iops-250mbps");
        for (bad, needle) in [
            ("gp3", "expected a disk type and a size"),
            ("=gp3:1Gi", "no data centre"),
            (":1Gi", "expected a disk type"),
            ("gp3:1:2:3:4", "expected a disk type"),
            (
                "gp3:500GB",
                "size '500GB' is not a whole number of Gi or Ti",
            ),
            ("gp3:500", "size '500'"),
            ("gp3:0Gi", "size '0Gi'"),
            ("gp3:1.5Ti", "size '1.5Ti'"),
            ("gp3:-1Gi", "size '-1Gi'"),
            ("io2:1Ti:lots", "IOPS 'lots' is not a whole number"),
            ("gp3:1Ti:3000:0", "MB/s '0'"),
        ] {
            let e = bad.parse::<StorageArg>().unwrap_err();
            assert!(e.starts_with(&format!("--storage '{bad}'")), "{e}");
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }

    fn checked(cloud: Cloud, s: &str) -> Result<(), Invalid> {
        check(cloud, &catalog(), &s.parse().unwrap())
    }

    #[test]
    fn disk_types_are_the_clouds_own_and_within_their_limits() {
        for (cloud, ok) in [
            (Cloud::Aws, "gp2:3400Gi"),
            (Cloud::Aws, "gp3:500Gi"),
            (Cloud::Aws, "gp3:500Gi:6000:250"),
            (Cloud::Aws, "io1:2Ti:16000"),
            (Cloud::Aws, "io2:2Ti:16000"),
            (Cloud::Gcp, "pd-balanced:4Ti"),
            (Cloud::Gcp, "pd-ssd:2Ti"),
            (Cloud::Gcp, "pd-extreme:2Ti:16000"),
            (Cloud::Azure, "premium-ssd:4Ti"),
            (Cloud::Azure, "standard-ssd:2Ti"),
            (Cloud::Azure, "ultra-disk:4Ti:10000:200"),
        ] {
            assert!(
                checked(cloud, ok).is_ok(),
                "{cloud} {ok}: {:?}",
                checked(cloud, ok)
            );
        }
        for (cloud, bad, needle) in [
            (
                Cloud::Aws,
                "pd-ssd:1Ti",
                "'pd-ssd' is not a disk type of aws: give one of gp2, gp3",
            ),
            (Cloud::Gcp, "gp3:1Ti", "not a disk type of gcp"),
            (Cloud::Azure, "Premium_LRS:1Ti", "not a disk type of azure"),
            (
                Cloud::Aws,
                "io2:1Ti",
                "io2 provisions its IOPS: give io2:SIZE:IOPS",
            ),
            (
                Cloud::Gcp,
                "pd-extreme:1Ti",
                "pd-extreme provisions its IOPS",
            ),
            (Cloud::Aws, "gp2:1Ti:3000", "gp2 IOPS follow from its size"),
            (
                Cloud::Azure,
                "premium-ssd:1Ti:5000",
                "cannot be provisioned",
            ),
            (
                Cloud::Aws,
                "io2:1Ti:16000:500",
                "io2 MB/s cannot be provisioned",
            ),
            (Cloud::Aws, "gp3:10Gi:16000", "disk gp3:"),
            (Cloud::Aws, "gp3:100Ti", "disk gp3:"),
        ] {
            let e = checked(cloud, bad).unwrap_err();
            assert!(e.starts_with(&format!("--storage '{bad}': ")), "{e}");
            assert!(e.contains(needle), "{bad}: {e}");
        }
    }

    #[test]
    fn storage_classes_carry_the_csi_parameters_of_each_cloud() {
        let v = |s: &str| s.parse::<StorageArg>().unwrap().volume;
        let aws = storage_class(Cloud::Aws, "c-gp3", BTreeMap::new(), &v("gp3:1Ti:6000:250"));
        assert_eq!(aws.provisioner, "ebs.csi.aws.com");
        let p = aws.parameters.as_ref().unwrap();
        assert_eq!(p["type"], "gp3");
        assert_eq!(p["iops"], "6000");
        assert_eq!(p["throughput"], "250");
        assert_eq!(p["csi.storage.k8s.io/fstype"], "xfs");
        assert_eq!(aws.reclaim_policy.as_deref(), Some("Retain"));
        assert_eq!(
            aws.volume_binding_mode.as_deref(),
            Some("WaitForFirstConsumer")
        );
        assert_eq!(aws.allow_volume_expansion, Some(true));

        let gcp = storage_class(Cloud::Gcp, "c", BTreeMap::new(), &v("pd-extreme:1Ti:20000"));
        assert_eq!(gcp.provisioner, "pd.csi.storage.gke.io");
        let p = gcp.parameters.unwrap();
        assert_eq!(p["type"], "pd-extreme");
        assert_eq!(p["provisioned-iops-on-create"], "20000");

        let az = storage_class(Cloud::Azure, "c", BTreeMap::new(), &v("premium-ssd:1Ti"));
        assert_eq!(az.provisioner, "disk.csi.azure.com");
        let p = az.parameters.unwrap();
        assert_eq!(p["skuName"], "Premium_LRS");
        assert!(!p.contains_key("cachingMode"));
        let ultra = storage_class(
            Cloud::Azure,
            "c",
            BTreeMap::new(),
            &v("ultra-disk:1Ti:9000:300"),
        );
        let p = ultra.parameters.unwrap();
        assert_eq!(p["skuName"], "UltraSSD_LRS");
        assert_eq!(p["cachingMode"], "None");
        assert_eq!(p["DiskIOPSReadWrite"], "9000");
        assert_eq!(p["DiskMBpsReadWrite"], "300");
    }
}
