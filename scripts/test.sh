#!/usr/bin/env bash
# The whole test suite, as CI runs it: set-up, formatting and lint gates, then every test
# (unit tests, CLI tests through the real binary, tests against real Cassandra nodes).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo test
