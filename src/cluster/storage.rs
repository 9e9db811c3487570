//! Emulated disks for local clusters (`cluster create --storage [DC=]DISK:SIZE[:IOPS[:MBPS]]`).
//!
//! Every node of a data centre with a storage class gets a disk of its own: a sparse image file
//! in the node's directory, attached as a loop device that reads and writes the file with
//! direct I/O (`losetup --direct-io=on`), with a fresh ext4 file system mounted on the node's
//! data directory (data, commitlog, hints and saved caches all live there).
//!
//! The class's limits — the catalogue's sustained IOPS and MB/s for that disk type, size and
//! provisioning — are cgroup v1 blkio throttle rules on the loop device **in the root blkio
//! cgroup**, for reads and writes alike. A rule there bounds every I/O on the device, whoever
//! issues it: the node's reads (`pread` and mmap page faults), its direct writes and its own
//! `fsync`s, and also the kernel flusher's writeback of its buffered writes, which cgroup v1
//! charges to the root cgroup (a rule in the node's own cgroup would not see that writeback
//! at all). The device is the unit a cloud limits, so this is the cloud disk's model: anything
//! else on the device — `cqlbench probe --dir` on the node's data directory, for one — shares
//! the limit. A rule caps each direction separately (3,000 read IOPS and 3,000 write IOPS),
//! where some clouds cap their sum.
//!
//! What this does not emulate: added latency (this kernel has no device-mapper, so no
//! `dm-delay`), burst credits, and the network between the node and a remote disk. `local` is
//! a disk with no limits: instance storage, NVMe.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::Invalid;
use crate::prices::catalog::Catalog;
use crate::spec::storage::StorageArg;
use crate::spec::storage::{DiskClass, LOCAL};

/// The image file is at most this large (sparse; the priced size can be terabytes).
pub const IMAGE_MAX_GIB: u64 = 16;
/// Where cgroup v1's blkio controller is mounted.
const BLKIO: &str = "/sys/fs/cgroup/blkio";

/// Resolves `--storage` against the catalogue: its limits and price.
pub fn resolve(arg: &StorageArg, catalog: &Catalog) -> Result<DiskClass, Invalid> {
    let v = &arg.volume;
    let image_gib = v.size_gib.min(IMAGE_MAX_GIB);
    if v.disk == LOCAL {
        if v.iops.is_some() || v.mbps.is_some() {
            return Err(crate::invalid!(
                "--storage '{}': a local disk has no limits to provision: give local:SIZE",
                arg.text
            ));
        }
        return Ok(DiskClass {
            disk: LOCAL.into(),
            size_gib: v.size_gib,
            provisioned_iops: None,
            provisioned_mbps: None,
            iops: None,
            mbps: None,
            monthly_usd: None,
            image_gib,
        });
    }
    let disk = catalog.disk(&v.disk).map_err(|_| {
        let known: Vec<&str> = catalog.disks.iter().map(|d| d.name.as_str()).collect();
        crate::invalid!(
            "--storage '{}': '{}' is not a disk type of the catalogue: give local or one of {}",
            arg.text,
            v.disk,
            known.join(", ")
        )
    })?;
    let q = crate::prices::disk::quote_volume(disk, arg, catalog.hours_per_month)?;
    Ok(DiskClass {
        disk: v.disk.clone(),
        size_gib: v.size_gib,
        provisioned_iops: v.iops,
        provisioned_mbps: v.mbps,
        iops: Some(q.iops.round().max(1.0) as u64),
        mbps: Some(q.mbps.round().max(1.0) as u64),
        monthly_usd: Some(q.monthly_usd),
        image_gib,
    })
}

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error(
        "emulated disks need root and cgroup v1's blkio controller ({BLKIO}): {0}; create the cluster without --storage"
    )]
    Unsupported(String),
    #[error("{command}: {detail}")]
    Command { command: String, detail: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Whether this machine can emulate disks (root, blkio, losetup, mkfs.ext4).
pub fn check_supported() -> Result<(), StorageError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(StorageError::Unsupported("not running as root".into()));
    }
    if !Path::new(BLKIO)
        .join("blkio.throttle.read_iops_device")
        .exists()
    {
        return Err(StorageError::Unsupported(format!(
            "{BLKIO}/blkio.throttle.read_iops_device does not exist"
        )));
    }
    for tool in ["losetup", "mkfs.ext4", "mount", "umount", "mountpoint"] {
        if Command::new(tool).arg("--version").output().is_err() {
            return Err(StorageError::Unsupported(format!("{tool} not found")));
        }
    }
    Ok(())
}

