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
# Second tier: real Cassandra nodes, Maven, fio, Chromium and kubernetes-validate.
cargo test --features real --test cli_cluster --test cli_probe --test cluster_real \
  --test html_chromium --test k8s_validate --test load_real --test scenario_real
