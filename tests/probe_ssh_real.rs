//! `cqlbench probe --ssh` through the real binary against a real OpenSSH server (Debian's
//! `openssh-server`), started by the test on a free loopback port with its own host key,
//! authorized key and configuration in a temporary directory, and stopped by its PID at the
//! end. The remote side's fio and sysbench are this machine's, run through sshd: the probe's
//! figures come back, the remote host is named, what is missing there is refused in one line,
//! Ctrl-C removes the remote scratch directory, and a local and a remote probe stand side by
//! side in one report. No Cassandra needed.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use common::daemon::{Reap, free_port, keygen};

const SSHD: &str = "/usr/sbin/sshd";
const BIN: &str = env!("CARGO_BIN_EXE_cqlbench");

/// The server's process, killed by its PID when dropped (a failing test too).
struct Sshd {
    child: Reap,
    port: u16,
    dir: PathBuf,
}

impl Sshd {
    /// sshd -D on 127.0.0.1:PORT: keys only (the client key of `dir/client`), no PAM.
    fn start(dir: &Path) -> Sshd {
        keygen(&dir.join("host_key"));
        keygen(&dir.join("client"));
        keygen(&dir.join("stranger"));
        std::fs::copy(dir.join("client.pub"), dir.join("authorized_keys")).unwrap();
        // sshd's privilege-separation directory.
        std::fs::create_dir_all("/run/sshd").unwrap();
        let port = free_port();
        let config = dir.join("sshd_config");
        let d = dir.display();
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
                 AuthorizedKeysFile {d}/authorized_keys\nPubkeyAuthentication yes\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
                 PermitRootLogin prohibit-password\nStrictModes no\nLogLevel ERROR\n"
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.join("sshd.log")).unwrap();
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!("{SSHD} did not start ({e}): apt-get install -y openssh-server")
            });
        let mut sshd = Sshd {
            child: Reap(child),
            port,
            dir: dir.to_path_buf(),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = sshd.child.0.try_wait().unwrap() {
                let log = std::fs::read_to_string(dir.join("sshd.log")).unwrap_or_default();
                panic!("{SSHD} exited ({status}):\n{log}");
            }
            assert!(Instant::now() < deadline, "{SSHD} never listened");
            std::thread::sleep(Duration::from_millis(100));
        }
        sshd
    }

    fn user() -> String {
        let out = Command::new("id").arg("-un").output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// The ssh flags of a probe through this server, logging in with `key`.
    fn flags(&self, key: &str) -> Vec<String> {
        vec![
            "--ssh".into(),
            format!("{}@127.0.0.1:{}", Sshd::user(), self.port),
            "--ssh-identity".into(),
            self.dir.join(key).display().to_string(),
            "--ssh-option".into(),
            format!(
                "UserKnownHostsFile={}",
                self.dir.join("known_hosts").display()
            ),
        ]
    }
}

/// `cqlbench probe ARGS…` with a home of its own, 1-s runs of 16 MiB files.
fn probe(home: &Path, args: &[String]) -> Output {
    Command::new(BIN)
        .arg("probe")
        .args(args)
        .args(["--quick", "--runtime-s", "1", "--size-mib", "16"])
        .env("CQLBENCH_HOME", home)
        .env_remove("CQLBENCH_FIO")
        .env_remove("CQLBENCH_SYSBENCH")
        .output()
        .unwrap()
}

