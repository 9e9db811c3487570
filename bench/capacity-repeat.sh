#!/usr/bin/env bash
# Runs the same capacity search twice on a fresh 1-node local cluster and prints both
# verdicts and how far apart their highest passing rates are (issue: within 20%).
#   bench/capacity-repeat.sh [WORKLOAD, default keyvalue]
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-keyvalue}
cargo build --release -q
B=target/release/cqlbench
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cqlbench-caprep.XXXXXX")
export CQLBENCH_HOME=$WORK/home CQLBENCH_CLUSTERS_DIR=$WORK/clusters
trap '$B cluster destroy caprep >/dev/null 2>&1 || true' EXIT
$B cluster create caprep -n 1 --heap 512M --start | tail -1
$B run "$W" --cluster caprep --rf 1 --rows 100000 --ops 1 --out "$WORK/load.json" -q >/dev/null
for i in 1 2; do
  start=$(date +%s)
  $B capacity "$W" --cluster caprep --rf 1 --rows 100000 --skip-rampup \
    --start-rate 1000 --factor 1.5 --refine 2 --step 20s --step-warmup 5s \
    --pending-after 15s --settle-timeout 60s -q --out "$WORK/run$i.json" | grep '^capacity:'
  echo "run $i took $(( $(date +%s) - start )) s"
done
python3 - "$WORK" <<'PY'
import json, sys
v = [json.load(open(f"{sys.argv[1]}/run{i}.json"))["verdict"] for i in (1, 2)]
p = [x["highest_passing_rate_per_s"] for x in v]
print(f"highest passing: {p[0]:.0f} and {p[1]:.0f} ops/s; they differ by {100 * abs(p[0] - p[1]) / min(p):.1f}% (target: within 20%)")
PY
