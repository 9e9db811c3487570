#!/usr/bin/env bash
# The main job on a fresh machine: set-up, a release build, then `cqlbench quickstart`
# (a local 3-node Cassandra cluster, its status, a write/read check, a quick probe, a throughput
# test, a latency test at 35% of it, tables and an HTML report; stopped at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release
exec target/release/cqlbench quickstart "$@"
