#!/usr/bin/env python3
"""Fixed-rate load against latte 0.29 (issue 59): client CPU, latency and send lag at the same
offered rates, with the node's own coordinator latency beside them, in one run.

Set-up as bench/load.py: one local Cassandra node pinned to CPU 0, each client pinned to CPU 1,
small rows (10-byte key, five 20-byte values), RF 1, consistency ONE, 50/50 writes and reads,
one client thread, the node warmed by --server-warmup seconds of closed-loop load first. Then,
for each rate and --repeat times, alternating which tool goes first:

- latte:    `latte run bench/latte-small-rows.rn -f write:1,read:1 -r RATE -t 1 -p 128`
- cqlbench: `cqlbench run stress --ratio write=1,read=1 --rate RATE --threads 1 --no-metrics`,
            on time and with each --send-window of --windows.

Each run lasts --warmup + --seconds; client CPU is utime+stime after the warmup (bench/load.py's
measured_run), operations are each tool's own count for its measured window. Printed per run:
ops per client CPU-second, achieved rate, p50/p90/p99 (cqlbench: service time, from the send,
as latte measures, per operation kind as latte reports per function), cqlbench's send lag
p50/p99/max, and the coordinator latency the node reported over cqlbench's main phase (from
its result; Cassandra 4.1 and later serve it in whole milliseconds). A closed-loop run of each
tool (128 in flight) gives the ceiling. The summary compares with issue 59's targets: cqlbench
≥ 3× latte's ops per client CPU-s at the same rate and within 1.5× of its own closed loop, send
lag p50 ≤ 20 µs and p99 ≤ 200 µs, achieved within 0.5 %.

    bench/rate_vs_latte.py                                  # 1,000 and 4,000 ops/s, ~12 min
    bench/rate_vs_latte.py --rates 4000 --windows 1ms --repeat 1 --seconds 15
    bench/rate_vs_latte.py --cqlbench /tmp/cqlbench    # a binary built before, not rebuilt
    bench/rate_vs_latte.py --version 4.0.19 --server-view --rates 2000 --windows ''   # the node as referee
    bench/rate_vs_latte.py --version 4.0.19 --server-view --wire --windows 1ms     # and the wire

With --server-view, each latte run has a cqlbench run of one read a second beside it over the
same window, whose result carries the node's coordinator latency of latte's operations; on a
4.0 node (--version 4.0.x: microseconds) that referees the two clients' medians.

With --wire, each run's CQL packets on the loopback are captured (bench/wire.py: dumpcap on CPU
0, decoded by tshark's CQL dissector): the wire's latency of the same operations, request packet
to result packet, which neither client's own timing is in, and how the client spaced its sends
(a --server-view observer's one read a second is among them).

latte is found as bench/load.py finds it (PATH, then <cqlbench home>/tools/latte/bin, else
`cargo install latte-cli --version 0.29.0` there). The cluster is destroyed at the end.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load as L  # noqa: E402  (bench/load.py: the node, latte and the CPU measurement)
import wire as W  # noqa: E402  (bench/wire.py: the packets' view of the same operations)

CLUSTER = "vslatte"
# The keyspace bench/latte-small-rows.rn creates its table in.
LATTE_KEYSPACE = "latte_bench"


def latte_figures(text):
    """(requests, {function: {percentile: ms}}) from latte's text report: the Requests count and
    each function's CYCLE LATENCY section (latte 0.29 reports the percentiles per function)."""
    requests = L.latte_requests(text)
    by_fn, current = {}, None
    for line in text.splitlines():
        head = re.search(r"CYCLE LATENCY for (\w+)", line)
        if head:
            current = by_fn.setdefault(head.group(1), {})
            continue
        m = re.match(r"\s*(Min|Max|\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)", line)
        if current is not None and m:
            current[m.group(1)] = float(m.group(2))
        elif current and "═" in line:
            current = None
    if not by_fn:
        sys.exit("could not find latte's CYCLE LATENCY sections:\n" + text[-2000:])
    return requests, by_fn


def server_of(result):
    """The node's coordinator p50/p99 and step (ms) per kind, from a cqlbench result."""
    server = {}
    for row in result.get("server_latency", []):
        if row["ops"] > 0 and row["op"] in ("read", "write"):
            server[row["op"]] = (row["p50_ms"], row["p99_ms"], row.get("resolution_ms", 0.0))
    return server


def observer(a, work, tag):
    """A cqlbench run of one read a second of latte's table beside a latte run, over the same
    window: it reads the node's coordinator tables when its main phase starts and ends, so its
    result carries the node's view of latte's operations (its own 1 op/s is noise beside them; the tables' decaying
    reservoir also remembers the runs before, with less weight)."""
    res = work / f"observer-{tag}.json"
    # latte's table (the same `standard1` shape in the script's own keyspace): the node's tables
    # are read per table, and cqlbench's own table would show cqlbench's runs.
    cmd = L.stress(L.CQLBENCH, CLUSTER, "read=1", "--keyspace", LATTE_KEYSPACE, "--skip-rampup",
                   "--rate", 1, "--threads", 1,
                   "--duration", f"{a.warmup + a.seconds}s", "--warmup", f"{a.warmup}s", "--out", res,
                   "-q", "--no-metrics")
    return subprocess.Popen([str(c) for c in cmd], stdout=subprocess.DEVNULL), res


