//! Servers a test starts itself (a node exporter, Prometheus, sshd): a free loopback port, a
//! child process killed and reaped by its PID when dropped (a failing test too), and CPU
//! work of the test's own, for checks that need the host to be busy.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A free TCP port on the loopback (bound, then let go).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A fresh ed25519 key pair at `path` (and `path.pub`), without a passphrase.
pub fn keygen(path: &Path) {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .output()
        .expect("ssh-keygen (apt-get install -y openssh-client)");
    assert!(out.status.success(), "{out:?}");
}

/// A child process this test started, killed and reaped when dropped (a failing test too).
pub struct Reap(pub Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A server process this test started, its stderr in `log`.
pub struct Daemon {
    pub child: Reap,
    pub name: String,
    pub log: PathBuf,
}

impl Daemon {
    /// Starts `binary` with `args`; `install` names the package that provides it.
    pub fn start(binary: &str, args: &[String], log: &Path, install: &str) -> Daemon {
        let child = Command::new(binary)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::from(std::fs::File::create(log).unwrap()))
            .spawn()
            .unwrap_or_else(|e| {
                panic!("{binary} did not start ({e}): apt-get install -y {install}")
            });
        Daemon {
            child: Reap(child),
            name: binary.to_string(),
            log: log.to_path_buf(),
        }
    }

    /// Waits until `ready` holds, failing with the server's log if it exits or `within`
    /// passes.
    pub fn wait_until(&mut self, within: Duration, ready: impl Fn() -> bool) {
        let deadline = Instant::now() + within;
        while !ready() {
            if let Some(status) = self.child.0.try_wait().unwrap() {
                let log = std::fs::read_to_string(&self.log).unwrap_or_default();
                panic!("{} exited ({status}):\n{log}", self.name);
            }
            assert!(Instant::now() < deadline, "{} never got ready", self.name);
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops the server and checks that its PID is gone.
    pub fn stop(self) {
        let pid = self.child.0.id();
        drop(self);
        assert!(
            !Path::new(&format!("/proc/{pid}/stat")).exists(),
            "PID {pid} is still running"
        );
    }
}

/// One thread of this test's own spinning until dropped: a host reading taken while it runs
/// has user CPU time to show, however quiet the rest of the machine is.
pub struct BusyCpu {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl BusyCpu {
    pub fn start() -> BusyCpu {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut x = 0u64;
            while !flag.load(Ordering::Relaxed) {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
            x
        });
        BusyCpu {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for BusyCpu {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
