//! Test helpers shared by the unit tests.

/// Compares `actual` with the golden file at `rel_path` (relative to the crate root);
/// `UPDATE_GOLDEN=1` rewrites the file after an intended change.
pub fn assert_golden(rel_path: &str, actual: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel_path);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().expect("golden files live in a directory")).unwrap();
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("golden file {}: {e}", path.display()));
    assert_eq!(
        actual, expected,
        "{rel_path} differs from what was rendered (UPDATE_GOLDEN=1 to accept)"
    );
}
