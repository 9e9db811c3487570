//! Persisted, versioned specs: what the command line builds and the core takes.
