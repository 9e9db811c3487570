#!/usr/bin/env bash
# Two shards of one run against a local cluster, shard 1 in a cgroup v1 CPU quota of
# QUOTA_PCT% of one CPU; prints the merged result (which names the starved shard).
# Usage: bench/starved_shard.sh CLUSTER [QUOTA_PCT=4] [OUT_DIR=/tmp/starved]   (root, cgroup v1)
set -euo pipefail
cluster=${1:?usage: bench/starved_shard.sh CLUSTER [QUOTA_PCT] [OUT_DIR]}
pct=${2:-4}
dir=${3:-/tmp/starved}
bin=${CQLBENCH:-target/release/cqlbench}
cg=/sys/fs/cgroup/cpu/cqlbench-starved-$$
mkdir -p "$dir" "$cg"
trap 'rmdir "$cg" 2>/dev/null || true' EXIT
echo 100000 > "$cg/cpu.cfs_period_us"
echo $((pct * 1000)) > "$cg/cpu.cfs_quota_us"
id=starved-$(date +%s)
common=(run keyvalue --cluster "$cluster" --rows 100000 --rate 4000 --duration 30s --warmup 5s
  --run-id "$id" -q)
"$bin" "${common[@]}" --shard 0/2 --out "$dir/shard-0.json" > "$dir/shard-0.log" 2>&1 &
p0=$!
# Shard 1 moves itself into the cgroup, then becomes cqlbench.
sh -c 'echo $$ > "$0/cgroup.procs"; shift; exec "$@"' "$cg" -- "$bin" "${common[@]}" \
  --shard 1/2 --out "$dir/shard-1.json" > "$dir/shard-1.log" 2>&1 &
p1=$!
wait $p0
wait $p1
"$bin" merge "$dir/shard-0.json" "$dir/shard-1.json" --out "$dir/run.json"
