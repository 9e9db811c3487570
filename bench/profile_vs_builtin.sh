#!/usr/bin/env bash
# Client efficiency of a user profile against the built-in workload with the same row: the
# built-in `stress` (10-byte key, 5 x 34-byte blobs) and workloads/standard1.yaml, each at the
# same fixed rate, write:read 1:1, against the same local cluster, PAIRS times alternately.
# Prints ops per client CPU-second of each run and the ratio profile / built-in.
# Usage: bench/profile_vs_builtin.sh CLUSTER [RATE=4000] [PAIRS=3] [OUT_DIR=/tmp/profile-vs-builtin]
set -euo pipefail
cluster=${1:?usage: bench/profile_vs_builtin.sh CLUSTER [RATE] [PAIRS] [OUT_DIR]}
rate=${2:-4000}
pairs=${3:-3}
dir=${4:-/tmp/profile-vs-builtin}
bin=${CQLBENCH:-target/release/cqlbench}
mkdir -p "$dir"
base=(--cluster "$cluster" --rows 100000 -q)
common=("${base[@]}" --rate "$rate" --duration 30s --warmup 5s)
# The key spaces, written once (rampup) by a run with a token main phase.
"$bin" run stress "${base[@]}" --keyspace pvb_builtin --drop --rate 1000 --ops 100 \
  --out "$dir/rampup-builtin.json" > /dev/null
"$bin" run profile "${base[@]}" --keyspace pvb_profile --drop --rate 1000 --ops 100 \
  --profile workloads/standard1.yaml --profile-ops "ops(insert=1)" \
  --out "$dir/rampup-profile.json" > /dev/null
for i in $(seq 1 "$pairs"); do
  "$bin" run stress "${common[@]}" --keyspace pvb_builtin --skip-rampup --ratio write=1,read=1 \
    --out "$dir/builtin-$i.json" > /dev/null
  "$bin" run profile "${common[@]}" --keyspace pvb_profile --skip-rampup \
    --profile workloads/standard1.yaml --profile-ops "ops(insert=1,read=1)" \
    --out "$dir/profile-$i.json" > /dev/null
done
python3 - "$dir" "$pairs" <<'PY'
import json, sys, statistics
d, pairs = sys.argv[1], int(sys.argv[2])
def eff(path):
    r = json.load(open(path))
    s = [p for p in r["phases"] if p["name"] == "main"][-1]["summary"]
    return s["ops_per_client_cpu_s"], s["errors"], s["ops_per_s"]
rows = []
for i in range(1, pairs + 1):
    b, p = eff(f"{d}/builtin-{i}.json"), eff(f"{d}/profile-{i}.json")
    rows.append(p[0] / b[0])
    print(f"pair {i}: built-in {b[0]:,.0f} ops/client-CPU-s ({b[2]:,.0f} ops/s, {b[1]} errors), "
          f"profile {p[0]:,.0f} ({p[2]:,.0f} ops/s, {p[1]} errors), profile/built-in {p[0]/b[0]:.3f}")
print(f"median profile/built-in: {statistics.median(rows):.3f} "
      f"(the profile costs {100 * (1 / statistics.median(rows) - 1):.1f}% more client CPU per operation)")
PY
