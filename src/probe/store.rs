//! Where probe results live and how later runs and reports find them: by default
//! `<cqlbench home>/probes/<env>-<UTC time>.json`.

use std::path::{Path, PathBuf};

use crate::format::compact_utc;
use crate::result::probe::ProbeResult;

/// `<home>/probes`.
pub fn probes_dir(home: &Path) -> PathBuf {
    home.join(crate::runs_index::PROBES_DIR)
}

/// The default result path of a probe of `env` started at `unix_s`.
pub fn default_path(home: &Path, env: &str, unix_s: u64) -> PathBuf {
    probes_dir(home).join(format!("{env}-{}.json", compact_utc(unix_s)))
}

/// Reads a probe result, refusing other kinds and layout versions.
pub fn load(path: &Path) -> Result<ProbeResult, crate::result::ResultError> {
    crate::result::file::read_probe(path)
}

/// The most recent complete probe of `env` in `dir` (by `started_unix_s`), if any. Files that
/// do not parse, or are incomplete, are skipped.
pub fn latest_for_env(dir: &Path, env: &str) -> Option<(PathBuf, ProbeResult)> {
    let entries = std::fs::read_dir(dir).ok()?;
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| load(&p).ok().map(|r| (p, r)))
        .filter(|(_, r)| r.complete && r.env == env)
        .max_by_key(|(_, r)| r.started_unix_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_json(env: &str, started: u64, complete: bool) -> String {
        let text = include_str!("testdata/probe-result.json");
        let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
        v["env"] = env.into();
        v["started_unix_s"] = started.into();
        v["complete"] = complete.into();
        v.to_string()
    }

    #[test]
    fn finds_the_latest_complete_probe_of_an_environment() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: String| std::fs::write(dir.path().join(name), text).unwrap();
        write("a.json", sample_json("laptop", 100, true));
        write("b.json", sample_json("laptop", 300, false));
        write("c.json", sample_json("laptop", 200, true));
        write("d.json", sample_json("other", 400, true));
        write("e.json", "{not json".to_string());
        let (path, r) = latest_for_env(dir.path(), "laptop").unwrap();
        assert_eq!(path, dir.path().join("c.json"));
        assert_eq!(r.started_unix_s, 200);
        assert!(latest_for_env(dir.path(), "nobody").is_none());
    }

    #[test]
    fn refuses_other_schema_versions() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        let text =
            sample_json("x", 1, true).replace("\"schema_version\":1", "\"schema_version\":2");
        std::fs::write(&p, text).unwrap();
        let err = load(&p).unwrap_err().to_string();
        assert!(err.contains("layout version 2; this one reads 1"), "{err}");
    }

    #[test]
    fn default_path_is_under_probes_with_env_and_time() {
        let p = default_path(Path::new("/h"), "aws", 1_795_314_605);
        assert_eq!(p, Path::new("/h/probes/aws-20261122T023005Z.json"));
    }
}
