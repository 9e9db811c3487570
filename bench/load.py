#!/usr/bin/env python3
"""Load-engine benchmark: client efficiency against latte 0.29, peak RSS, and rate accuracy.

Set-up (issue 3): one local Cassandra node pinned to CPU 0, the client pinned to CPU 1
(taskset), small rows (10-byte key + 5 columns of 20 bytes), RF 1, consistency ONE,
128 requests in flight, one client thread, a 10 s warmup then a measured window of
--measure seconds. Client CPU is utime+stime of the client process over the measured window:
read from /proc/PID/stat when the warmup ends and from wait4()'s rusage at exit (the same
for both tools). Operations are each tool's own count for its measured window. Tools run
alternately, --repeat times each, and medians are compared.

cqlbench runs with --no-metrics (latte samples no server metrics); one extra 50/50 run with
the default per-second server and host sampling shows what that costs the client.

Then the open-loop rate accuracy: cqlbench --rate 2000 for --rate-seconds seconds; the
achieved rate comes from the result file.

    bench/load.py                      # full run (about 12 minutes with the defaults)
    bench/load.py --measure 20 --repeat 1 --rate-seconds 20   # quick look

latte is looked up on PATH, then in <cqlbench home>/tools/latte/bin; if absent it is
installed there with `cargo install latte-cli --version 0.29.0` (several minutes).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CQLBENCH = ROOT / "target" / "release" / "cqlbench"
LATTE_SCRIPT = ROOT / "bench" / "latte-small-rows.rn"
HOME = Path(os.environ.get("CQLBENCH_HOME") or Path.home() / ".local" / "share" / "cqlbench")
CLK_TCK = os.sysconf("SC_CLK_TCK")


def sh(cmd, **kw):
    print("+", " ".join(str(c) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def cpu_seconds(pid):
    """utime + stime of a live process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(") ", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / CLK_TCK


def measured_run(cmd, warmup_s, out_path):
    """Runs cmd (in the output's directory: latte writes its reports to the working directory);
    returns (client CPU-s after the warmup, peak RSS bytes, stdout text)."""
    with open(out_path, "w") as out:
        p = subprocess.Popen([str(c) for c in cmd], stdout=out, stderr=subprocess.STDOUT, cwd=Path(out_path).parent)
        time.sleep(warmup_s)
        try:
            cpu_at_warmup = cpu_seconds(p.pid)
        except (FileNotFoundError, IndexError):
            cpu_at_warmup = None
        _, status, ru = os.wait4(p.pid, 0)
    text = Path(out_path).read_text()
    if status != 0 or cpu_at_warmup is None:
        sys.exit(f"benchmark command failed ({status}): {' '.join(map(str, cmd))}\n{text[-2000:]}")
    return ru.ru_utime + ru.ru_stime - cpu_at_warmup, ru.ru_maxrss * 1024, text


ROWS = 100_000


def stress(binary, cluster, ratio, *extra, pin=True):
    """`cqlbench run stress` with the benchmark's fixed set-up (`ratio` None: the workload's own
    mix), the client pinned to CPU 1 unless `pin` is false."""
    cmd = ["taskset", "-c", 1] if pin else []
    # 20-byte values: the row latte-small-rows.rn writes (stress's default is 34 bytes since
    # it took cassandra-stress's shape).
    cmd += [binary, "run", "stress", "--cluster", cluster, "--rf", 1, "--consistency", "ONE", "--rows", ROWS,
            "--value-size", 20]
    if ratio is not None:
        cmd += ["--ratio", ratio]
    return cmd + list(extra)


def create_node(binary, cluster, work, version=None):
    """Creates and starts a one-node cluster pinned to CPU 0 (Cassandra `version`, else
    cqlbench's default) and writes the key space once."""
    sh([binary, "cluster", "create", cluster, "--nodes", 1, "--heap", "1G", "--cpus-per-node", 1,
        *(["--version", version] if version else [])])
    sh([binary, "cluster", "start", cluster])
    sh(stress(binary, cluster, "write=1", "--ops", 1, "--threads", 1, "--out", work / "prefill.json", "-q"),
       stdout=subprocess.DEVNULL)


def warm_node(binary, cluster, ratio, seconds, work):
    """Unmeasured load (JIT, memtables, first flushes), so that the first measured run does not
    meet a colder server than the later ones."""
    sh(stress(binary, cluster, ratio, "--skip-rampup", "--concurrency", 128, "--threads", 1,
              "--duration", f"{seconds}s", "--out", work / "server-warmup.json", "-q"), stdout=subprocess.DEVNULL)


def measured_cqlbench(binary, cluster, ratio, warmup_s, measure_s, out, metrics=False):
    """One closed-loop run (128 in flight, one thread); returns (ops/s, ops per client CPU-s,
    peak RSS bytes) over the measured window."""
    res = Path(out).with_suffix(".json")
    cmd = stress(binary, cluster, ratio, "--skip-rampup", "--concurrency", 128, "--threads", 1,
                 "--duration", f"{warmup_s + measure_s}s", "--warmup", f"{warmup_s}s", "--out", res, "-q",
                 *([] if metrics else ["--no-metrics"]))
    cpu, rss, _ = measured_run(cmd, warmup_s, out)
    s = main_summary(res)
    ops = s["ok"] + s["errors"]
    return ops / s["measured_s"], ops / cpu, rss


def main_summary(result_path):
    """The main phase's summary in a cqlbench result file."""
    return next(p for p in json.loads(Path(result_path).read_text())["phases"] if p["name"] == "main")["summary"]


def find_latte(explicit):
    if explicit:
        return Path(explicit)
    on_path = shutil.which("latte")
    if on_path:
        return Path(on_path)
    local = HOME / "tools" / "latte" / "bin" / "latte"
    if not local.exists():
        sh(["cargo", "install", "latte-cli", "--version", "0.29.0", "--root", HOME / "tools" / "latte"])
    return local


def latte_requests(text):
    for line in text.splitlines():
        if line.strip().startswith("Requests"):
            return int(line.split()[2])
    sys.exit("could not find 'Requests' in latte's report:\n" + text[-2000:])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--measure", type=int, default=60, help="measured seconds per run")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=2, help="runs per tool and workload")
    ap.add_argument("--rate-seconds", type=int, default=60)
    ap.add_argument("--server-warmup", type=int, default=60, help="seconds of unmeasured load first")
    ap.add_argument("--latte", help="path of a latte 0.29 binary")
    ap.add_argument("--skip-latte", action="store_true", help="measure cqlbench only")
    a = ap.parse_args()

    sh(["cargo", "build", "--release", "--quiet"], cwd=ROOT)
    latte = None if a.skip_latte else find_latte(a.latte)
    work = Path(tempfile.mkdtemp(prefix="cqlbench-bench-"))
    env = dict(os.environ, CQLBENCH_CLUSTERS_DIR=str(work / "clusters"))
    os.environ.update(env)
    try:
        create_node(CQLBENCH, "bench", work)
        if latte:
            # latte's own key space, written once (not measured).
            sh([latte, "schema", LATTE_SCRIPT, "127.0.0.1"], stdout=subprocess.DEVNULL, cwd=work)
            sh(["taskset", "-c", "1", latte, "load", LATTE_SCRIPT, "-t", 1, "--concurrency", 128, "127.0.0.1", "-q"],
               stdout=subprocess.DEVNULL, cwd=work)
        warm_node(CQLBENCH, "bench", "write=1,read=1", a.server_warmup, work)

        results = {}
        for name, ratio, latte_fn in [("write-only", "write=1", "write"), ("50/50", "write=1,read=1", "write:1,read:1")]:
            for rep in range(a.repeat):
                order = ["cqlbench", "latte"] if rep % 2 == 0 else ["latte", "cqlbench"]
                for tool in order:
                    if tool == "latte" and not latte:
                        continue
                    out = work / f"{tool}-{rep}.txt"
                    if tool == "cqlbench":
                        row = measured_cqlbench(CQLBENCH, "bench", ratio, a.warmup, a.measure, out)
                    else:
                        cmd = ["taskset", "-c", "1", latte, "run", LATTE_SCRIPT, "-f", latte_fn, "-d", f"{a.measure}s",
                               "-w", f"{a.warmup}s", "-t", 1, "-p", 128, "--consistency", "ONE", "127.0.0.1", "-q"]
                        cpu, rss, text = measured_run(cmd, a.warmup, out)
                        ops = latte_requests(text)
                        row = (ops / a.measure, ops / cpu, rss)
                    results.setdefault((name, tool), []).append(row)
                    print(f"  {name:<10} {tool:<9} {row[0]:>9.0f} ops/s  {row[1]:>9.0f} ops per client CPU-s  "
                          f"peak RSS {row[2] / 2**20:.1f} MiB", flush=True)

        print("\n== efficiency (medians) ==")
        print(f"{'workload':<10} {'tool':<9} {'ops/s':>9} {'ops/CPU-s':>10} {'RSS MiB':>8}")
        for (name, tool), rows_ in results.items():
            med = [statistics.median(r[i] for r in rows_) for i in range(3)]
            print(f"{name:<10} {tool:<9} {med[0]:>9.0f} {med[1]:>10.0f} {med[2] / 2**20:>8.1f}")
        if latte:
            for name in ["write-only", "50/50"]:
                c = statistics.median(r[1] for r in results[(name, "cqlbench")])
                l = statistics.median(r[1] for r in results[(name, "latte")])
                cr = max(r[2] for r in results[(name, "cqlbench")])
                lr = max(r[2] for r in results[(name, "latte")])
                print(f"{name}: cqlbench/latte ops per client CPU-s = {c / l:.2f}x (target >= 2x); "
                      f"peak RSS {cr / 2**20:.1f} vs {lr / 2**20:.1f} MiB")

        # What sampling server and host metrics every second (on by default for a local
        # cluster, off above as latte samples nothing) costs the client.
        _, with_m, _ = measured_cqlbench(CQLBENCH, "bench", "write=1,read=1", a.warmup, a.measure,
                                         work / "with-metrics.txt", metrics=True)
        without = statistics.median(r[1] for r in results[("50/50", "cqlbench")])
        print(f"\n== metrics sampling ==\n50/50 with 1 s server+host sampling: {with_m:.0f} ops per client CPU-s "
              f"({100 * (with_m / without - 1):+.1f}% vs without)")

        # Rate accuracy.
        res = work / "rate.json"
        sh(stress(CQLBENCH, "bench", None, "--skip-rampup", "--rate", 2000,
                  "--duration", f"{a.rate_seconds}s", "--out", res, "-q", pin=False), stdout=subprocess.DEVNULL)
        s = main_summary(res)
        achieved = (s["ok"] + s["errors"]) / s["measured_s"]
        print(f"\n== rate accuracy ==\n--rate 2000 for {a.rate_seconds}s: achieved {achieved:.1f} ops/s = "
              f"{100 * s['achieved_ratio']:.2f}% of target (deviation {abs(1 - s['achieved_ratio']) * 100:.2f}%, "
              f"target within 1%); response p99 {s['all']['response']['p99_ms']:.2f} ms, errors {s['errors']}")
    finally:
        subprocess.run([str(CQLBENCH), "cluster", "destroy", "bench"], env=env)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
