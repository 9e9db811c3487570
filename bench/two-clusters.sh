#!/usr/bin/env bash
# Reference 000's shape with two real clusters that are reached differently: one scenario file,
# two environments on two local clusters (each with its own CA and client certificate, one
# requiring client certificates, each a different data centre name), each environment's
# `connection:` giving what its cluster needs. Throughput in both, latency at 35% of the first
# environment's throughput in both, and one report with a column per environment.
#   bench/two-clusters.sh            (B=path/to/cqlbench to use another build)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-target/debug/cqlbench}
[ -x "$B" ] || cargo build -q
WORK=$(mktemp -d "${TMPDIR:-/tmp}/cqlbench-two.XXXXXX")
export CQLBENCH_HOME=$WORK/home CQLBENCH_CLUSTERS_DIR=$WORK/clusters
trap '$B cluster destroy east >/dev/null 2>&1 || true; $B cluster destroy west >/dev/null 2>&1 || true' EXIT
$B cluster create east --dcs us-east:1 --heap 256M --tls --tls-client-auth --start | tail -1
$B cluster create west --dcs eu-west:1 --heap 256M --tls --start | tail -1
addr() { $B cluster status "$1" | awk '/node1/ { for (i = 1; i <= NF; i++) if ($i ~ /^127\./) { print $i; exit } }'; }
EAST=$(addr east) WEST=$(addr west)
E=$CQLBENCH_CLUSTERS_DIR/east/tls W=$CQLBENCH_CLUSTERS_DIR/west/tls
cat > "$WORK/two.yaml" <<EOF
name: two
description: two clusters reached differently, one report
connection: {timeout: 2s}
environments:
  - name: east
    hosts: [$EAST]
    connection: {dc: us-east, tls-ca: $E/ca.pem, tls-cert: $E/client.pem, tls-key: $E/client-key.pem}
  - name: west
    hosts: [$WEST]
    connection: {dc: eu-west, tls-ca: $W/ca.pem}
steps:
  - throughput: {workload: keyvalue, rf: 1, rows: 20000, concurrency: 32, duration: 20s, warmup: 5s}
  - latency: {workload: keyvalue, rf: 1, rows: 20000, skip-rampup: true, rate: 35%, of: '{throughput@east}', duration: 20s, warmup: 5s}
EOF
echo "== the scenario file"
cat "$WORK/two.yaml"
echo "== dry run"
$B scenario "$WORK/two.yaml" --dry-run --dir "$WORK/out"
echo "== run"
$B scenario "$WORK/two.yaml" --dir "$WORK/out" | grep -vE '^\s+[0-9]+s ' || true
echo "== what each result recorded of its connection"
for f in "$WORK"/out/*/0*.json; do
  python3 - "$f" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["fingerprint"].get("client") or {}
t = r["target"]
print(sys.argv[1].split("/out/")[1], "hosts", t["hosts"], "dc", t["local_dc"],
      "tls ca", (c.get("tls") or {}).get("ca"), "client cert", (c.get("tls") or {}).get("cert"),
      "ops/s %.0f" % r["phases"][-1]["summary"]["all"]["ops_per_s"])
PY
done
echo "== report"
sed -n '/^Runs/,/^Response time (ms, merged histograms) — keyvalue, open/p' "$WORK/out/report.txt" | head -40
echo "results in $WORK"
