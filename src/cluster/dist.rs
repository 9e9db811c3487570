//! Cassandra distributions: jars of `org.apache.cassandra:cassandra-all:<version>` and its
//! dependencies, resolved with Maven into one cache shared by all clusters, or the `lib/` of
//! an existing installation; plus the Prometheus JMX exporter agent.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::jdk::{self, Java};
use super::versions::{Line, VersionError};
use crate::spec::CassandraSource;

/// The JMX exporter agent every node loads.
pub const EXPORTER_VERSION: &str = "1.0.1";
/// Cassandra line used when no version is given: the newest 5.0.x.
pub const DEFAULT_LINE: &str = "5.0";
/// Maven's own JVM options for a fetch, before any of the user's `MAVEN_OPTS` (which win): a
/// fetch is a few seconds of work, done sooner without the optimising compiler and with the
/// single-threaded collector (a one-node `cluster create` with an empty jar cache and a warm
/// ~/.m2 took 3.1-3.4 s against 4.4-5.0 s without them, bench/README.md).
/// `scripts/prefetch.sh` reads this line.
pub const MAVEN_JVM_OPTS: &str = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC";

/// A resolved distribution: where its jars are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    pub version: String,
    pub lib_dir: PathBuf,
    pub exporter_jar: PathBuf,
    /// The `java` the nodes run on.
    pub java: PathBuf,
    /// What that `java` reports (`java -version`), e.g. `11.0.13` (empty in the state of a
    /// cluster created before it was recorded).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub java_version: String,
    /// The `java` nodetool runs on: the nodes' own, unless their runtime lacks the JNDI RMI
    /// provider nodetool connects with (the fetched Java 11 runtime), then the machine's JDK
    /// (empty: the nodes' own).
    #[serde(default, skip_serializing_if = "crate::cluster::dist::is_empty_path")]
    pub tools_java: PathBuf,
    /// The stand-alone HTTP server jar the exporter agent needs on a runtime without
    /// `jdk.httpserver` (see [`super::jdk`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_shim: Option<PathBuf>,
    /// The cache the jars came from, where class-data archives are kept too (empty in the
    /// state of a cluster created before it was recorded: such a cluster starts without one).
    #[serde(default, skip_serializing_if = "crate::cluster::dist::is_empty_path")]
    pub cache: PathBuf,
}

pub(crate) fn is_empty_path(p: &Path) -> bool {
    p.as_os_str().is_empty()
}

impl Distribution {
    /// The `java` nodetool runs on.
    pub fn tools_java(&self) -> &Path {
        if is_empty_path(&self.tools_java) {
            &self.java
        } else {
            &self.tools_java
        }
    }

    /// "Cassandra 4.1.10 on Java 11.0.13" (without the Java for a cluster created before its
    /// version was recorded).
    pub fn describe(&self) -> String {
        if self.java_version.is_empty() {
            format!("Cassandra {}", self.version)
        } else {
            format!("Cassandra {} on Java {}", self.version, self.java_version)
        }
    }

    /// The major version of the nodes' Java (`None` for a cluster created before it was
    /// recorded).
    pub fn java_major(&self) -> Option<u32> {
        java_major(&format!("\"{}\"", self.java_version))
    }

    /// The Cassandra line of this distribution (`None` for a version no line matches, e.g. an
    /// installation's version string cqlbench cannot read).
    pub fn line(&self) -> Option<Line> {
        Line::of(&self.version).ok()
    }
}

/// Where a cluster's software comes from, as the caller found it: the jar cache (under the
/// cqlbench home) and the JDK's `java`.
#[derive(Debug, Clone)]
pub struct Toolchain {
    pub cache: PathBuf,
    pub java: PathBuf,
    /// Told what is being fetched before a download that takes a while (none: nobody).
    pub on_fetch: Option<fn(&str)>,
}

#[derive(Debug, thiserror::Error)]
pub enum DistError {
    #[error("{tool} not found: {hint}")]
    MissingTool {
        tool: &'static str,
        hint: &'static str,
    },
    #[error(
        "Cassandra {line} runs on Java {wanted}: {path} is Java {found} (give another with --java, or leave --java out)"
    )]
    JavaForLine {
        line: Line,
        wanted: String,
        path: PathBuf,
        found: String,
    },
    #[error("{path}: not a java that runs (--java takes a `java` binary or a JDK's directory)")]
    JavaNotRunnable { path: PathBuf },
    #[error("Java 11 runtime: {detail}")]
    Jdk { detail: String },
    #[error(transparent)]
    Version(#[from] VersionError),
    #[error(
        "Cassandra version '{version}' was not found on Maven Central (org.apache.cassandra:cassandra-all): {detail}"
    )]
    VersionNotFound { version: String, detail: String },
    #[error("Maven failed to fetch {what}: {detail}")]
    Maven { what: String, detail: String },
    #[error(
        "{path}: no cassandra-all or apache-cassandra jar in lib/ (is it a Cassandra installation?)"
    )]
    NotAnInstallation { path: PathBuf },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

