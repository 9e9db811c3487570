#!/usr/bin/env bash
# Two sets of three capacity searches on a 1-node local cluster, the second with the node held
# to half this host's CPUs (--cpus-per-node), compared with `compare` and its capacity gate;
# then an A/A pair (the first set against itself split). Prints each verdict, the comparisons
# and their exit codes.
#   bench/capacity-compare.sh            (B=path/to/cqlbench to use another build)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-target/debug/cqlbench}
[ -x "$B" ] || cargo build -q
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cqlbench-capcmp.XXXXXX")
export CQLBENCH_HOME=$WORK/home CQLBENCH_CLUSTERS_DIR=$WORK/clusters
trap '$B cluster destroy full >/dev/null 2>&1 || true; $B cluster destroy half >/dev/null 2>&1 || true' EXIT
CPUS=$(nproc)
search() { # CLUSTER OUT
  $B capacity keyvalue --cluster "$1" --rf 1 --rows 50000 --skip-rampup \
    --start-rate 1000 --factor 1.5 --refine 1 --step 10s --step-warmup 3s \
    --pending-after 5s --settle-timeout 30s -q --out "$2" | grep '^capacity:' || true
}
for set in full half; do
  cpus=$CPUS; [ $set = half ] && cpus=$(( CPUS / 2 ))
  $B cluster create $set -n 1 --heap 512M --cpus-per-node "$cpus" --start | tail -1
  $B run keyvalue --cluster $set --rf 1 --rows 50000 --ops 1 --out "$WORK/load-$set.json" -q >/dev/null
  # A warm JIT first: on a fresh node, searches in a row climb as it warms (750, 1,872 and
  # 5,095 ops/s in a first version of this script without this).
  $B throughput keyvalue --cluster $set --rf 1 --rows 50000 --skip-rampup --duration 90s \
    --out "$WORK/warm-$set.json" -q >/dev/null
  mkdir -p "$WORK/$set"
  for i in 1 2 3; do
    start=$(date +%s)
    echo "$set search $i: $(search $set "$WORK/$set/s$i.json") ($(( $(date +%s) - start )) s)"
  done
  $B cluster stop $set >/dev/null
done
mkdir -p "$WORK/aa1" "$WORK/aa2"
cp "$WORK/full/s1.json" "$WORK/aa1/"; cp "$WORK/full/s2.json" "$WORK/aa2/"
set +e
echo "== compare full half (sets of three)"
$B compare "$WORK/full" "$WORK/half" --fail-if 'capacity < -10%'; echo "exit $?"
echo "== compare one search a side"
$B compare "$WORK/full/s1.json" "$WORK/half/s1.json" --fail-if 'capacity < -10%'; echo "exit $?"
echo "== compare A/A (two searches of the full node)"
$B compare "$WORK/aa1/s1.json" "$WORK/aa2/s2.json" --fail-if 'capacity < -10%'; echo "exit $?"
echo "results in $WORK"
