#!/usr/bin/env bash
# The shipped profiles run against one local cluster with --verify (every read compared with
# the generator), then read back whole with `cqlbench verify`. Prints per profile its
# operations, errors by kind, reads compared and mismatches, and verify's figures.
# Usage: bench/profiles_verified.sh CLUSTER [RATE=500] [DURATION=60s] [OUT_DIR=/tmp/profiles-verified]
# Environment: RF (3), CL (QUORUM), ROWS (1000 partitions), PROFILES (the mixes below).
set -euo pipefail
cluster=${1:?usage: bench/profiles_verified.sh CLUSTER [RATE] [DURATION] [OUT_DIR]}
rate=${2:-500}
duration=${3:-60s}
dir=${4:-/tmp/profiles-verified}
bin=${CQLBENCH:-target/release/cqlbench}
mkdir -p "$dir"
profiles=${PROFILES:-"timeseries.yaml:ops(insert=3,latest=1,window=1) collections.yaml:ops(insert=1,by_id=4,by_email=1) lwt.yaml:ops(insert=1,create=1,transfer=2,read=4) counters.yaml:ops(view=4,read=1)"}
for entry in $profiles; do
  file=${entry%%:*}
  mix=${entry#*:}
  name=${file%.yaml}
  "$bin" run profile --cluster "$cluster" --profile "workloads/$file" --profile-ops "$mix" \
    --rf "${RF:-3}" --consistency "${CL:-QUORUM}" --rows "${ROWS:-1000}" --rate "$rate" \
    --duration "$duration" --warmup 5s --drop --verify -q --out "$dir/$name.json" \
    > "$dir/$name.out" 2>&1 || echo "$name: run exited $?"
  "$bin" verify "$dir/$name.json" --consistency "${CL:-QUORUM}" > "$dir/$name.verify.out" 2>&1 \
    || echo "$name: verify exited $?"
done
python3 - "$dir" $profiles <<'PY'
import json, sys
d = sys.argv[1]
for entry in sys.argv[2:]:
    name = entry.split(":")[0][:-5]
    r = json.load(open(f"{d}/{name}.json"))
    phases = {p["name"]: p["summary"] for p in r["phases"] if p.get("summary")}
    m = phases["main"]
    v = r.get("reads_verified", {})
    ver = json.load(open(f"{d}/{name}.verify.json"))
    ramp = phases.get("rampup", {})
    print(f"{name}: rampup {ramp.get('ok', 0):,} ops {ramp.get('errors', 0)} errors; "
          f"main {m['ok']:,} ops {m['ops_per_s']:.0f} ops/s, errors {m['errors']} {m['errors_by_kind']}, "
          f"p99 {m['all']['response']['p99_ms']:.1f} ms")
    print(f"  --verify: {v.get('reads_checked', 0):,} of {v.get('reads_checked', 0) + v.get('reads_unchecked', 0):,} "
          f"reads compared ({v.get('rows_checked', 0):,} rows), {v.get('mismatches', 0)} mismatches")
    print(f"  verify: {ver['present']:,} of {ver['acked_rows']:,} acknowledged rows present, "
          f"{ver['missing']} missing, {ver['different']} different, {ver['unreadable']} unreadable")
PY
