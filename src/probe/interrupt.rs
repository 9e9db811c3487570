//! SIGINT / SIGTERM while a probe runs: the process-wide flag of [`crate::interrupt`], which
//! the probe polls; it stops its child process and returns [`super::ProbeError::Interrupted`],
//! so the scratch directory's guard removes the test files on the way out.

/// True once SIGINT or SIGTERM arrived.
pub fn interrupted() -> bool {
    crate::interrupt::interrupted()
}
