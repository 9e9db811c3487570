//! Small file-system helpers shared by every stage that writes results or state.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically: a temporary file in the same directory is written,
/// synced and renamed over the target, so a reader never sees a half-written file and a crash
/// leaves either the old or the new content.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// [`write_atomic`] of what `fill` writes, streamed to the temporary file (a large result is
/// never held in memory as a whole); a failed fill leaves no temporary file behind.
fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let file_name = path.file_name().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "path has no file name")
    })?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(".tmp{}", std::process::id()));
    let tmp = dir.join(tmp_name);
    let mut w = std::io::BufWriter::with_capacity(1 << 16, std::fs::File::create(&tmp)?);
    let written = fill(&mut w)
        .and_then(|()| w.flush())
        .and_then(|()| w.get_ref().sync_all());
    if let Err(e) = written {
        drop(w);
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    drop(w);
    std::fs::rename(&tmp, path)
}

/// Writes `value` as pretty JSON, atomically (see [`write_atomic`]), streamed to the file.
pub fn write_json<T: serde::Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    write_atomic_with(path, |w| {
        serde_json::to_writer_pretty(w, value).map_err(std::io::Error::other)
    })
}

/// Checks that a result can be written at `path`: not a directory, and no part of the way to
/// it a file (`FILE/r.json`); the error says which, in one line.
pub fn check_out_path(path: &Path) -> Result<(), crate::error::Invalid> {
    if path.is_dir() {
        return Err(crate::invalid!(
            "{} is a directory: give a file path for the result",
            path.display()
        ));
    }
    let mut dir = path.parent();
    while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
        if d.exists() && !d.is_dir() {
            return Err(crate::invalid!(
                "{}: {} is a file, not a directory",
                path.display(),
                d.display()
            ));
        }
        dir = d.parent();
    }
    Ok(())
}

/// The same file, however each path was spelled.
pub fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// The last line of `text` that is not blank, trimmed (what a failed tool said last).
pub fn last_line(text: &str) -> String {
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_path_through_a_file_or_onto_a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("FILE");
        std::fs::write(&file, "x").unwrap();
        let e = check_out_path(&file.join("sub/r.json")).unwrap_err();
        assert!(e.ends_with("FILE is a file, not a directory"), "{e}");
        let e = check_out_path(dir.path()).unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
        check_out_path(&dir.path().join("new/r.json")).unwrap();
        check_out_path(&file).unwrap();
    }

    #[test]
    fn a_value_that_fails_to_serialise_halfway_leaves_the_old_file_and_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        write_json(&p, &[1, 2]).unwrap();
        // JSON keys must be strings: serde_json fails after writing the first bytes.
        let bad: std::collections::BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into();
        let e = write_json(&p, &("first", bad)).unwrap_err();
        assert!(e.to_string().contains("key must be a string"), "{e}");
        let back: Vec<u8> = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(back, [1, 2]);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn write_atomic_replaces_content_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sub").join("a.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(p.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.json")]);
    }
}
