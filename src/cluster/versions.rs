//! The Cassandra lines local clusters run (4.0, 4.1, 5.0), what each needs: the Java it runs
//! on and the cassandra.yaml keys it accepts. Pure: facts about releases, nothing fetched.
//!
//! The key lists (`yaml_keys/<line>.txt`) are read from each line's `Config` class by
//! `scripts/yaml-keys.py`: a node refuses to start on a top-level key its `Config` has no field
//! for, so a `--set` the chosen version does not know is refused at create instead.

use std::fmt;

/// A Cassandra release line that local clusters run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Line {
    V40,
    V41,
    V50,
}

/// The lines, oldest first.
pub const LINES: [Line; 3] = [Line::V40, Line::V41, Line::V50];

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Line::V40 => "4.0",
            Line::V41 => "4.1",
            Line::V50 => "5.0",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    #[error(
        "Cassandra {version} runs only on Java 8, which cannot be installed here: local clusters run 4.0, 4.1 and 5.0 (3.x stays available to `cqlbench k8s` renders)"
    )]
    NeedsJava8 { version: String },
    #[error(
        "Cassandra '{version}' is not a version local clusters run: give 4.0, 4.1 or 5.0 (a line, e.g. 4.1, or a release, e.g. 4.1.10)"
    )]
    Unsupported { version: String },
}

impl Line {
    /// The line of a version as given (`4.1`, `4.1.10`, `5.0-beta1`); an empty version or
    /// `latest` is the default line, 5.0.
    pub fn of(version: &str) -> Result<Line, VersionError> {
        let v = version.trim();
        if v.is_empty() || v == "latest" {
            return Ok(Line::V50);
        }
        // MAJOR.MINOR[.PATCH][-QUALIFIER], numbers where numbers go (`5.0.x` is no release).
        let (numbers, qualifier) = v.split_once('-').unwrap_or((v, ""));
        let numeric: Vec<Option<u32>> = numbers.split('.').map(|p| p.parse().ok()).collect();
        let well_formed = (2..=3).contains(&numeric.len())
            && numeric.iter().all(Option::is_some)
            && qualifier
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.')
            && !(v.contains('-') && qualifier.is_empty());
        if !well_formed && numeric.first().copied().flatten().is_none_or(|m| m >= 4) {
            return Err(VersionError::Unsupported {
                version: v.to_string(),
            });
        }
        let major = numeric.first().copied().flatten();
        let minor = numeric.get(1).copied().flatten();
        match (major, minor) {
            (Some(4), Some(0)) => Ok(Line::V40),
            (Some(4), Some(1)) => Ok(Line::V41),
            (Some(5), Some(0)) => Ok(Line::V50),
            (Some(m), _) if m < 4 => Err(VersionError::NeedsJava8 {
                version: v.to_string(),
            }),
            _ => Err(VersionError::Unsupported {
                version: v.to_string(),
            }),
        }
    }

