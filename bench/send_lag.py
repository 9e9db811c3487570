#!/usr/bin/env python3
"""Send lag (issue 38): how late an open-loop client sends against its schedule, and how much
of the response time that lateness is, for two builds of cqlbench side by side.

Set-up: one local Cassandra node pinned to CPU 0 (as bench/load.py), the client pinned to
CPU 1 (taskset), key-value rows, RF 1, one client thread, --no-metrics. For each rate (1,000
and 2,000 ops/s, and --near-capacity, default 80% of a closed-loop run's throughput) each
binary runs `cqlbench run keyvalue --rate R` for --warmup + --seconds seconds, alternating
which goes first; the figures are the main phase's summary in each result file:

- response p50/p99: from the intended start (what a user would see at that offered rate);
- service p50/p99: from the actual send (the cluster and the driver);
- send lag p50/p99/max: actual send − intended start. Builds before issue 38 recorded only
  the maximum, and only of operations sent late at their claim ("-" for their percentiles);
- ops per client CPU-s: the client's cost (higher is cheaper).

    bench/send_lag.py --old /tmp/base-sendlag/target/release/cqlbench \\
                      --new target/release/cqlbench --seconds 20

With --windows (e.g. 0s,0.25ms,1ms,2ms) the new binary also runs at each rate with each
`--send-window`, and the script first prints the floor: the CPU one wake-up of a bare
sleeping thread costs on CPU 1 (a loop of absolute sleeps 250 µs apart), which an on-time
send at a light rate pays at least once per operation:

    bench/send_lag.py --old A --new B --rates 1000,4000 --windows 0s,0.25ms,1ms,2ms

The node's cache of Cassandra jars is the default home's (linked into a home of its own under
the work directory); the cluster is destroyed at the end.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT_HOME = Path(os.environ.get("CQLBENCH_HOME") or Path.home() / ".local" / "share" / "cqlbench")
ROWS = 100_000
CLUSTER = "sendlag"


def sh(cmd, **kw):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def keyvalue(binary, *extra, pin=True):
    cmd = ["taskset", "-c", "1"] if pin else []
    return cmd + [binary, "run", "keyvalue", "--cluster", CLUSTER, "--rf", 1, "--rows", ROWS,
                  "--threads", 1, "--no-metrics", "-q", *extra]


def isolated_home(prefix):
    """A work directory with a cqlbench home of its own (the default home's jar cache linked in)
    and its clusters directory, both set in the environment for every command after it."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    home = work / "home"
    home.mkdir()
    if (DEFAULT_HOME / "cache").exists():
        (home / "cache").symlink_to(DEFAULT_HOME / "cache")
    os.environ.update(CQLBENCH_HOME=str(home), CQLBENCH_CLUSTERS_DIR=str(work / "clusters"))
    return work


def main_summary(path):
    return next(p for p in json.loads(Path(path).read_text())["phases"] if p["name"] == "main")["summary"]


def measure(binary, rate, warmup, seconds, out, *extra):
    sh(keyvalue(binary, "--skip-rampup", "--rate", rate, "--duration", f"{warmup + seconds}s",
                "--warmup", f"{warmup}s", "--out", out, *extra), stdout=subprocess.DEVNULL)
    return figures(out)


def figures(out):
    """A fixed-rate run's figures from its result file: response and service p50/p99, send lag
    p50/p99/max, the achieved share of the rate, ops per client CPU-second."""
    s = main_summary(out)
    lag = s.get("send_lag")
    return {
        "resp": (s["all"]["response"]["p50_ms"], s["all"]["response"]["p99_ms"]),
        "serv": (s["all"]["service"]["p50_ms"], s["all"]["service"]["p99_ms"]),
        "lag": (lag["p50_ms"], lag["p99_ms"], lag["max_ms"]) if lag else (None, None, s["max_send_lag_ms"]),
        "achieved": s.get("achieved_ratio") or 0.0,
        "ops_per_cpu": s["ops_per_client_cpu_s"],
    }


WAKE_LOOP = """
import resource, sys, time
gap, n = 250e-6, 20000
t = time.monotonic()
r0 = resource.getrusage(resource.RUSAGE_SELF)
for _ in range(n):
    t += gap
    d = t - time.monotonic()
    if d > 0:
        time.sleep(d)
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(((r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)) / n * 1e6)
"""


def wake_cost_us():
    """CPU of one wake-up of a thread that sleeps until an absolute deadline, on CPU 1."""
    out = subprocess.run(["taskset", "-c", "1", sys.executable, "-c", WAKE_LOOP], check=True,
                         capture_output=True, text=True).stdout
    return float(out)


def fmt(v):
    return "-" if v is None else f"{v:.3f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", required=True, help="cqlbench binary before the change")
    ap.add_argument("--new", required=True, help="cqlbench binary after the change")
    ap.add_argument("--seconds", type=int, default=20, help="measured seconds per run")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rates", default="1000,2000", help="light rates, ops/s")
    ap.add_argument("--near-capacity", type=float,
                    help="a rate near capacity (default: 80%% of a closed-loop run's ops/s)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--windows", help="--send-window values the new binary also runs with, e.g. 0s,1ms")
    a = ap.parse_args()
    old, new = Path(a.old).resolve(), Path(a.new).resolve()

    work = isolated_home("cqlbench-sendlag-")
    try:
        sh([new, "cluster", "create", CLUSTER, "--nodes", 1, "--heap", "1G", "--cpus-per-node", 1])
        sh([new, "cluster", "start", CLUSTER])
        # The rows, once; then unmeasured load (JIT, memtables) and the node's closed-loop rate.
        sh(keyvalue(new, "--ops", 1, "--out", work / "prefill.json"), stdout=subprocess.DEVNULL)
        sh(keyvalue(new, "--skip-rampup", "--concurrency", 128, "--duration", "30s", "--warmup", "10s",
                    "--out", work / "closed.json"), stdout=subprocess.DEVNULL)
        closed = main_summary(work / "closed.json")["ops_per_s"]
        near = a.near_capacity or round(0.8 * closed, -2)
        print(f"closed loop (128 in flight): {closed:.0f} ops/s; near capacity: {near:.0f} ops/s", flush=True)
        rates = [float(r) for r in a.rates.split(",")] + [near]

        if a.windows:
            print(f"one wake-up of a sleeping thread on CPU 1: {wake_cost_us():.1f} us of CPU", flush=True)
        rows = []
        for rate in rates:
            for rep in range(a.repeat):
                order = [("old", old), ("new", new)] if rep % 2 == 0 else [("new", new), ("old", old)]
                for name, binary in order:
                    m = measure(binary, rate, a.warmup, a.seconds, work / f"{name}-{rate:.0f}-{rep}.json")
                    rows.append((rate, name, m))
                    print(f"  {rate:>7.0f} {name}: response p50 {m['resp'][0]:.3f} p99 {m['resp'][1]:.3f}  "
                          f"service p50 {m['serv'][0]:.3f} p99 {m['serv'][1]:.3f}  send lag p50 {fmt(m['lag'][0])} "
                          f"p99 {fmt(m['lag'][1])} max {fmt(m['lag'][2])} ms  achieved {m['achieved'] * 100:.2f}%  "
                          f"{m['ops_per_cpu']:.0f} ops/CPU-s", flush=True)

                for w in (a.windows.split(",") if a.windows else []):
                    name = f"new, window {w}"
                    out = work / f"window-{w}-{rate:.0f}-{rep}.json"
                    m = measure(new, rate, a.warmup, a.seconds, out, "--send-window", w)
                    rows.append((rate, name, m))
                    print(f"  {rate:>7.0f} {name}: response p50 {m['resp'][0]:.3f}  service p50 {m['serv'][0]:.3f}  "
                          f"send lag p50 {fmt(m['lag'][0])} p99 {fmt(m['lag'][1])} ms  "
                          f"{m['ops_per_cpu']:.0f} ops/CPU-s", flush=True)

        print("\n| rate | build | response p50 / p99 | service p50 / p99 | send lag p50 / p99 / max | "
              "achieved | ops per client CPU-s |")
        print("|---|---|---|---|---|---|---|")
        for rate, name, m in rows:
            print(f"| {rate:.0f} | {name} | {m['resp'][0]:.3f} / {m['resp'][1]:.3f} | "
                  f"{m['serv'][0]:.3f} / {m['serv'][1]:.3f} | {fmt(m['lag'][0])} / {fmt(m['lag'][1])} / "
                  f"{fmt(m['lag'][2])} | {m['achieved'] * 100:.2f}% | {m['ops_per_cpu']:.0f} |")
    finally:
        subprocess.run([str(new), "cluster", "destroy", CLUSTER], check=False)
    print(f"results in {work}")


if __name__ == "__main__":
    sys.exit(main())
