//! Signals into cancellation: SIGINT and SIGTERM cancel the command's [`Cancel`] token, which
//! every long step polls — the load engine between operations, the capacity search between
//! steps, a scenario between steps, the probe around its fio and CPU runs — and stops
//! cleanly, keeping what was measured. A second SIGINT or SIGTERM while the first is being
//! handled ends the process at once (exit 1), for a step that does not return.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use crate::cancel::Cancel;

static TOKEN: OnceLock<Cancel> = OnceLock::new();
/// Which signals arrived (SIGINT, SIGTERM), for the exit code.
static SEEN: OnceLock<[Arc<AtomicBool>; 2]> = OnceLock::new();

/// The process's token, cancelled by SIGINT and SIGTERM (handlers installed on first use).
pub fn token() -> Cancel {
    TOKEN
        .get_or_init(|| {
            let cancel = Cancel::new();
            let flag: Arc<AtomicBool> = cancel.flag();
            let seen = SEEN.get_or_init(Default::default);
            for (signal, seen) in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM]
                .into_iter()
                .zip(seen)
            {
                // The conditional shutdown first: it exits only when the flag is already set,
                // i.e. on the second signal.
                let _ = signal_hook::flag::register_conditional_shutdown(signal, 1, flag.clone());
                let _ = signal_hook::flag::register(signal, seen.clone());
                let _ = signal_hook::flag::register(signal, flag.clone());
            }
            cancel
        })
        .clone()
}

/// The exit code of a command a signal interrupted: 128 + the signal's number (130 for
/// SIGINT, 143 for SIGTERM), as a shell reports a process the signal ended; `None` when none
/// arrived.
pub fn exit_code() -> Option<u8> {
    let seen = SEEN.get()?;
    if seen[0].load(Ordering::Relaxed) {
        Some(128 + signal_hook::consts::SIGINT as u8)
    } else if seen[1].load(Ordering::Relaxed) {
        Some(128 + signal_hook::consts::SIGTERM as u8)
    } else {
        None
    }
}

/// True once SIGINT or SIGTERM arrived (after [`token`] installed the handlers).
pub fn interrupted() -> bool {
    TOKEN
        .get()
        .is_some_and(|c| c.flag().load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    /// In a child process (the flag is process-wide): a signal sets the flag instead of killing
    /// the process.
    #[test]
    fn a_signal_sets_the_flag_instead_of_killing_the_process() {
        if std::env::var_os("CQLBENCH_INTERRUPT_CHILD").is_some() {
            let f = super::token().flag();
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
                "cli::signals::tests::a_signal_sets_the_flag_instead_of_killing_the_process",
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
