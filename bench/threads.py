#!/usr/bin/env python3
"""What the client's thread count costs at a fixed rate (issue 59, "fewer threads").

A run's `--threads` defaults to the CPU cores the client may use (two on this VM when it is
not pinned), and more than one thread means tokio's multi-thread runtime: its workers wake
each other to share work. At a light fixed rate there is little work to share and every
wake-up costs. This measures it: one local node on CPU 0, key-value rows, RF 1, --no-metrics;
at each rate a fixed-rate run in each variant, the variants' order rotating per repeat:

- `cpu1 x1`: pinned to CPU 1, `--threads 1` (a current-thread runtime; what the benches run);
- `cpu1 x2`: pinned to CPU 1, `--threads 2` (two workers on one CPU);
- `any x2`: not pinned, `--threads 2` (the default here without taskset);
- `any x1`: not pinned, `--threads 1`;
- `any default` (with --default): not pinned, no `--threads` (what the binary picks).

Prints each run's ops per client CPU-second (the whole process's CPU), send lag p50/p99/max,
response and service p50/p99 and the achieved rate, then the median per variant and rate.

    bench/threads.py --cqlbench target/release/cqlbench --rates 1000,4000 --repeat 2
"""
import argparse
import importlib.util
import json
import statistics
import subprocess
from pathlib import Path

_spec = importlib.util.spec_from_file_location("bench_send_lag", Path(__file__).with_name("send_lag.py"))
send_lag = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(send_lag)
sh, main_summary, figures, fmt, isolated_home = (send_lag.sh, send_lag.main_summary, send_lag.figures,
                                                 send_lag.fmt, send_lag.isolated_home)

CLUSTER = "threads"
ROWS = 100_000
VARIANTS = {
    "cpu1 x1": (["taskset", "-c", "1"], ["--threads", 1]),
    "cpu1 x2": (["taskset", "-c", "1"], ["--threads", 2]),
    "any x2": ([], ["--threads", 2]),
    "any x1": ([], ["--threads", 1]),
    "any default": ([], []),
}


def keyvalue(binary, variant, *extra):
    pin, threads = VARIANTS[variant]
    return pin + [binary, "run", "keyvalue", "--cluster", CLUSTER, "--rf", 1, "--rows", ROWS,
                  "--no-metrics", "-q", *threads, *extra]


def measure(binary, variant, rate, warmup, seconds, out):
    sh(keyvalue(binary, variant, "--skip-rampup", "--rate", rate, "--duration", f"{warmup + seconds}s",
                "--warmup", f"{warmup}s", "--out", out), stdout=subprocess.DEVNULL)
    phases = json.loads(Path(out).read_text())["phases"]
    threads = next(p for p in phases if p["name"] == "main")["load"]["threads"]
    return {"threads": threads, **figures(out)}


def line(rate, variant, m):
    return (f"| {rate:.0f} | {variant} | {m['threads']} | {m['ops_per_cpu']:.0f} | {fmt(m['lag'][0])} / "
            f"{fmt(m['lag'][1])} / {fmt(m['lag'][2])} | {m['resp'][0]:.3f} / {m['resp'][1]:.3f} | "
            f"{m['serv'][0]:.3f} / {m['serv'][1]:.3f} | {m['achieved'] * 100:.2f}% |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cqlbench", required=True, help="a cqlbench release binary")
    ap.add_argument("--rates", default="1000,4000", help="fixed rates, ops/s")
    ap.add_argument("--seconds", type=int, default=20, help="measured seconds per run")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--variants", default="cpu1 x1,cpu1 x2,any x2,any x1",
                    help=f"which of: {', '.join(VARIANTS)}")
    a = ap.parse_args()
    binary = Path(a.cqlbench).resolve()
    variants = [v.strip() for v in a.variants.split(",")]
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant {unknown[0]!r} (accepted: {', '.join(VARIANTS)})")

    work = isolated_home("cqlbench-threads-")
    rows = []
    try:
        sh([binary, "cluster", "create", CLUSTER, "--nodes", 1, "--heap", "1G", "--cpus-per-node", 1])
        sh([binary, "cluster", "start", CLUSTER])
        # The rows once, then unmeasured load (JIT, memtables).
        sh(keyvalue(binary, "cpu1 x1", "--ops", 1, "--out", work / "prefill.json"), stdout=subprocess.DEVNULL)
        sh(keyvalue(binary, "cpu1 x1", "--skip-rampup", "--concurrency", 128, "--duration", "30s",
                    "--warmup", "10s", "--out", work / "closed.json"), stdout=subprocess.DEVNULL)
        print(f"closed loop (128 in flight, CPU 1, one thread): "
              f"{main_summary(work / 'closed.json')['ops_per_s']:.0f} ops/s", flush=True)
        print("\n| rate | variant | threads | ops per client CPU-s | send lag p50 / p99 / max | "
              "response p50 / p99 | service p50 / p99 | achieved |\n|---|---|---|---|---|---|---|---|",
              flush=True)
        for rate in (float(r) for r in a.rates.split(",")):
            for rep in range(a.repeat):
                k = rep % len(variants)
                for variant in variants[k:] + variants[:k]:
                    out = work / f"{variant.replace(' ', '-')}-{rate:.0f}-{rep}.json"
                    m = measure(binary, variant, rate, a.warmup, a.seconds, out)
                    rows.append((rate, variant, m))
                    print(line(rate, variant, m), flush=True)
    finally:
        subprocess.run([str(binary), "cluster", "destroy", CLUSTER], check=False)
    print("\nmedians: | rate | variant | ops per client CPU-s | send lag p50 / p99 (ms) | response p50 (ms) |")
    for rate in sorted({r for r, _, _ in rows}):
        for variant in variants:
            ms = [m for r, v, m in rows if r == rate and v == variant]
            if ms:
                med = lambda f: statistics.median(f(m) for m in ms)
                print(f"| {rate:.0f} | {variant} | {med(lambda m: m['ops_per_cpu']):.0f} | "
                      f"{med(lambda m: m['lag'][0] or 0):.3f} / {med(lambda m: m['lag'][1] or 0):.3f} | "
                      f"{med(lambda m: m['resp'][0]):.3f} |")
    print(f"results in {work}")


if __name__ == "__main__":
    main()
