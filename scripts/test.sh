#!/usr/bin/env bash
# The whole test suite, as CI runs it: set-up, formatting and lint gates, then both test tiers
# (unit and CLI tests; then tests against real Cassandra nodes, fio, Chromium and the
# Kubernetes schemas).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --all-targets --all-features -- -D warnings
# Both tiers in one build: the unit and CLI tests (what `cargo test` runs alone) and the tests
# against real Cassandra nodes, Maven, fio, Chromium and kubernetes-validate (every [[test]] of
# Cargo.toml with required-features = ["real"]). Run as two commands, the second rebuilt the
# library and every test under the other feature set. The real tier must be there: a
# Cargo.toml that lost it would pass without it.
real=$(awk '/^\[\[test\]\]/ { name = "" }
  /^name *=/ { gsub(/"/, "", $3); name = $3 }
  /^required-features *= *\["real"\]/ && name != "" { print name }' Cargo.toml)
[ -n "$real" ] || { echo "no real-tier tests found in Cargo.toml" >&2; exit 1; }
cargo test --features real
