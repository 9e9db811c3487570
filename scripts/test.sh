#!/usr/bin/env bash
# The whole test suite, as CI runs it: set-up, formatting and lint gates, then both test tiers
# (unit and CLI tests; then tests against real Cassandra nodes, fio, Chromium and the
# Kubernetes schemas).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --all-targets --all-features -- -D warnings
# First tier: pure logic and CLI tests without a JVM, fio or Chromium (what `cargo test` runs).
cargo test
# Second tier: real Cassandra nodes, Maven, fio, Chromium and kubernetes-validate: every
# [[test]] of Cargo.toml with required-features = ["real"] (the one list of them).
real=$(awk '/^\[\[test\]\]/ { name = "" }
  /^name *=/ { gsub(/"/, "", $3); name = $3 }
  /^required-features *= *\["real"\]/ && name != "" { printf "--test %s ", name }' Cargo.toml)
[ -n "$real" ] || { echo "no real-tier tests found in Cargo.toml" >&2; exit 1; }
# shellcheck disable=SC2086 # one word per flag
cargo test --features real $real