pub(super) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> DistError + '_ {
    move |source| DistError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The major version in `java -version` output (`version "17.0.15"` → 17, `"1.8.0"` → 8).
pub fn java_major(version_output: &str) -> Option<u32> {
    let quoted = version_output.split('"').nth(1)?;
    let mut parts = quoted.split(['.', '-', '+']);
    let first: u32 = parts.next()?.parse().ok()?;
    if first == 1 {
        parts.next()?.parse().ok()
    } else {
        Some(first)
    }
}

/// Resolves a source to jars on disk, fetching with Maven when they are not cached, and the
/// Java its nodes run on (`java`: given with `--java`, else chosen for the line, see
/// [`choose_java`]). A version of a line local clusters do not run is refused before anything
/// is fetched. A Maven version of `5.0` (or empty) means the newest cached 5.0.x, else the
/// newest on Maven Central; `latest` always asks Maven Central.
pub fn resolve(
    source: &CassandraSource,
    tc: &Toolchain,
    java: Option<&Path>,
) -> Result<Distribution, DistError> {
    let machine = jdk::probe(&tc.java);
    // The line asked for is known before any jar is fetched: so is its Java.
    let early = match source {
        CassandraSource::Maven { version } => {
            Some(choose_java(Line::of(version)?, tc, machine.as_ref(), java)?)
        }
        CassandraSource::Home { .. } => None,
    };
    let cache = tc.cache.as_path();
    let exporter_jar = exporter_jar(tc)?;
    let (version, lib_dir) = match source {
        CassandraSource::Home { path } => {
            let lib_dir = path.join("lib");
            (installation_version(&lib_dir)?, lib_dir)
        }
        CassandraSource::Maven { version } => maven_cassandra(tc, version)?,
    };
    let java = match early {
        Some(j) => j,
        None => choose_java(Line::of(&version)?, tc, machine.as_ref(), java)?,
    };
    let tools_java = match machine {
        Some(m) if m.major >= 11 && !jdk::has_module(&java.path, "jdk.naming.rmi") => m.path,
        _ => PathBuf::new(),
    };
    let http_shim = if jdk::has_module(&java.path, "jdk.httpserver") {
        None
    } else {
        Some(jdk::http_shim(tc)?)
    };
    Ok(Distribution {
        version,
        lib_dir,
        exporter_jar,
        java: java.path,
        java_version: java.version,
        tools_java,
        http_shim,
        cache: cache.to_path_buf(),
    })
}

/// The Java for a line: the one given (which must be a version the line runs on); else the
/// machine's JDK (`JAVA_HOME`, else `PATH`) when the line runs on its version, in the line's
/// order of preference; else the Java 11 runtime cqlbench fetches ([`jdk::managed_jdk11`]).
/// `machine` is what the machine's `java` (`tc.java`) reported, if it runs.
pub fn choose_java(
    line: Line,
    tc: &Toolchain,
    machine: Option<&Java>,
    given: Option<&Path>,
) -> Result<Java, DistError> {
    let majors = line.java_majors();
    let wanted = || {
        majors
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(" or ")
    };
    if let Some(g) = given {
        let path = jdk::java_binary(g);
        let j =
            jdk::probe(&path).ok_or_else(|| DistError::JavaNotRunnable { path: path.clone() })?;
        if majors.contains(&j.major) {
            return Ok(j);
        }
        return Err(DistError::JavaForLine {
            line,
            wanted: wanted(),
            path,
            found: j.version,
        });
    }
    for &m in majors {
        match machine {
            Some(j) if j.major == m => return Ok(j.clone()),
            _ if m == 11 => return jdk::managed_jdk11(tc),
            _ => {}
        }
    }
    match machine {
        Some(j) => Err(DistError::JavaForLine {
            line,
            wanted: wanted(),
            path: j.path.clone(),
            found: j.version.clone(),
        }),
        None => Err(DistError::MissingTool {
            tool: "java",
            hint: "install a JDK 11 or 17 (e.g. apt-get install openjdk-17-jdk-headless) or set JAVA_HOME",
        }),
    }
}