def wired(a, work, tag, run):
    """`run()`, with the loopback's CQL packets captured around it when --wire is given: its
    result and the wire's figures of the requests sent over the measured window (the first
    second after the warmup and the last half second left out: connecting, draining)."""
    if not a.wire:
        return run(), None
    path = work / f"wire-{tag}.pcapng"
    with W.Capture(path):
        start = time.time()
        result = run()
        end = time.time()
    figures = W.figures(path, start + a.warmup + 1, end - 0.5)
    path.unlink()
    return result, figures


def run_latte(latte, rate, a, work, tag):
    out = work / f"latte-{tag}.txt"
    cmd = ["taskset", "-c", "1", latte, "run", L.LATTE_SCRIPT, "-f", "write:1,read:1",
           "-d", f"{a.seconds}s", "-w", f"{a.warmup}s", "-t", 1, "-p", 128, "--consistency", "ONE",
           "127.0.0.1", "-q"]
    if rate:
        cmd[6:6] = ["-r", int(rate)]
    watch = observer(a, work, tag) if a.server_view else None
    (cpu, _, text), wire = wired(a, work, tag, lambda: L.measured_run(cmd, a.warmup, out))
    server = {}
    if watch:
        watch[0].wait()
        server = server_of(json.loads(watch[1].read_text()))
    ops, by_fn = latte_figures(text)
    pct = {op: (f.get("50"), f.get("90"), f.get("99")) for op, f in by_fn.items()}
    return {"ops_per_cpu": ops / cpu, "achieved": (ops / a.seconds / rate) if rate else None,
            "ops_s": ops / a.seconds, "pct": pct, "server": server, "wire": wire}


def run_cqlbench(rate, window, a, work, tag):
    res = work / f"cqlbench-{tag}.json"
    load = ["--rate", int(rate)] if rate else ["--concurrency", 128]
    if window:
        load += ["--send-window", window]
    cmd = L.stress(L.CQLBENCH, CLUSTER, "write=1,read=1", "--skip-rampup", *load, "--threads", 1,
                   "--duration", f"{a.warmup + a.seconds}s", "--warmup", f"{a.warmup}s", "--out", res,
                   "-q", "--no-metrics")
    (cpu, _, _), wire = wired(a, work, tag, lambda: L.measured_run(cmd, a.warmup, work / f"cqlbench-{tag}.txt"))
    result = json.loads(res.read_text())
    s = next(p for p in result["phases"] if p["name"] == "main")["summary"]
    ops = s["ok"] + s["errors"]
    lag = s.get("send_lag") or {}
    pct = {op: (v["service"]["p50_ms"], v["service"]["p90_ms"], v["service"]["p99_ms"])
           for op, v in s["by_op"].items()}
    resp = s["all"]["response"]
    server = server_of(result)
    return {"ops_per_cpu": ops / cpu, "achieved": s.get("achieved_ratio"), "ops_s": ops / s["measured_s"],
            "pct": pct, "resp": (resp["p50_ms"], resp["p90_ms"], resp["p99_ms"]),
            "lag": (lag.get("p50_ms"), lag.get("p99_ms"), lag.get("max_ms")), "server": server, "wire": wire}


def ms(v):
    return "-" if v is None else f"{v:.3f}"


def pct_text(pct):
    return " ".join(f"{op[0]} {ms(v[0])}/{ms(v[1])}/{ms(v[2])}" for op, v in sorted(pct.items()))


def server_text(server):
    def one(v):
        p50, p99, step = v
        below = step > 0 and p50 < step / 2
        return f"{'<' + format(step / 2, 'g') if below else format(p50, 'g')}/{p99:g}"
    return " ".join(f"{op} {one(v)}" for op, v in sorted(server.items())) or "-"


