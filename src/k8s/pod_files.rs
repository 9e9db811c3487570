//! A pod's result files carried in its log: how a loader pod with no shared volume hands its
//! results to `cqlbench k8s run`, through the API's log endpoint and nothing else.
//!
//! After its run, the pod prints every file under its results directory as
//!
//! ```text
//! cqlbench-file v1 begin shard-0.json 5120
//! <base64, 76 characters a line>
//! cqlbench-file v1 end shard-0.json
//! ```
//!
//! and last `cqlbench-file v1 done 3` (the number of files). Short lines keep clear of a
//! runtime's log line limit (containerd splits lines over 16 KiB); the length and the `done`
//! line tell a log cut short (rotated, or the pod killed) from a complete one. Anything between
//! the blocks (the run's own output) is left alone.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::error::Invalid;

const MARK: &str = "cqlbench-file v1";
const LINE: usize = 76;

/// One file a pod wrote, by its path under the pod's results directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodFile {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
}

/// A line of the results blocks (where a pod's own output ends).
pub fn is_block_line(line: &str) -> bool {
    line.starts_with(MARK)
}

/// Every regular file under `dir`, by path relative to it, sorted.
pub fn files_under(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        for entry in std::fs::read_dir(dir.join(&rel))? {
            let entry = entry?;
            let path = rel.join(entry.file_name());
            let kind = entry.file_type()?;
            if kind.is_dir() {
                todo.push(path);
            } else if kind.is_file() {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Prints every file under `dir` in the block format, then the `done` line.
pub fn emit(dir: &Path, out: &mut dyn Write) -> std::io::Result<usize> {
    let files = files_under(dir)?;
    for rel in &files {
        let bytes = std::fs::read(dir.join(rel))?;
        let name = rel.display();
        writeln!(out, "{MARK} begin {name} {}", bytes.len())?;
        let text = STANDARD.encode(&bytes);
        for chunk in text.as_bytes().chunks(LINE) {
            out.write_all(chunk)?;
            out.write_all(b"\n")?;
        }
        writeln!(out, "{MARK} end {name}")?;
    }
    writeln!(out, "{MARK} done {}", files.len())?;
    out.flush()?;
    Ok(files.len())
}

/// A path a pod names: relative, plain names only (no `..`, no root), so that it can only land
/// inside the directory it is collected into.
fn safe_path(name: &str) -> Result<PathBuf, Invalid> {
    let path = PathBuf::from(name);
    let plain = !name.is_empty() && path.components().all(|c| matches!(c, Component::Normal(_)));
    if plain {
        Ok(path)
    } else {
        Err(crate::invalid!(
            "the pod's log names a file '{name}' outside its results directory"
        ))
    }
}

/// The files in a pod's log; refused in one line when the log holds no complete set (no `done`
/// line, a block cut short, a length or base64 that does not match).
pub fn parse(log: &str) -> Result<Vec<PodFile>, Invalid> {
    let mut files = Vec::new();
    let mut open: Option<(PathBuf, usize, String)> = None;
    for line in log.lines() {
        let Some(rest) = line.strip_prefix(MARK).map(str::trim) else {
            if let Some((_, _, text)) = &mut open {
                text.push_str(line.trim_end());
            }
            continue;
        };
        let mut words = rest.splitn(2, ' ');
        match (words.next(), words.next(), open.take()) {
            (Some("begin"), Some(what), None) => {
                let (name, len) = what.rsplit_once(' ').unwrap_or((what, ""));
                let len = len
                    .parse()
                    .map_err(|_| crate::invalid!("the pod's log has a bad file header '{line}'"))?;
                open = Some((safe_path(name)?, len, String::new()));
            }
            (Some("end"), Some(name), Some((path, len, text))) if Path::new(name) == path => {
                let bytes = STANDARD.decode(text.as_bytes()).map_err(|e| {
                    crate::invalid!("the pod's log has {} garbled: {e}", path.display())
                })?;
                if bytes.len() != len {
                    return Err(crate::invalid!(
                        "the pod's log has {} cut short: {} of {len} bytes",
                        path.display(),
                        bytes.len()
                    ));
                }
                files.push(PodFile { path, bytes });
            }
            (Some("done"), Some(n), None) if n.parse() == Ok(files.len()) => return Ok(files),
            _ => {
                return Err(crate::invalid!(
                    "the pod's log has an unexpected line '{line}'"
                ));
            }
        }
    }
    Err(crate::invalid!(
        "the pod's log ends before its results were all printed ({} file(s) read): the pod \
         failed before it printed them, or its log was rotated or cut",
        files.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(files: &[(&str, &[u8])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, bytes).unwrap();
        }
        dir
    }

    #[test]
    fn files_round_trip_through_a_log_with_other_lines() {
        let big: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
        let dir = dir_with(&[
            ("shard-1.json", b"{\"a\": 1}\n"),
            ("shard-1/capacity.step-01.hlog", &big),
            ("empty", b""),
        ]);
        let mut log = b"run output line\n".to_vec();
        assert_eq!(emit(dir.path(), &mut log).unwrap(), 3);
        let log = String::from_utf8(log).unwrap();
        assert!(log.lines().all(|l| l.len() <= 80), "short lines");
        let files = parse(&log).unwrap();
        let names: Vec<_> = files.iter().map(|f| f.path.display().to_string()).collect();
        assert_eq!(
            names,
            ["empty", "shard-1/capacity.step-01.hlog", "shard-1.json"]
        );
        assert_eq!(files[2].bytes, b"{\"a\": 1}\n");
        assert_eq!(files[1].bytes, big);
    }

    #[test]
    fn a_log_cut_short_or_unsafe_is_refused() {
        let dir = dir_with(&[("shard-0.json", &[b'x'; 300])]);
        let mut log = Vec::new();
        emit(dir.path(), &mut log).unwrap();
        let log = String::from_utf8(log).unwrap();
        let without_done = log.rsplit_once(MARK).unwrap().0;
        let e = parse(without_done).unwrap_err().to_string();
        assert!(
            e.contains("ends before its results were all printed"),
            "{e}"
        );
        let lines: Vec<&str> = log.lines().collect();
        let missing_line = [&lines[..1], &lines[2..]].concat().join("\n");
        let e = parse(&missing_line).unwrap_err().to_string();
        assert!(e.contains("cut short") || e.contains("garbled"), "{e}");
        let escape = log.replace("shard-0.json", "../shard-0.json");
        let e = parse(&escape).unwrap_err().to_string();
        assert!(e.contains("outside its results directory"), "{e}");
        assert!(parse(&log.replace("done 1", "done 2")).is_err());
    }
}