fn strings(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn scratch_dirs(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".cqlbench-probe-"))
        .collect()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn a_probe_over_ssh_measures_the_remote_host_and_refuses_what_is_missing_there() {
    let started = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let server = tmp.path().join("server");
    let data = tmp.path().join("data");
    let home = tmp.path().join("home");
    for d in [&server, &data] {
        std::fs::create_dir(d).unwrap();
    }
    let sshd = Sshd::start(&server);
    let host = format!("127.0.0.1:{}", sshd.port);
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string();

    // 1. The probe through sshd: fio's figures, sysbench's score, the host named.
    let remote_json = tmp.path().join("remote.json");
    let mut args = sshd.flags("client");
    args.extend(strings(&["--dir", data.to_str().unwrap(), "--out"]));
    args.push(remote_json.display().to_string());
    args.extend(strings(&["--profiles", "rand_read_4k,lcs"]));
    let out = probe(&home, &args);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let first_lines: Vec<&str> = stdout.lines().take(2).collect();
    assert_eq!(
        first_lines[1],
        format!(
            "remote host: {hostname} (over ssh {}@{host}), kernel {}",
            Sshd::user(),
            std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap()
                .trim()
        ),
        "{stdout}"
    );
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&remote_json).unwrap()).unwrap();
    assert_eq!(r["complete"], true);
    assert_eq!(r["env"], "127.0.0.1", "the env defaults to the ssh host");
    assert_eq!(r["host"]["hostname"], hostname.as_str());
    assert!(r["host"]["cores"].as_u64().unwrap() >= 1);
    assert!(r["host"]["ram_bytes"].as_u64().unwrap() > 0);
    assert_eq!(r["spec"]["remote"]["dest"]["port"], sshd.port);
    assert_eq!(r["dir"], data.to_str().unwrap());
    assert!(r["disk"]["size_bytes"].as_u64().unwrap() > 0, "{r}");
    assert!(r["fio_version"].as_str().unwrap().starts_with("fio-"));
    assert_eq!(r["cpu"]["source"], "sysbench");
    assert!(r["cpu"]["events_s_1_thread"].as_f64().unwrap() > 0.0);
    let profiles = r["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 2);
    let rr = profiles
        .iter()
        .find(|p| p["name"] == "rand_read_4k")
        .unwrap();
    assert!(rr["read_iops"].as_f64().unwrap() > 0.0);
    assert!(rr["read_p99_us"].as_f64().unwrap() > 0.0);
    assert!(r["summary"]["disk_read_p99_us"].as_f64().unwrap() > 0.0);
    assert!(scratch_dirs(&data).is_empty(), "{:?}", scratch_dirs(&data));
    // accept-new: the host key was recorded on first use (hashed or not, ssh-keygen finds it).
    let found = Command::new("ssh-keygen")
        .arg("-F")
        .arg(format!("[127.0.0.1]:{}", sshd.port))
        .arg("-f")
        .arg(server.join("known_hosts"))
        .output()
        .unwrap();
    assert!(found.status.success(), "{}", text(&found));

    // 2. What the remote side lacks, all in one line, nothing measured or written there.
    let mut missing = sshd.flags("client");
    missing.extend(strings(&[
        "--dir",
        data.to_str().unwrap(),
        "--fio",
        "/nonexistent/fio",
        "--sysbench",
        "/nonexistent/sysbench",
    ]));
    let out = probe(&home, &missing);
    let line = common::refused_in_one_line(
        &out,
        &[],
        &[
            &format!(
                "remote host {host} has no fio (looked for '/nonexistent/fio'): install it there (apt-get install -y fio)"
            ),
            "no sysbench (looked for '/nonexistent/sysbench')",
        ],
    );
    assert!(line.contains("--skip-cpu"), "{line}");
    assert!(scratch_dirs(&data).is_empty());
    let mut no_dir = sshd.flags("client");
    no_dir.extend(strings(&["--dir", "/nonexistent/dir", "--skip-cpu"]));
    common::refused_in_one_line(
        &probe(&home, &no_dir),
        &[],
        &[&format!(
            "remote host {host} has no directory '/nonexistent/dir'"
        )],
    );

    // 3. Refused login, unreachable host: one line each.
    let mut stranger = sshd.flags("stranger");
    stranger.extend(strings(&["--dir", data.to_str().unwrap()]));
    common::refused_in_one_line(
        &probe(&home, &stranger),
        &[],
        &[&format!("remote host {host} refused the ssh login")],
    );
    let closed = free_port();
    let unreachable = strings(&["--ssh", &format!("127.0.0.1:{closed}"), "--dir", "/tmp"]);
    common::refused_in_one_line(
        &probe(&home, &unreachable),
        &[],
        &[
            &format!("remote host 127.0.0.1:{closed} could not be reached over ssh"),
            "Connection refused",
        ],
    );

    // 4. Ctrl-C during a profile: the remote scratch directory and its fio go.
    let mut long = sshd.flags("client");
    long.extend(strings(&[
        "--dir",
        data.to_str().unwrap(),
        "--skip-cpu",
        "--profiles",
        "seq_write_64k",
        "--runtime-s",
        "60",
        "--size-mib",
        "16",
        "--env",
        "interrupted",
        "--out",
    ]));
    let partial = tmp.path().join("interrupted.json");
    long.push(partial.display().to_string());
    let mut child = Command::new(BIN)
        .arg("probe")
        .args(&long)
        .env("CQLBENCH_HOME", &home)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !common::any_process_with("--output=seq_write_64k.json") {
        assert!(Instant::now() < deadline, "the remote fio never started");
        assert!(child.try_wait().unwrap().is_none(), "the probe ended early");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(scratch_dirs(&data).len(), 1);
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(scratch_dirs(&data).is_empty(), "{:?}", scratch_dirs(&data));
    let deadline = Instant::now() + Duration::from_secs(10);
    while common::any_process_with("--output=seq_write_64k.json") {
        assert!(
            Instant::now() < deadline,
            "the remote fio outlived the interruption"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let partial: Value = serde_json::from_str(&std::fs::read_to_string(&partial).unwrap()).unwrap();
    assert_eq!(partial["complete"], false, "the checks' facts were kept");

    // 5. A local probe and the remote one side by side, each host named.
    let local_json = tmp.path().join("local.json");
    let mut local = strings(&["--dir", data.to_str().unwrap(), "--env", "local", "--out"]);
    local.push(local_json.display().to_string());
    local.extend(strings(&["--profiles", "rand_read_4k", "--skip-cpu"]));
    let out = probe(&home, &local);
    assert!(out.status.success(), "{}", text(&out));
    let out = Command::new(BIN)
        .arg("report")
        .arg(&local_json)
        .arg(&remote_json)
        .env("CQLBENCH_HOME", &home)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    let header = report
        .lines()
        .find(|l| l.contains("local") && l.contains("127.0.0.1"))
        .unwrap_or_else(|| panic!("no probe table with both environments:\n{report}"));
    assert!(header.find("local") < header.find("127.0.0.1"), "{header}");
    let hosts = report
        .lines()
        .find(|l| l.trim_start().starts_with("host "))
        .unwrap_or_else(|| panic!("no host row:\n{report}"));
    assert!(
        hosts.contains(&format!("{hostname} (ssh {}@{host})", Sshd::user())),
        "{hosts}"
    );
    assert_eq!(hosts.matches(hostname.as_str()).count(), 2, "{hosts}");
    let iops = report
        .lines()
        .find(|l| l.trim_start().starts_with("IOPS"))
        .unwrap_or_else(|| panic!("no IOPS row:\n{report}"));
    assert_eq!(
        iops.split_whitespace().count(),
        3,
        "both probes' IOPS: {iops}"
    );

    drop(sshd);
    println!("probe over ssh: {:.1} s", started.elapsed().as_secs_f64());
}