def wire_cells(w):
    if not w:
        return " - | - |"
    return (f" {w['wire'][0]:.3f} / {w['wire'][1]:.3f} / {w['wire'][2]:.3f} | "
            f"{w['gap_us'][1]:.0f} µs, {w['together'] * 100:.0f}% |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rates", default="1000,4000", help="offered rates, ops/s")
    ap.add_argument("--windows", default="1ms,2ms", help="--send-window values cqlbench also runs with ('' for none)")
    ap.add_argument("--seconds", type=int, default=20, help="measured seconds per run")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--server-warmup", type=int, default=60)
    ap.add_argument("--latte", help="path of a latte 0.29 binary")
    ap.add_argument("--cqlbench", help="a cqlbench release binary to measure (default: build target/release)")
    ap.add_argument("--version", help="the node's Cassandra version (default cqlbench's; 4.0.x serves "
                                      "its coordinator latency in microseconds, 4.1 and later in whole ms)")
    ap.add_argument("--wire", action="store_true",
                    help="capture the loopback's CQL packets of each run (dumpcap, tshark): the wire's "
                         "latency of the same operations and how the client spaced its sends")
    ap.add_argument("--server-view", action="store_true",
                    help="beside each latte run, a 1 op/s cqlbench run that records the node's "
                         "coordinator latency over latte's window")
    a = ap.parse_args()
    rates = [float(r) for r in a.rates.split(",")]
    windows = [w for w in a.windows.split(",") if w]
    if a.wire:
        W.ensure_tools()

    if a.cqlbench:
        L.CQLBENCH = Path(a.cqlbench).resolve()
    else:
        L.sh(["cargo", "build", "--release", "--quiet"], cwd=L.ROOT)
    latte = L.find_latte(a.latte)
    work = Path(tempfile.mkdtemp(prefix="cqlbench-vslatte-"))
    os.environ["CQLBENCH_CLUSTERS_DIR"] = str(work / "clusters")
    rows = []

    def record(rate, tool, m):
        rows.append((rate, tool, m))
        lag = m.get("lag", (None, None, None))
        print(f"  {('closed' if not rate else f'{rate:.0f}'):>7} {tool:<16} {m['ops_per_cpu']:>8.0f} ops/CPU-s  "
              f"{m['ops_s']:>7.0f} ops/s  p50/p90/p99 {pct_text(m['pct'])} ms  "
              f"send lag {ms(lag[0])}/{ms(lag[1])}/{ms(lag[2])}  server {server_text(m.get('server', {}))}"
              + (f"  {W.text(m['wire'])}" if a.wire else ""), flush=True)

    try:
        L.create_node(L.CQLBENCH, CLUSTER, work, a.version)
        L.sh([latte, "schema", L.LATTE_SCRIPT, "127.0.0.1"], stdout=subprocess.DEVNULL, cwd=work)
        L.sh(["taskset", "-c", "1", latte, "load", L.LATTE_SCRIPT, "-t", 1, "--concurrency", 128, "127.0.0.1", "-q"],
             stdout=subprocess.DEVNULL, cwd=work)
        L.warm_node(L.CQLBENCH, CLUSTER, "write=1,read=1", a.server_warmup, work)

        record(None, "latte", run_latte(latte, None, a, work, "closed"))
        record(None, "cqlbench", run_cqlbench(None, None, a, work, "closed"))
        for rate in rates:
            for rep in range(a.repeat):
                tools = [("latte", None)] + [("cqlbench", None)] + [("cqlbench", w) for w in windows]
                for tool, w in (tools if rep % 2 == 0 else list(reversed(tools))):
                    tag = f"{rate:.0f}-{rep}-{w or 'none'}"
                    m = run_latte(latte, rate, a, work, tag) if tool == "latte" else run_cqlbench(rate, w, a, work, tag)
                    record(rate, f"{tool}{', window ' + w if w else ''}", m)

        print("\n| rate | client | ops per client CPU-s | achieved | read (r), write (w) p50/p90/p99 ms | "
              "send lag p50 / p99 / max ms | "
              "node's coordinator p50/p99 ms |" + (" wire p50/p90/p99 ms | sends p50 apart, within 50 µs |" if a.wire else ""))
        print("|---|---|---|---|---|---|---|" + ("---|---|" if a.wire else ""))
        for rate, tool, m in rows:
            lag = m.get("lag", (None, None, None))
            ach = "-" if m["achieved"] is None else f"{m['achieved'] * 100:.2f}%"
            print(f"| {'closed' if not rate else f'{rate:.0f}'} | {tool} | {m['ops_per_cpu']:.0f} | {ach} | "
                  f"{pct_text(m['pct'])} | {ms(lag[0])} / {ms(lag[1])} / {ms(lag[2])} | "
                  f"{server_text(m.get('server', {}))} |" + (wire_cells(m["wire"]) if a.wire else ""))

        def median(tool, rate):
            v = sorted(m["ops_per_cpu"] for r, t, m in rows if t == tool and r == rate)
            return v[len(v) // 2] if v else None

        closed = median("cqlbench", None)
        print("\nAgainst issue 59's targets (medians):")
        for rate in rates:
            lt = median("latte", rate)
            for tool in ["cqlbench"] + [f"cqlbench, window {w}" for w in windows]:
                c = median(tool, rate)
                runs = [m for r, t, m in rows if t == tool and r == rate]
                lag50 = max((m["lag"][0] or 0) for m in runs)
                lag99 = max((m["lag"][1] or 0) for m in runs)
                worst = max(abs(1 - (m["achieved"] or 0)) for m in runs)
                print(f"  {rate:.0f} ops/s, {tool}: {c / lt:.2f}x latte (target >= 3x), closed loop / this "
                      f"{closed / c:.2f} (target <= 1.5), send lag p50 {lag50 * 1000:.0f} us (<= 20), "
                      f"p99 {lag99 * 1000:.0f} us (<= 200), achieved off by {worst * 100:.2f}% (<= 0.5%)")
    finally:
        subprocess.run([str(L.CQLBENCH), "cluster", "destroy", CLUSTER], check=False)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
