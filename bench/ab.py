#!/usr/bin/env python3
"""A/B of two cqlbench builds: operations per client CPU-second on one local node.

The set-up of bench/load.py (node pinned to CPU 0, client to CPU 1, small rows, RF 1,
ONE, 128 in flight, one client thread, --no-metrics), but the two binaries run in alternating
pairs (A B, B A, ...) against the same warm node, so slow drift of the server hits both alike.
Prints each run, the medians, B's median against A's, and in how many pairs B was ahead.

    git worktree add /tmp/base HEAD~1 && (cd /tmp/base && cargo build --release)
    bench/ab.py /tmp/base/target/release/cqlbench target/release/cqlbench --pairs 8
"""
import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

_spec = importlib.util.spec_from_file_location("bench_load", Path(__file__).with_name("load.py"))
bench_load = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_load)
create_node, warm_node, measured_cqlbench = bench_load.create_node, bench_load.warm_node, bench_load.measured_cqlbench


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="baseline cqlbench binary")
    ap.add_argument("b", help="candidate cqlbench binary")
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--ratio", default="write=1,read=1", help="operation mix (default: 50/50)")
    ap.add_argument("--measure", type=int, default=20, help="measured seconds per run")
    ap.add_argument("--warmup", type=int, default=5, help="unmeasured seconds at the start of each run")
    ap.add_argument("--server-warmup", type=int, default=180,
                    help="seconds of unmeasured load first (a fresh node's throughput still doubles in the "
                         "first few minutes, and client efficiency follows it)")
    a = ap.parse_args()
    bins = {"A": Path(a.a).resolve(), "B": Path(a.b).resolve()}
    for name, path in bins.items():
        if not os.access(path, os.X_OK):
            raise SystemExit(f"{name}: {path} is not an executable file")

    work = Path(tempfile.mkdtemp(prefix="cqlbench-ab-"))
    env = dict(os.environ, CQLBENCH_CLUSTERS_DIR=str(work / "clusters"))
    os.environ.update(env)
    try:
        create_node(bins["B"], "ab", work)
        warm_node(bins["B"], "ab", a.ratio, a.server_warmup, work)
        runs = {"A": [], "B": []}
        for pair in range(a.pairs):
            for name in ("A", "B") if pair % 2 == 0 else ("B", "A"):
                ops_s, per_cpu, rss = measured_cqlbench(bins[name], "ab", a.ratio, a.warmup, a.measure,
                                                        work / f"{name}-{pair}.txt")
                runs[name].append(per_cpu)
                print(f"  pair {pair + 1} {name}: {ops_s:>8.0f} ops/s {per_cpu:>9.0f} "
                      f"ops per client CPU-s  peak RSS {rss / 2**20:.1f} MiB", flush=True)
        med = {k: statistics.median(v) for k, v in runs.items()}
        per_pair = [b / x for x, b in zip(runs["A"], runs["B"])]
        print(f"\n{a.ratio}: A {med['A']:.0f}, B {med['B']:.0f} ops per client CPU-s (medians of {a.pairs}); "
              f"B/A of the medians {med['B'] / med['A']:.3f}, median of the per-pair B/A "
              f"{statistics.median(per_pair):.3f}; B ahead in {sum(r > 1 for r in per_pair)} of {a.pairs} pairs")
    finally:
        subprocess.run([str(bins["B"]), "cluster", "destroy", "ab"], env=env)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
