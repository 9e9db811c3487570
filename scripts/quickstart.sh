#!/usr/bin/env bash
# The main job on a fresh machine: set-up, the quickstart build, then `cqlbench quickstart`
# (a local 3-node Cassandra cluster, its status, a write/read check, a quick probe, a throughput
# test, a latency test at 35% of it, tables and an HTML report; stopped at the end).
#
# The build is Cargo.toml's `quick` profile: a fraction of the release build's time, for a run
# whose client uses a few percent of a CPU (bench/README.md, "Build settings"). Benchmarks and
# capacity searches at scale use `cargo build --release`. It leaves out the `k8s` and `tls`
# features (the Kubernetes client, rustls and its C cryptography library: 40% of the build's
# compile time, bench/build_deps.py), which the quickstart does not use; `cqlbench k8s` and
# `--tls-ca` in that binary say so in one line. Maven downloads Cassandra's jars
# while the compiler runs (scripts/prefetch.sh); should that fail, cqlbench fetches them itself.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh run
mkdir -p target
scripts/prefetch.sh >target/prefetch.log 2>&1 &
prefetch=$!
# A failed build leaves no Maven running behind it.
trap 'kill "$prefetch" 2>/dev/null || true' EXIT
cargo build --profile quick --bin cqlbench --no-default-features
if ! wait "$prefetch"; then
  echo "quickstart: prefetching the jars failed (target/prefetch.log); cqlbench fetches them itself" >&2
fi
exec target/quick/cqlbench quickstart "$@"
