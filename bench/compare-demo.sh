#!/usr/bin/env bash
# `cqlbench compare` on real clusters: two runs on the same 1-node cluster (expected: not
# distinguishable), then one on the same node pinned to half the host's CPUs (expected:
# worse). Prints both comparisons. Uses its own cqlbench home and cluster directory.
#   bench/compare-demo.sh [SECONDS per run, default 30]
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-30}
cargo build --release -q
B=target/release/cqlbench
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cqlbench-compare.XXXXXX")
export CQLBENCH_HOME=$WORK/home CQLBENCH_CLUSTERS_DIR=$WORK/clusters
CORES=$(nproc)
HALF=$(( CORES / 2 > 0 ? CORES / 2 : 1 ))
cleanup() { $B cluster destroy full >/dev/null 2>&1 || true; $B cluster destroy half >/dev/null 2>&1 || true; }
trap cleanup EXIT

run() { # cluster out
  $B run keyvalue --cluster "$1" --rf 1 --rows 50000 --skip-rampup --concurrency 64 \
    --duration "${SECS}s" --warmup 5s --env "$1" --out "$WORK/$2.json" -q | grep '^throughput'
}

$B cluster create full -n 1 --heap 512M --start | tail -1
$B run keyvalue --cluster full --rf 1 --rows 50000 --duration 5s --out "$WORK/load.json" -q >/dev/null
run full a1
run full a2
$B cluster stop full >/dev/null
$B cluster create half -n 1 --heap 512M --cpus-per-node "$HALF" --start | tail -1
$B run keyvalue --cluster half --rf 1 --rows 50000 --duration 5s --out "$WORK/load-half.json" -q >/dev/null
run half b1
echo "== same configuration (full vs full)"
$B compare "$WORK/a1.json" "$WORK/a2.json"
echo "== node on $HALF of $CORES CPUs (full vs half)"
$B compare "$WORK/a1.json" "$WORK/b1.json"
echo "results: $WORK"
