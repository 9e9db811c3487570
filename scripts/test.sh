#!/usr/bin/env bash
# The whole test suite, as CI runs it: set-up, formatting and lint gates, then both test tiers
# (unit and CLI tests; then tests against real Cassandra nodes, fio, Chromium and the
# Kubernetes schemas).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The local Kubernetes' binaries (tests/k8s_real.rs), built from Go modules at the lowest
# priority beside the Rust build and the tests: about 10 min cold on 2 cores, nothing when cached.
# The test runs build.sh too, which waits for this one (a lock) and then finds them all.
mkdir -p target
setsid scripts/k8s/build.sh >target/k8s-build.log 2>&1 &
k8s_build=$!
# Whatever ends this script ends that build too (it and its go commands: its own process group).
trap 'kill -- -"$k8s_build" 2>/dev/null || true' EXIT
cargo fmt --all -- --check
cargo clippy --all-targets --all-features -- -D warnings
# The quickstart's build leaves out the `k8s` and `tls` features: it must build, and lint clean.
cargo clippy --no-default-features --lib --bins -- -D warnings
# Both tiers in one build: the unit and CLI tests (what `cargo test` runs alone) and the tests
# against real Cassandra nodes, Maven, fio, Chromium and kubernetes-validate (every [[test]] of
# Cargo.toml with required-features = ["real"]). Run as two commands, the second rebuilt the
# library and every test under the other feature set. The real tier must be there: a
# Cargo.toml that lost it would pass without it.
real=$(awk '/^\[\[test\]\]/ { name = "" }
  /^name *=/ { gsub(/"/, "", $3); name = $3 }
  /^required-features *= *\["real"\]/ && name != "" { print name }' Cargo.toml)
[ -n "$real" ] || { echo "no real-tier tests found in Cargo.toml" >&2; exit 1; }
# The quickstart's binary: scripts/quickstart.sh builds it without the `k8s` and `tls` features.
# Built here with those features left out and kept aside (the build below relinks
# target/debug/cqlbench with all of them), for the real tier's quickstart test and its one-line
# refusals of what it leaves out (tests/quickstart_build_real.rs).
cargo build --no-default-features --bin cqlbench
cp target/debug/cqlbench target/cqlbench-quickstart
export CQLBENCH_QUICKSTART_BIN="$PWD/target/cqlbench-quickstart"
cargo test --features real
