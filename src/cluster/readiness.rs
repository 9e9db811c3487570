//! Readiness from node logs, read from the offset saved when the node was started (so an
//! earlier run's lines never count), and the log tail shown when a node fails.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::plan::STORAGE_PORT;

/// The line Cassandra logs when it accepts CQL clients.
pub const CQL_READY: &str = "Starting listening for CQL clients";

/// What a node's log shows since an offset.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LogView {
    pub cql_ready: bool,
    /// Peers this node has logged as UP.
    pub up: Vec<String>,
    /// Lines at ERROR level.
    pub errors: Vec<String>,
}

/// Reads `path` from `offset` and summarises it. A missing file reads as empty.
pub fn read_from(path: &Path, offset: u64) -> LogView {
    let mut text = String::new();
    if let Ok(mut f) = std::fs::File::open(path)
        && f.seek(SeekFrom::Start(offset)).is_ok()
    {
        let mut bytes = Vec::new();
        let _ = f.read_to_end(&mut bytes);
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    summarise(&text)
}

/// Pure part of [`read_from`].
pub fn summarise(text: &str) -> LogView {
    let mut v = LogView::default();
    for line in text.lines() {
        if line.contains(CQL_READY) {
            v.cql_ready = true;
        }
        if let Some(i) = line.find("InetAddress /")
            && let Some(addr) = line[i + "InetAddress /".len()..]
                .trim_end()
                .strip_suffix(" is now UP")
        {
            let host = addr
                .strip_suffix(&format!(":{STORAGE_PORT}"))
                .unwrap_or(addr)
                .to_string();
            if !v.up.contains(&host) {
                v.up.push(host);
            }
        }
        if line.starts_with("ERROR") {
            v.errors.push(line.to_string());
        }
    }
    v
}

/// The last `n` lines of a file (whole file read; logs of local nodes are small enough).
pub fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Current size of a file, 0 if missing.
pub fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarises_readiness_lines() {
        let log = "INFO  [main] 2026-11-22 02:26:50,394 PipelineConfigurator.java:148 - Starting listening for CQL clients on /127.0.0.1:9042 (unencrypted)...\n\
INFO  [GossipStage:1] 2026-11-22 02:26:51,000 Gossiper.java:1 - InetAddress /127.0.0.2:7000 is now UP\n\
INFO  [GossipStage:1] 2026-11-22 02:26:51,000 Gossiper.java:1 - InetAddress /127.0.0.2:7000 is now UP\n\
ERROR [main] 2026-11-22 02:26:52,000 X.java:1 - boom\n";
        let v = summarise(log);
        assert!(v.cql_ready);
        assert_eq!(v.up, vec!["127.0.0.2"]);
        assert_eq!(v.errors.len(), 1);
        assert_eq!(summarise("INFO nothing\n"), LogView::default());
    }

    #[test]
    fn reads_from_offset_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("system.log");
        std::fs::write(&p, format!("INFO x - {CQL_READY} on /127.0.0.1:9042\n")).unwrap();
        let off = size(&p);
        assert!(read_from(&p, 0).cql_ready);
        assert!(!read_from(&p, off).cql_ready);
        assert_eq!(tail(&p, 5).lines().count(), 1);
    }
}