fn installation_version(lib_dir: &Path) -> Result<String, DistError> {
    let entries = std::fs::read_dir(lib_dir).map_err(io(lib_dir))?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        for prefix in ["apache-cassandra-", "cassandra-all-"] {
            if let Some(v) = name
                .strip_prefix(prefix)
                .and_then(|r| r.strip_suffix(".jar"))
                && v.starts_with(|c: char| c.is_ascii_digit())
            {
                return Ok(v.to_string());
            }
        }
    }
    Err(DistError::NotAnInstallation {
        path: lib_dir.parent().unwrap_or(lib_dir).to_path_buf(),
    })
}

/// Cached versions (directories `cassandra-<version>/lib` with the complete marker).
pub fn cached_versions(cache: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(cache)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().join(".complete").exists())
                .filter_map(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .strip_prefix("cassandra-")
                        .map(String::from)
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort_by_key(|s| version_key(s));
    v
}

fn version_key(v: &str) -> Vec<u64> {
    v.split(['.', '-'])
        .map(|p| p.parse().unwrap_or(0))
        .collect()
}

fn maven_cassandra(tc: &Toolchain, requested: &str) -> Result<(String, PathBuf), DistError> {
    let cache = tc.cache.as_path();
    let line = requested.trim();
    let range_line = if line.is_empty() || line == "latest" {
        DEFAULT_LINE
    } else {
        line
    };
    let is_line = line.is_empty() || line == "latest" || line.matches('.').count() == 1;
    if is_line && line != "latest" {
        let prefix = format!("{range_line}.");
        if let Some(v) = cached_versions(cache)
            .into_iter()
            .rev()
            .find(|v| v.starts_with(&prefix))
        {
            let dir = cache.join(format!("cassandra-{v}"));
            return Ok((v, dir.join("lib")));
        }
    }
    if !is_line {
        let dir = cache.join(format!("cassandra-{line}"));
        if dir.join(".complete").exists() {
            return Ok((line.to_string(), dir.join("lib")));
        }
    }
    let maven_version = if is_line {
        line_range(range_line)
    } else {
        line.to_string()
    };
    let tmp = fetch_dir(cache, "cassandra");
    let result = mvn_copy(
        &tmp,
        tc.on_fetch,
        "org.apache.cassandra",
        "cassandra-all",
        &maven_version,
    )
    .map_err(|e| match e {
        DistError::Maven { detail, .. }
            if detail.contains("Could not find artifact")
                || detail.contains("No versions available")
                || detail.contains("was not found") =>
        {
            DistError::VersionNotFound {
                version: requested.to_string(),
                detail,
            }
        }
        other => other,
    });
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    let lib = tmp.join("lib");
    let version = installation_version(&lib)?;
    let dest = cache.join(format!("cassandra-{version}"));
    std::fs::write(tmp.join(".complete"), version.as_bytes()).map_err(io(&tmp))?;
    publish(&tmp, &dest, |d| d.join(".complete").exists())?;
    Ok((version, dest.join("lib")))
}

/// A scratch directory for one fetch, unique to this process and call.
pub(super) fn fetch_dir(cache: &Path, what: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    cache.join(format!(".fetch-{what}-{}-{n}", std::process::id()))
}

/// Moves the fully prepared directory `tmp` into place at `dest` with one rename, so the
/// cache never holds a half-written entry. When another process published `dest` first, its
/// copy is kept and `tmp` discarded; an incomplete leftover of an older cqlbench is replaced.
pub(super) fn publish(
    tmp: &Path,
    dest: &Path,
    complete: impl Fn(&Path) -> bool,
) -> Result<(), DistError> {
    if !complete(dest) {
        if dest.exists() {
            let _ = std::fs::remove_dir_all(dest);
        }
        match std::fs::rename(tmp, dest) {
            Ok(()) => return Ok(()),
            Err(e) if !complete(dest) => {
                let _ = std::fs::remove_dir_all(tmp);
                return Err(DistError::Io {
                    path: dest.to_path_buf(),
                    source: e,
                });
            }
            Err(_) => {} // published concurrently by another process
        }
    }
    let _ = std::fs::remove_dir_all(tmp);
    Ok(())
}

/// The exporter agent jar, fetched once into the cache.
fn exporter_jar(tc: &Toolchain) -> Result<PathBuf, DistError> {
    maven_jar(
        tc,
        "jmx_exporter",
        (
            "io.prometheus.jmx",
            "jmx_prometheus_javaagent",
            EXPORTER_VERSION,
        ),
    )
}

