//! Class-data sharing for node JVMs: one archive of the classes a Cassandra node loads, per
//! jar set and JDK, in the cache. Each node maps it at start instead of loading and verifying
//! those classes itself (measured here on one 256M-heap node: 5.7–7.1 CPU-seconds to
//! "Startup complete" with the archive against 7.8–9.8 without), so co-located nodes start
//! sooner on few cores; the JIT is untouched.
//!
//! No archive is built ahead of time: the first node started without one writes it when it
//! exits (`-XX:ArchiveClassesAtExit` to a file in its own directory), and a clean stop
//! publishes that file as the archive (a hard link, which fails if another node published
//! first); a killed node's file is discarded. Dynamic archives need JDK 13 or later: on JDK 11
//! nodes run without one. Nodes started while no archive
//! exists run as before. The classpath is the same for every node (see `render::jvm_args`),
//! which the archive requires; so is the exporter agent, which needs
//! `-XX:+AllowArchivingWithJavaAgent` both when the archive is written and when it is used.
//! A JVM that finds the archive does not match (another JDK build, other jars) ignores it
//! and loads classes as usual.

use std::path::{Path, PathBuf};

use super::dist::Distribution;

/// What a node's JVM does with the archive.
#[derive(Debug, Clone, PartialEq)]
pub enum Cds {
    /// Map this archive.
    Use(PathBuf),
    /// Write the classes it loaded to this file when it exits.
    Dump(PathBuf),
}

impl Cds {
    /// The JVM arguments.
    pub fn args(&self) -> Vec<String> {
        let mut a = vec![
            "-XX:+UnlockDiagnosticVMOptions".to_string(),
            "-XX:+AllowArchivingWithJavaAgent".to_string(),
        ];
        a.push(match self {
            Cds::Use(p) => format!("-XX:SharedArchiveFile={}", p.display()),
            Cds::Dump(p) => format!("-XX:ArchiveClassesAtExit={}", p.display()),
        });
        a
    }
}

/// The archive of a distribution: in the cache, named by its jar directory and by the JDK's
/// modification time (an updated JDK gets a new archive); none when the cache is not known
/// (a cluster created before it was recorded).
pub fn archive(dist: &Distribution) -> Option<PathBuf> {
    if dist.cache.as_os_str().is_empty() {
        return None;
    }
    let jdk = std::fs::canonicalize(&dist.java)
        .and_then(std::fs::metadata)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let jars = dist
        .lib_dir
        .to_string_lossy()
        .replace(['/', '\\', ':'], "_");
    let jars = match jars.char_indices().rev().nth(150) {
        Some((i, _)) => jars[i..].to_string(),
        None => jars,
    };
    Some(dist.cache.join("cds").join(format!("{jars}-jdk{jdk}.jsa")))
}

/// Whether `java` can write and map dynamic archives (JDK 13 and later).
pub fn supported(java: &Path) -> bool {
    std::process::Command::new(java)
        .arg("-version")
        .output()
        .ok()
        .and_then(|o| super::dist::java_major(&String::from_utf8_lossy(&o.stderr)))
        .is_some_and(|m| m >= 13)
}

/// What each node (by directory) does: all map the archive when there is one; else the first
/// writes it at exit.
pub fn plan(archive: &Path, node_dirs: &[&Path]) -> Vec<Option<Cds>> {
    if archive.is_file() {
        return node_dirs
            .iter()
            .map(|_| Some(Cds::Use(archive.into())))
            .collect();
    }
    node_dirs
        .iter()
        .enumerate()
        .map(|(i, d)| (i == 0).then(|| Cds::Dump(pending(d))))
        .collect()
}

/// The file the node in `node_dir` writes the archive to.
pub fn pending(node_dir: &Path) -> PathBuf {
    node_dir.join("classes.jsa.pending")
}

/// After the node in `node_dir` stopped: the archive it wrote, if any, becomes the archive
/// when it stopped cleanly and none exists yet; it is removed either way.
pub fn settle(archive: &Path, node_dir: &Path, clean: bool) {
    let p = pending(node_dir);
    if !p.exists() {
        return;
    }
    if clean && std::fs::metadata(&p).is_ok_and(|m| m.len() > 0) {
        publish(&p, archive);
    }
    let _ = std::fs::remove_file(&p);
}

/// Links `file` in as `archive` unless one is there; across file systems, through a copy
/// beside the archive.
fn publish(file: &Path, archive: &Path) {
    match std::fs::hard_link(file, archive) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(_) => {
            let tmp = archive.with_extension(format!("{}.tmp", std::process::id()));
            if std::fs::copy(file, &tmp).is_ok() {
                let _ = std::fs::hard_link(&tmp, archive);
            }
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_node_writes_the_archive_until_one_exists_then_all_map_it() {
        let dir = tempfile::tempdir().unwrap();
        let archive = dir.path().join("a.jsa");
        let (n1, n2) = (dir.path().join("node1"), dir.path().join("node2"));
        for d in [&n1, &n2] {
            std::fs::create_dir(d).unwrap();
        }
        let nodes = [n1.as_path(), n2.as_path()];
        let p = plan(&archive, &nodes);
        let dump = n1.join("classes.jsa.pending");
        assert_eq!(p, [Some(Cds::Dump(dump.clone())), None]);
        // A killed node's file is discarded.
        std::fs::write(&dump, b"classes").unwrap();
        settle(&archive, &n1, false);
        assert!(!dump.exists() && !archive.exists());
        // A clean stop publishes it; a second one does not replace it.
        std::fs::write(&dump, b"classes").unwrap();
        settle(&archive, &n1, true);
        assert!(!dump.exists());
        assert_eq!(std::fs::read(&archive).unwrap(), b"classes");
        std::fs::write(n2.join("classes.jsa.pending"), b"other").unwrap();
        settle(&archive, &n2, true);
        assert_eq!(std::fs::read(&archive).unwrap(), b"classes");
        assert!(!n2.join("classes.jsa.pending").exists());
        let p = plan(&archive, &nodes);
        assert_eq!(
            p,
            [Some(Cds::Use(archive.clone())), Some(Cds::Use(archive))]
        );
        assert_eq!(
            Cds::Dump("/x.jsa".into()).args(),
            [
                "-XX:+UnlockDiagnosticVMOptions",
                "-XX:+AllowArchivingWithJavaAgent",
                "-XX:ArchiveClassesAtExit=/x.jsa"
            ]
        );
    }
}
