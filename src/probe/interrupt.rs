//! SIGINT / SIGTERM handling while a probe runs: the handler only sets a flag; the probe polls
//! it, stops its child process, and returns [`super::ProbeError::Interrupted`], so the scratch
//! directory's guard removes the test files on the way out.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_signal: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// True once SIGINT or SIGTERM arrived while a guard was installed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Installs the handlers for its lifetime and restores the previous ones on drop.
pub struct InterruptGuard {
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl InterruptGuard {
    pub fn install() -> InterruptGuard {
        INTERRUPTED.store(false, Ordering::SeqCst);
        let mut previous = Vec::new();
        for signal in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: sigaction with a zeroed, then filled, struct and a handler that only
            // touches an atomic; `old` receives the previous disposition.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                libc::sigemptyset(&mut action.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, &action, &mut old) == 0 {
                    previous.push((signal, old));
                }
            }
        }
        InterruptGuard { previous }
    }
}

impl Drop for InterruptGuard {
    fn drop(&mut self) {
        for (signal, old) in &self.previous {
            // SAFETY: restores a disposition previously returned by sigaction.
            unsafe {
                libc::sigaction(*signal, old, std::ptr::null_mut());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_sets_the_flag_instead_of_killing_the_process() {
        let guard = InterruptGuard::install();
        assert!(!interrupted());
        // SAFETY: raising SIGTERM in this process; the guard's handler catches it.
        unsafe {
            libc::raise(libc::SIGTERM);
        }
        assert!(interrupted());
        drop(guard);
        // A new guard starts clean.
        let _g = InterruptGuard::install();
        assert!(!interrupted());
    }
}