fn run(cmd: &mut Command) -> Result<String, StorageError> {
    let text = format!("{cmd:?}").replace('"', "");
    let out = cmd.output().map_err(|e| StorageError::Command {
        command: text.clone(),
        detail: e.to_string(),
    })?;
    if !out.status.success() {
        return Err(StorageError::Command {
            command: text,
            detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A node's disk: its image file and where it is mounted.
#[derive(Debug, Clone)]
pub struct NodeDisk {
    pub image: PathBuf,
    pub mount: PathBuf,
}

impl NodeDisk {
    pub fn new(node_dir: &Path, data_dir: &Path) -> NodeDisk {
        NodeDisk {
            image: node_dir.join("disk.img"),
            mount: data_dir.to_path_buf(),
        }
    }

    /// The loop device attached to the image, if any.
    pub fn device(&self) -> Option<String> {
        let out = run(Command::new("losetup").arg("-j").arg(&self.image)).ok()?;
        out.lines()
            .next()
            .and_then(|l| l.split(':').next())
            .map(str::to_string)
            .filter(|d| d.starts_with("/dev/loop"))
    }

    /// Whether a file system is mounted on the data directory (`mountpoint`, which resolves
    /// relative paths and symbolic links itself).
    pub fn mounted(&self) -> bool {
        Command::new("mountpoint")
            .arg("-q")
            .arg(&self.mount)
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Attaches, formats (the first time) and mounts the disk, and applies the class's limits.
    /// Idempotent: a disk already mounted only gets its limits (again). On failure what this
    /// call attached is detached again, and an image it created is removed.
    pub fn attach(&self, class: &DiskClass) -> Result<String, StorageError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| StorageError::Io { path, source }
        };
        let fresh = !self.image.exists();
        if fresh {
            let f = std::fs::File::create(&self.image).map_err(io(&self.image))?;
            if let Err(e) = f.set_len(class.image_gib << 30) {
                let _ = std::fs::remove_file(&self.image);
                return Err(io(&self.image)(e));
            }
        }
        let (dev, attached_here) = match self.device() {
            Some(d) => (d, false),
            None => match run(Command::new("losetup")
                .args(["--find", "--show", "--direct-io=on"])
                .arg(&self.image))
            {
                Ok(d) => (d, true),
                Err(e) => {
                    if fresh {
                        let _ = std::fs::remove_file(&self.image);
                    }
                    return Err(e);
                }
            },
        };
        let rest = || -> Result<(), StorageError> {
            if fresh {
                run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&dev))?;
            }
            if !self.mounted() {
                std::fs::create_dir_all(&self.mount).map_err(io(&self.mount))?;
                run(Command::new("mount")
                    .args(["-o", "noatime"])
                    .arg(&dev)
                    .arg(&self.mount))?;
            }
            set_limits(&dev, class.iops, class.mbps)
        };
        if let Err(e) = rest() {
            if attached_here {
                let _ = set_limits(&dev, None, None);
                let _ = run(Command::new("losetup").arg("-d").arg(&dev));
            }
            if fresh {
                let _ = std::fs::remove_file(&self.image);
            }
            return Err(e);
        }
        Ok(dev)
    }

    /// Unmounts and detaches the disk and lifts its limits (the image file stays).
    pub fn detach(&self) -> Result<(), StorageError> {
        let dev = self.device();
        if self.mounted() {
            run(Command::new("umount").arg(&self.mount))?;
        }
        if let Some(dev) = dev {
            set_limits(&dev, None, None)?;
            run(Command::new("losetup").arg("-d").arg(&dev))?;
        }
        Ok(())
    }
}

/// `major:minor` of a block device.
pub fn dev_numbers(dev: &str) -> Result<String, StorageError> {
    let name = dev.trim_start_matches("/dev/");
    let path = PathBuf::from(format!("/sys/class/block/{name}/dev"));
    std::fs::read_to_string(&path)
        .map(|s| s.trim().to_string())
        .map_err(|source| StorageError::Io { path, source })
}

/// Sets (or with None lifts) the read and write IOPS and bandwidth limits of `dev` in the
/// root blkio cgroup.
pub fn set_limits(dev: &str, iops: Option<u64>, mbps: Option<u64>) -> Result<(), StorageError> {
    let nums = dev_numbers(dev)?;
    let bps = mbps.map(|m| m * 1_000_000);
    for (file, value) in [
        ("blkio.throttle.read_iops_device", iops),
        ("blkio.throttle.write_iops_device", iops),
        ("blkio.throttle.read_bps_device", bps),
        ("blkio.throttle.write_bps_device", bps),
    ] {
        let path = Path::new(BLKIO).join(file);
        // 0 removes a rule.
        std::fs::write(&path, format!("{nums} {}", value.unwrap_or(0)))
            .map_err(|source| StorageError::Io { path, source })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        crate::prices::load::default_catalog().unwrap()
    }

    #[test]
    fn classes_take_their_limits_and_price_from_the_catalogue() {
        let c = catalog();
        let gp3 = resolve(&"dc1=gp3:500Gi".parse().unwrap(), &c).unwrap();
        assert_eq!((gp3.iops, gp3.mbps), (Some(3000), Some(125)));
        assert!(gp3.monthly_usd.unwrap() > 0.0);
        assert_eq!(gp3.image_gib, IMAGE_MAX_GIB);
        let fast = resolve(&"gp3:500Gi:6000:250".parse().unwrap(), &c).unwrap();
        assert_eq!((fast.iops, fast.mbps), (Some(6000), Some(250)));
        let local = resolve(&"local:8Gi".parse().unwrap(), &c).unwrap();
        assert_eq!((local.iops, local.mbps, local.image_gib), (None, None, 8));
        assert!(local.describe().contains("no limits"));
        for (bad, says) in [
            ("floppy:1Gi", "not a disk type of the catalogue"),
            ("local:8Gi:3000", "no limits to provision"),
            // The catalogue's provisioning rules, as for Kubernetes StorageClasses.
            ("gp2:100Gi:3000", "cannot be provisioned"),
            ("io2:500Gi", "provisions its IOPS"),
        ] {
            let e = resolve(&bad.parse().unwrap(), &c).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