/// One Maven artifact's jar, fetched once with its dependencies into
/// `<cache>/<name>-<version>/lib`.
pub(super) fn maven_jar(
    tc: &Toolchain,
    name: &str,
    (group, artifact, version): (&str, &str, &str),
) -> Result<PathBuf, DistError> {
    let cache = tc.cache.as_path();
    let dir = cache.join(format!("{name}-{version}"));
    let jar_name = format!("{artifact}-{version}.jar");
    let jar = dir.join("lib").join(&jar_name);
    if jar.exists() {
        return Ok(jar);
    }
    let tmp = fetch_dir(cache, name);
    if let Err(e) = mvn_copy(&tmp, tc.on_fetch, group, artifact, version) {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    publish(&tmp, &dir, |d| d.join("lib").join(&jar_name).exists())?;
    Ok(jar)
}

/// The project file that fetches one artifact with its dependencies: `fetch-pom.xml`, which
/// `scripts/prefetch.sh` fills in the same way.
fn fetch_pom(group: &str, artifact: &str, version: &str) -> String {
    include_str!("fetch-pom.xml")
        .replace("@GROUP@", group)
        .replace("@ARTIFACT@", artifact)
        .replace("@VERSION@", version)
}

/// The Maven version range of a release line: `5.0` → `[5.0.0,5.0.999]`, its newest release.
fn line_range(line: &str) -> String {
    format!("[{line}.0,{line}.999]")
}

/// Maven's `MAVEN_OPTS` for a fetch: [`MAVEN_JVM_OPTS`], then the user's (a later JVM option
/// wins over an earlier one).
fn maven_opts(user: Option<String>) -> String {
    match user {
        Some(u) if !u.trim().is_empty() => format!("{MAVEN_JVM_OPTS} {u}"),
        _ => MAVEN_JVM_OPTS.to_string(),
    }
}

/// Runs `mvn dependency:copy-dependencies` for one artifact into `<work>/lib`.
pub(super) fn mvn_copy(
    work: &Path,
    on_fetch: Option<fn(&str)>,
    group: &str,
    artifact: &str,
    version: &str,
) -> Result<(), DistError> {
    std::fs::create_dir_all(work).map_err(io(work))?;
    std::fs::write(work.join("pom.xml"), fetch_pom(group, artifact, version)).map_err(io(work))?;
    if let Some(say) = on_fetch {
        say(&format!(
            "fetching {group}:{artifact}:{version} and its dependencies with Maven…"
        ));
    }
    let out = Command::new("mvn")
        .env("MAVEN_OPTS", maven_opts(std::env::var("MAVEN_OPTS").ok()))
        .args([
            "-B",
            "-q",
            "-U",
            "-Dstyle.color=never",
            "dependency:copy-dependencies",
            "-DoutputDirectory=lib",
            "-DincludeScope=runtime",
        ])
        .current_dir(work)
        .output()
        .map_err(|_| DistError::MissingTool {
            tool: "mvn",
            hint: "install Maven (e.g. apt-get install maven)",
        })?;
    if out.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let detail = maven_error_detail(&text);
    Err(DistError::Maven {
        what: format!("{group}:{artifact}:{version}"),
        detail,
    })
}

/// The useful part of Maven's first `[ERROR]` line: colour codes removed, and for a missing
/// artifact just "Could not find artifact …".
fn maven_error_detail(output: &str) -> String {
    let clean: String = {
        let mut out = String::new();
        let mut chars = output.chars();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                for n in chars.by_ref() {
                    if n.is_ascii_alphabetic() {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    };
    let Some(line) = clean.lines().find(|l| l.contains("[ERROR]")) else {
        return "mvn exited with an error".to_string();
    };
    let line = line.trim().trim_start_matches("[ERROR]").trim();
    for marker in [
        "Could not find artifact",
        "No versions available",
        "was not found in",
    ] {
        if let Some(i) = line.find(marker) {
            let rest = &line[i..];
            if marker == "was not found in" {
                // "…: g:a:jar:v was not found in <repo> during a previous attempt…"
                let artifact = line[..i].rsplit(": ").next().unwrap_or("").trim();
                return format!("{artifact} was not found");
            }
            return rest.split(" in ").next().unwrap_or(rest).trim().to_string();
        }
    }
    line.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fetchs_maven_runs_on_the_quick_jvm_options_then_the_users() {
        assert_eq!(maven_opts(None), MAVEN_JVM_OPTS);
        assert_eq!(maven_opts(Some(" ".into())), MAVEN_JVM_OPTS);
        assert_eq!(
            maven_opts(Some("-Xmx1g -XX:TieredStopAtLevel=4".into())),
            format!("{MAVEN_JVM_OPTS} -Xmx1g -XX:TieredStopAtLevel=4")
        );
    }

    /// `scripts/prefetch.sh` warms Maven's repository with what `maven_cassandra` and
    /// `exporter_jar` fetch: the same artifacts and versions, through the same project file.
    #[test]
    fn prefetch_script_resolves_what_a_first_cluster_fetches() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let out = Command::new(root.join("scripts/prefetch.sh"))
            .arg("--print")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let printed: Vec<Vec<String>> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.split(' ').map(String::from).collect())
            .collect();
        let want = |g: &str, a: &str, v: &str| vec![g.to_string(), a.to_string(), v.to_string()];
        assert_eq!(
            printed,
            vec![
                want(
                    "org.apache.cassandra",
                    "cassandra-all",
                    &line_range(DEFAULT_LINE)
                ),
                want(
                    "io.prometheus.jmx",
                    "jmx_prometheus_javaagent",
                    EXPORTER_VERSION
                ),
            ]
        );
        let pom = fetch_pom("g.x", "art", "[1.0.0,1.0.999]");
        assert!(
            pom.contains("<groupId>g.x</groupId><artifactId>art</artifactId><version>[1.0.0,1.0.999]</version>"),
            "{pom}"
        );
        assert!(!pom.contains('@'), "{pom}");
        let script = std::fs::read_to_string(root.join("scripts/prefetch.sh")).unwrap();
        for placeholder in ["@GROUP@", "@ARTIFACT@", "@VERSION@"] {
            assert!(
                script.contains(placeholder),
                "prefetch.sh fills {placeholder}"
            );
        }
    }

    #[test]
    fn extracts_maven_error_detail() {
        let out = "\u{1b}[0m\u{1b}[0m[ERROR] Failed to execute goal on project fetch: Could not resolve dependencies for project x: Could not find artifact org.apache.cassandra:cassandra-all:jar:5.0.999 in central (https://example) -> [Help 1]\n";
        assert_eq!(
            maven_error_detail(out),
            "Could not find artifact org.apache.cassandra:cassandra-all:jar:5.0.999"
        );
        assert_eq!(maven_error_detail("nothing"), "mvn exited with an error");
    }

    #[test]
    fn parses_java_versions() {
        assert_eq!(
            java_major("openjdk version \"17.0.15\" 2025-04-15\n"),
            Some(17)
        );
        assert_eq!(java_major("java version \"1.8.0_292\"\n"), Some(8));
        assert_eq!(java_major("openjdk version \"11\" 2018-09-25"), Some(11));
        assert_eq!(java_major("garbage"), None);
    }

    #[test]
    fn publish_installs_once_and_keeps_a_concurrent_copy() {
        let root = tempfile::tempdir().unwrap();
        let complete = |d: &Path| d.join("ok").exists();
        let prepared = |name: &str, content: &str| {
            let t = root.path().join(name);
            std::fs::create_dir_all(&t).unwrap();
            std::fs::write(t.join("ok"), content).unwrap();
            t
        };
        let dest = root.path().join("dest");
        // Fresh: the prepared directory is moved into place.
        let a = prepared("a", "first");
        publish(&a, &dest, complete).unwrap();
        assert!(!a.exists());
        // Another process published first: its copy stays, ours is discarded, no error.
        let b = prepared("b", "second");
        publish(&b, &dest, complete).unwrap();
        assert!(!b.exists());
        assert_eq!(std::fs::read_to_string(dest.join("ok")).unwrap(), "first");
        // An incomplete leftover is replaced.
        std::fs::remove_file(dest.join("ok")).unwrap();
        std::fs::write(dest.join("partial.jar"), "x").unwrap();
        let c = prepared("c", "third");
        publish(&c, &dest, complete).unwrap();
        assert_eq!(std::fs::read_to_string(dest.join("ok")).unwrap(), "third");
        assert!(!dest.join("partial.jar").exists());
    }

    #[test]
    fn orders_versions_numerically() {
        let mut v = vec![
            "5.0.10".to_string(),
            "5.0.9".to_string(),
            "4.1.3".to_string(),
        ];
        v.sort_by_key(|s| version_key(s));
        assert_eq!(v, vec!["4.1.3", "5.0.9", "5.0.10"]);
    }
}
