//! The one cancellation path: SIGINT and SIGTERM set one process-wide flag, which every long
//! step polls — the load engine between operations, the capacity search between steps, a
//! scenario between steps, the probe around its fio and CPU runs — and stops cleanly, keeping
//! what was measured. A second SIGINT or SIGTERM while the first is being handled ends the
//! process at once (exit 1), for a step that does not return.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// The flag, with the handlers installed on first use.
pub fn flag() -> Arc<AtomicBool> {
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // The conditional shutdown first: it exits only when the flag is already set,
            // i.e. on the second signal.
            let _ = signal_hook::flag::register_conditional_shutdown(signal, 1, flag.clone());
            let _ = signal_hook::flag::register(signal, flag.clone());
        }
        flag
    })
    .clone()
}

/// True once SIGINT or SIGTERM arrived (after [`flag`] installed the handlers).
pub fn interrupted() -> bool {
    FLAG.get().is_some_and(|f| f.load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    /// In a child process (the flag is process-wide): a signal sets the flag instead of killing
    /// the process.
    #[test]
    fn a_signal_sets_the_flag_instead_of_killing_the_process() {
        if std::env::var_os("CQLBENCH_INTERRUPT_CHILD").is_some() {
            let f = super::flag();
            assert!(!super::interrupted());
            // SAFETY: raising SIGTERM in this process, whose handler only sets the flag.
            unsafe {
                libc::raise(libc::SIGTERM);
            }
            assert!(f.load(std::sync::atomic::Ordering::Relaxed));
            assert!(super::interrupted());
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "interrupt::tests::a_signal_sets_the_flag_instead_of_killing_the_process",
                "--nocapture",
            ])
            .env("CQLBENCH_INTERRUPT_CHILD", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        assert!(text.contains("1 passed"), "{text}");
    }
}
