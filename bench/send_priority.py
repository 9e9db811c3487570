#!/usr/bin/env python3
"""Does a higher scheduling priority help an open-loop client that shares its CPU with the
node (issue 59)? One local node on CPU 0 kept busy by a closed-loop load from CPU 1; a
fixed-rate keyvalue run on CPU 0, beside the node, is measured at normal priority, at nice -10
and under SCHED_FIFO 10 (every thread of the client inherits it from `nice` or `chrt`), the
variants alternating. Prints send lag p50/p99/max, service and response p99 and the achieved
rate of each run, then the medians per variant. Needs root (a negative nice, a real-time
policy).

    bench/send_priority.py --cqlbench target/release/cqlbench --rate 500 --seconds 20 --repeat 3
"""
import argparse
import importlib.util
import os
import statistics
import subprocess
from pathlib import Path

_spec = importlib.util.spec_from_file_location("bench_send_lag", Path(__file__).with_name("send_lag.py"))
send_lag = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(send_lag)
sh, main_summary, fmt, isolated_home = send_lag.sh, send_lag.main_summary, send_lag.fmt, send_lag.isolated_home

CLUSTER = "prio"
ROWS = 100_000
VARIANTS = {
    "normal": [],
    "nice -10": ["nice", "-n", "-10"],
    "fifo 10": ["chrt", "-f", "10"],
}


def keyvalue(binary, cpu, *extra):
    return ["taskset", "-c", cpu, binary, "run", "keyvalue", "--cluster", CLUSTER, "--rf", 1,
            "--rows", ROWS, "--threads", 1, "--no-metrics", "-q", *extra]


def measure(binary, variant, rate, warmup, seconds, out):
    cmd = VARIANTS[variant] + keyvalue(binary, 0, "--skip-rampup", "--rate", rate,
                                       "--duration", f"{warmup + seconds}s", "--warmup", f"{warmup}s",
                                       "--out", out)
    sh(cmd, stdout=subprocess.DEVNULL)
    s = main_summary(out)
    lag = s.get("send_lag") or {}
    return {
        "lag": (lag.get("p50_ms"), lag.get("p99_ms"), lag.get("max_ms", s.get("max_send_lag_ms"))),
        "serv_p99": s["all"]["service"]["p99_ms"],
        "resp_p99": s["all"]["response"]["p99_ms"],
        "achieved": s.get("achieved_ratio") or 0.0,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cqlbench", required=True, help="the cqlbench binary")
    ap.add_argument("--rate", type=int, default=500, help="the measured client's fixed rate, ops/s")
    ap.add_argument("--seconds", type=int, default=20, help="measured seconds per run")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3, help="runs per variant")
    ap.add_argument("--background", type=int, default=32,
                    help="requests in flight of the closed-loop load that keeps the node busy")
    a = ap.parse_args()
    binary = Path(a.cqlbench).resolve()
    if os.geteuid() != 0:
        raise SystemExit("needs root: a negative nice and SCHED_FIFO are refused otherwise")

    work = isolated_home("cqlbench-prio-")
    background = None
    try:
        sh([binary, "cluster", "create", CLUSTER, "--nodes", 1, "--heap", "1G", "--cpus-per-node", 1])
        sh([binary, "cluster", "start", CLUSTER])
        sh(keyvalue(binary, 1, "--ratio", "write=1", "--ops", 1, "--out", work / "fill.json"),
           stdout=subprocess.DEVNULL)
        total = (a.warmup + a.seconds) * a.repeat * len(VARIANTS) + 120
        bg = keyvalue(binary, 1, "--skip-rampup", "--concurrency", a.background,
                      "--duration", f"{total}s", "--out", work / "background.json")
        print("+", " ".join(str(c) for c in bg), "&", flush=True)
        background = subprocess.Popen([str(c) for c in bg], stdout=subprocess.DEVNULL)
        runs = {v: [] for v in VARIANTS}
        for i in range(a.repeat):
            order = list(VARIANTS) if i % 2 == 0 else list(reversed(VARIANTS))
            for v in order:
                r = measure(binary, v, a.rate, a.warmup, a.seconds, work / f"{v.replace(' ', '')}-{i}.json")
                runs[v].append(r)
                p50, p99, mx = r["lag"]
                print(f"  {v:<9} run {i + 1}: send lag p50 {fmt(p50)} p99 {fmt(p99)} max {fmt(mx)} ms; "
                      f"service p99 {r['serv_p99']:.3f}, response p99 {r['resp_p99']:.3f} ms; "
                      f"achieved {100 * r['achieved']:.2f}%", flush=True)
        print(f"\nclient on the node's CPU at {a.rate} ops/s, node busy with {a.background} in flight "
              f"from CPU 1; medians of {a.repeat}:")
        for v, rs in runs.items():
            med = lambda f: statistics.median(f(r) for r in rs if f(r) is not None)
            print(f"  {v:<9} send lag p50 {med(lambda r: r['lag'][0]):.3f} p99 {med(lambda r: r['lag'][1]):.3f} "
                  f"ms; service p99 {med(lambda r: r['serv_p99']):.3f} ms; response p99 "
                  f"{med(lambda r: r['resp_p99']):.3f} ms; achieved {100 * med(lambda r: r['achieved']):.2f}%")
    finally:
        if background is not None:
            background.terminate()
            background.wait()
        subprocess.run([str(binary), "cluster", "destroy", CLUSTER], check=False)
    # The runs' results are kept, as bench/send_lag.py keeps its own.
    print(f"results in {work}")


if __name__ == "__main__":
    main()
