#!/usr/bin/env python3
"""Does the client stay flat over a long run? One fixed-rate run on a local node; at the
chosen minutes the client's resident memory (VmRSS: the median and the largest of the last
minute's readings; the median of its anonymous part; its file-backed part),
its CPU per operation in the main phase since the last mark, how busy the host was meanwhile,
and the sizes of the result JSON, HDR log, ledger and per-interval CSV; at the end the sizes
per hour and extrapolated to 24 h (issue 36).

Usage: [CACHE_FROM=HOME/cache] bench/long_run.py [--minutes 60] [--marks 5,30,60] [--rate 2000]
       [--cqlbench PATH] [--address-prefix 127.0.9.]
Needs java for the local node; the node and the client share the host.
"""

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICK = os.sysconf("SC_CLK_TCK")


def status_kib(pid, key="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def host_busy():
    """All CPUs' busy and total jiffies so far (/proc/stat), to show how busy the host was."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def ops_so_far(out, phase=None):
    """Operations so far (in `phase` only, if given), from the per-interval CSV: it is appended
    every second, while the result JSON is rewritten less often as it grows (up to a minute
    behind after an hour). None before `phase` has begun."""
    path = out[: -len(".json")] + ".intervals.csv"
    try:
        f = open(path, newline="")
    except OSError:
        return None
    total, seen = 0, False
    with f:
        for row in csv.DictReader(f):
            if row["op"] != "all" or (phase is not None and row["phase"] != phase):
                continue
            seen = True
            total += int(row["ok"]) + int(row["errors"])
    return total if seen else None


def sizes(out):
    base = out[: -len(".json")]
    files = {"json": out, "hlog": base + ".hlog", "ledger": base + ".ledger", "csv": base + ".intervals.csv"}
    return {k: (os.path.getsize(v) if os.path.exists(v) else 0) for k, v in files.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--marks", default="5,30,60")
    ap.add_argument("--rate", type=int, default=2000)
    ap.add_argument("--cqlbench", default=os.path.join(REPO, "target/release/cqlbench"))
    ap.add_argument("--address-prefix", default=None,
                    help="the node's address prefix (another cluster on this host may hold 127.0.0.1)")
    a = ap.parse_args()
    marks = [float(m) for m in a.marks.split(",")]
    work = tempfile.mkdtemp(prefix="cqlbench-long-")
    env = dict(os.environ, CQLBENCH_HOME=f"{work}/home", CQLBENCH_CLUSTERS_DIR=f"{work}/clusters")
    # Jars already fetched (a cqlbench home's cache), to skip the download.
    cache = os.environ.get("CACHE_FROM", os.path.expanduser("~/.local/share/cqlbench/cache"))
    if os.path.isdir(cache):
        shutil.copytree(cache, f"{work}/home/cache")
    out = f"{work}/long.json"
    try:
        prefix = ["--address-prefix", a.address_prefix] if a.address_prefix else []
        subprocess.run([a.cqlbench, "cluster", "create", "long", "--nodes", "1", "--heap", "1G", "--start", *prefix],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        run = subprocess.Popen(
            [a.cqlbench, "run", "keyvalue", "--cluster", "long", "--rows", "100000", "--rate", str(a.rate),
             "--duration", f"{int(a.minutes * 60)}s", "--out", out, "-q"],
            env=env, stdout=subprocess.DEVNULL, stderr=open(f"{work}/run.err", "w"))
        t0 = time.time()
        # CPU per operation is taken over the main phase only: the rampup's unthrottled inserts
        # cost less per operation and would flatter the first mark.
        while run.poll() is None and ops_so_far(out, "main") is None:
            time.sleep(1)
        last_cpu, last_ops, last_busy = cpu_s(run.pid), ops_so_far(out, "main") or 0, host_busy()
        print(f"main phase from minute {(time.time() - t0) / 60:.1f}; CPU/op is since the previous mark; "
              f"'host' is how busy all CPUs were meanwhile", flush=True)
        print(f"{'minute':>6} {'RSS MiB':>8} {'max MiB':>8} {'anon MiB':>9} {'file MiB':>9} {'CPU us/op':>10} {'host':>5} "
              f"{'json KiB':>9} {'hlog KiB':>9} {'ledger KiB':>10} {'csv KiB':>8}", flush=True)
        # The allocator returns freed pages to the system in bursts, so one reading of RSS swings
        # by a few MiB: each mark shows the median of the last minute's readings (one a second)
        # and their maximum.
        rss = []
        for m in marks:
            while time.time() - t0 < m * 60 and run.poll() is None:
                rss.append((status_kib(run.pid), status_kib(run.pid, "RssAnon")))
                rss = rss[-60:]
                time.sleep(1)
            if run.poll() is not None:
                break
            cpu, ops, busy = cpu_s(run.pid), ops_so_far(out, "main"), host_busy()
            per_op = (cpu - last_cpu) / max((ops or 0) - last_ops, 1) * 1e6
            host = (busy[0] - last_busy[0]) / max(busy[1] - last_busy[1], 1)
            last_cpu, last_ops, last_busy = cpu, ops or last_ops, busy
            s = sizes(out)
            med = sorted(r[0] for r in rss)[len(rss) // 2] if rss else 0
            med_anon = sorted(r[1] for r in rss)[len(rss) // 2] if rss else 0
            top = max((r[0] for r in rss), default=0)
            print(f"{m:>6.0f} {med / 1024:>8.1f} {top / 1024:>8.1f} {med_anon / 1024:>9.1f} "
                  f"{status_kib(run.pid, 'RssFile') / 1024:>9.1f} {per_op:>10.1f} {100 * host:>4.0f}% "
                  f"{s['json'] / 1024:>9.0f} {s['hlog'] / 1024:>9.0f} {s['ledger'] / 1024:>10.0f} "
                  f"{s['csv'] / 1024:>8.0f}", flush=True)
        run.wait()
        s = sizes(out)
        hours = a.minutes / 60
        print(f"run exit {run.returncode}; final sizes per hour (x24 for a day):")
        for k, v in s.items():
            print(f"  {k:<7} {v / hours / 2**20:8.2f} MiB/h  {24 * v / hours / 2**20:9.1f} MiB/day")
        t = time.time()
        subprocess.run([a.cqlbench, "report", out, "--html", f"{work}/r.html"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        print(f"report --html of the {a.minutes:.0f}-minute result: {time.time() - t:.1f} s")
    finally:
        subprocess.run([a.cqlbench, "cluster", "destroy", "long"], env=env, stdout=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
