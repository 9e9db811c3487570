//! Host characterisation (`cqlbench probe`).
