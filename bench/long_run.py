#!/usr/bin/env python3
"""Does the client stay flat over a long run? One fixed-rate run on a local node; at the
chosen minutes the client's resident memory (VmRSS), its CPU per operation since the last
mark, and the sizes of the result JSON, HDR log, ledger and per-interval CSV; at the end the
sizes per hour and extrapolated to 24 h (issue 36).

Usage: [CACHE_FROM=HOME/cache] bench/long_run.py [--minutes 60] [--marks 5,30,60] [--rate 2000]
       [--cqlbench PATH]
Needs java for the local node; the node and the client share the host.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICK = os.sysconf("SC_CLK_TCK")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def ops_so_far(out):
    try:
        r = json.load(open(out))
    except (OSError, ValueError):
        return None
    return sum(i["ok"] + i["errors"] for p in r["phases"] for i in p["intervals"])


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
        subprocess.run([a.cqlbench, "cluster", "create", "long", "--nodes", "1", "--heap", "1G", "--start"],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        run = subprocess.Popen(
            [a.cqlbench, "run", "keyvalue", "--cluster", "long", "--rows", "100000", "--rate", str(a.rate),
             "--duration", f"{int(a.minutes * 60)}s", "--out", out, "-q"],
            env=env, stdout=subprocess.DEVNULL, stderr=open(f"{work}/run.err", "w"))
        t0 = time.time()
        last_cpu, last_ops = cpu_s(run.pid), ops_so_far(out) or 0
        print(f"{'minute':>6} {'RSS MiB':>8} {'CPU us/op':>10} {'json KiB':>9} {'hlog KiB':>9} {'ledger KiB':>10} {'csv KiB':>8}", flush=True)
        for m in marks:
            while time.time() - t0 < m * 60 and run.poll() is None:
                time.sleep(1)
            if run.poll() is not None:
                break
            cpu, ops = cpu_s(run.pid), ops_so_far(out)
            per_op = (cpu - last_cpu) / max((ops or 0) - last_ops, 1) * 1e6
            last_cpu, last_ops = cpu, ops or last_ops
            s = sizes(out)
            print(f"{m:>6.0f} {rss_kib(run.pid) / 1024:>8.1f} {per_op:>10.1f} {s['json'] / 1024:>9.0f} "
                  f"{s['hlog'] / 1024:>9.0f} {s['ledger'] / 1024:>10.0f} {s['csv'] / 1024:>8.0f}", flush=True)
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
