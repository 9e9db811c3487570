#!/usr/bin/env python3
"""Live metrics against a real Prometheus: a fixed-rate run on one local node, served with
--metrics-listen and scraped every second by Debian's `prometheus` (the shipped scrape
configuration, pointed at this run). After the run, Prometheus's own figures are set beside
the result file's:

- the rate of completed operations Prometheus computes from `cqlbench_operations_total`
  (rate() over the steady part of the window) against the result's main-phase throughput;
- the window's response p99 it holds (`cqlbench_window_response_time_seconds`, op "all",
  last scrape) against the result's p99 of every operation;
- how many of the shipped Grafana dashboard's queries return series.

Usage: bench/live_prometheus.py [--seconds 120] [--rate 1000] [--cqlbench PATH]
Needs root-free local clusters (java), and `prometheus` on PATH (scripts/setup.sh installs it).
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def query(prom, expr, at=None):
    params = {"query": expr}
    if at is not None:
        params["time"] = f"{at:.3f}"
    url = f"http://127.0.0.1:{prom}/api/v1/query?" + urllib.parse.urlencode(params)
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise SystemExit(f"{expr}: {body}")
    return body["data"]["result"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=120)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--cqlbench", default=os.path.join(REPO, "target/debug/cqlbench"))
    a = ap.parse_args()
    if not shutil.which("prometheus"):
        raise SystemExit("prometheus is not on PATH (apt-get install prometheus)")
    work = tempfile.mkdtemp(prefix="cqlbench-live-")
    env = dict(os.environ, CQLBENCH_HOME=f"{work}/home", CQLBENCH_CLUSTERS_DIR=f"{work}/clusters")
    cq = lambda *args, **kw: subprocess.run([a.cqlbench, *args], env=env, check=True, **kw)
    metrics, prom = free_port(), free_port()
    config = open(os.path.join(REPO, "monitoring/prometheus.yml")).read()
    for old, new in [("127.0.0.1:9500", f"127.0.0.1:{metrics}"), ("scrape_interval: 5s", "scrape_interval: 1s"), ("scrape_timeout: 4s", "scrape_timeout: 1s")]:
        assert old in config, old
        config = config.replace(old, new)
    open(f"{work}/prometheus.yml", "w").write(config)
    server = None
    try:
        cq("cluster", "create", "live", "--nodes", "1", "--heap", "512M", "--start", stdout=subprocess.DEVNULL)
        server = subprocess.Popen(
            ["prometheus", f"--config.file={work}/prometheus.yml", f"--storage.tsdb.path={work}/tsdb",
             f"--web.listen-address=127.0.0.1:{prom}"],
            stdout=subprocess.DEVNULL, stderr=open(f"{work}/prometheus.log", "w"))
        out = f"{work}/live.json"
        started = time.time()
        cq("run", "keyvalue", "--cluster", "live", "--rows", "10000", "--rate", str(a.rate),
           "--duration", f"{a.seconds}s", "--warmup", "10s", "--metrics-listen", f"127.0.0.1:{metrics}",
           "--metrics-linger", "3s", "--out", out, "-q", stdout=subprocess.DEVNULL)
        ended = time.time()
        r = json.load(open(out))
        main = [p for p in r["phases"] if p["name"] == "main"][-1]
        s = main["summary"]
        # The steady part of the window: from 20 s after the start to 10 s before the end.
        span = int(a.seconds - 30)
        at = ended - 3 - 10
        rate = sum(float(x["value"][1]) for x in query(prom, f'rate(cqlbench_operations_total{{phase="main"}}[{span}s])', at))
        p99 = query(prom, 'last_over_time(cqlbench_window_response_time_seconds{phase="main",op="all",quantile="0.99"}[1m])', ended)
        p99_ms = float(p99[0]["value"][1]) * 1000
        dash = json.load(open(os.path.join(REPO, "monitoring/grafana-dashboard.json")))
        exprs = [t["expr"].replace("$__rate_interval", "15s").replace("$run", ".*").replace("$env", ".*")
                 for p in dash["panels"] for t in p["targets"]]
        answered = sum(1 for e in exprs if query(prom, e, ended - 5))
        print(f"run: {a.seconds} s at {a.rate} ops/s ({ended - started:.0f} s with connect and rampup), result {out}")
        print(f"throughput: result {s['ops_per_s']:.1f} ops/s, Prometheus rate() over {span} s {rate:.1f} ops/s: "
              f"{100 * (rate - s['ops_per_s']) / s['ops_per_s']:+.2f}%")
        print(f"window p99: result {s['all']['response']['p99_ms']:.3f} ms, Prometheus {p99_ms:.3f} ms: "
              f"{100 * (p99_ms - s['all']['response']['p99_ms']) / s['all']['response']['p99_ms']:+.3f}%")
        print(f"dashboard: {answered} of {len(exprs)} queries returned series")
    finally:
        if server:
            server.send_signal(signal.SIGTERM)
            server.wait()
        subprocess.run([a.cqlbench, "cluster", "destroy", "live"], env=env, stdout=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