    /// The Java major versions this line runs on, the one chosen by default first. 4.0 and 4.1
    /// also run on Java 8, which cannot be had here; 5.0 runs on 11 and 17.
    pub fn java_majors(self) -> &'static [u32] {
        match self {
            Line::V40 | Line::V41 => &[11],
            Line::V50 => &[17, 11],
        }
    }

    /// The key and value of the commit log's sync period (10 s): 4.1 renamed the key and gave
    /// it a unit.
    pub fn commitlog_sync_period(self) -> (&'static str, crate::yaml::Value) {
        match self {
            Line::V40 => (
                "commitlog_sync_period_in_ms",
                crate::yaml::Value::from(10_000),
            ),
            Line::V41 | Line::V50 => (
                "commitlog_sync_period",
                crate::yaml::Value::String("10000ms".into()),
            ),
        }
    }

    fn key_list(self) -> &'static str {
        match self {
            Line::V40 => include_str!("yaml_keys/4.0.txt"),
            Line::V41 => include_str!("yaml_keys/4.1.txt"),
            Line::V50 => include_str!("yaml_keys/5.0.txt"),
        }
    }

    /// Whether a node of this line accepts `key` at the top of cassandra.yaml (a current name,
    /// or an old name it still reads).
    pub fn knows_key(self, key: &str) -> bool {
        self.key_list()
            .lines()
            .any(|l| !l.starts_with('#') && (l == key || l.split(" -> ").next() == Some(key)))
    }

    /// Why `key` is refused by this line, with the name the line knows it by when it only
    /// renamed it (`commitlog_sync_period` on 4.0: its `commitlog_sync_period_in_ms`), or the
    /// lines that do know it.
    pub fn unknown_key_hint(self, key: &str) -> String {
        let renamed = |line: Line| {
            line.key_list().lines().find_map(|l| {
                let (old, new) = l.split_once(" -> ")?;
                (new == key || old == key).then(|| (old.to_string(), new.to_string()))
            })
        };
        if let Some((old, new)) = LINES.iter().find_map(|&l| renamed(l)) {
            let own = if self.knows_key(&old) { old } else { new };
            if own != key && self.knows_key(&own) {
                return format!("{self} calls it '{own}'");
            }
        }
        let known: Vec<String> = LINES
            .iter()
            .filter(|l| l.knows_key(key))
            .map(|l| l.to_string())
            .collect();
        if known.is_empty() {
            "no Cassandra line has it".into()
        } else {
            format!("only Cassandra {} has it", known.join(" and "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_versions() {
        assert_eq!(Line::of("4.0.10"), Ok(Line::V40));
        assert_eq!(Line::of("4.1"), Ok(Line::V41));
        assert_eq!(Line::of("5.0-beta1"), Ok(Line::V50));
        assert_eq!(Line::of(""), Ok(Line::V50));
        assert_eq!(Line::of("latest"), Ok(Line::V50));
        assert!(matches!(
            Line::of("3.11.17"),
            Err(VersionError::NeedsJava8 { .. })
        ));
        assert_eq!(Line::of("5.0.9-rc1"), Ok(Line::V50));
        for v in [
            "9.9",
            "4.2",
            "6.0-alpha2",
            "x",
            "4",
            "5.0.x",
            "5.0.9.1",
            "5.0-",
            "5.x",
            "5.0.9-rc 1",
        ] {
            assert!(
                matches!(Line::of(v), Err(VersionError::Unsupported { .. })),
                "{v}"
            );
        }
    }

    #[test]
    fn keys_per_line() {
        // 4.0 knows only the old name; 4.1 and 5.0 both.
        assert!(Line::V40.knows_key("commitlog_sync_period_in_ms"));
        assert!(!Line::V40.knows_key("commitlog_sync_period"));
        assert!(Line::V41.knows_key("commitlog_sync_period"));
        assert!(Line::V41.knows_key("commitlog_sync_period_in_ms"));
        assert!(Line::V50.knows_key("concurrent_writes"));
        // New in 5.0: storage-attached indexes' settings and the default compaction.
        assert!(Line::V50.knows_key("sai_options"));
        assert!(!Line::V41.knows_key("sai_options"));
        assert!(!Line::V50.knows_key("no_such_key"));
        assert_eq!(
            Line::V40.unknown_key_hint("commitlog_sync_period"),
            "4.0 calls it 'commitlog_sync_period_in_ms'"
        );
        assert_eq!(
            Line::V40.unknown_key_hint("sai_options"),
            "only Cassandra 5.0 has it"
        );
        assert_eq!(
            Line::V50.unknown_key_hint("no_such_key"),
            "no Cassandra line has it"
        );
        // The key each line's rendered commit log period uses is one the line knows.
        for l in LINES {
            assert!(l.knows_key(l.commitlog_sync_period().0), "{l}");
        }
    }
}
