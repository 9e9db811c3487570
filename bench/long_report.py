#!/usr/bin/env python3
"""How long `report` and `compare` take on a day-long result, and how much memory (issue 36).

Writes a synthetic 24-hour run (examples/long_result.rs: one-second intervals at 100 ops/s,
three nodes' and one device's series) as the recorder keeps them now (merged after the first
hour) and, as the baseline, every second as it kept them before; then times
`report --html`, `report` (text) and `compare` of it against a copy of itself and prints wall time,
peak RSS (the child's, from getrusage) and the result's size, with the ratio baseline/now.

Usage: bench/long_report.py [--hours 24] [--cqlbench PATH] [--example PATH]
The example is built (`cargo build --release --example long_result`) unless given.
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd):
    """Wall seconds and peak RSS (MiB) of `cmd`, run in a child of its own."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        t = time.time()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall = time.time() - t
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        os.write(w, f"{p.returncode} {wall} {rss}\n".encode() + p.stderr[-300:])
        os._exit(0)
    os.close(w)
    out = b""
    while chunk := os.read(r, 65536):
        out += chunk
    os.waitpid(pid, 0)
    head, _, err = out.partition(b"\n")
    code, wall, rss = head.split()
    if int(code) != 0:
        sys.exit(f"{' '.join(cmd)} failed ({code.decode()}): {err.decode().strip()}")
    return float(wall), float(rss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hours", type=float, default=24)
    ap.add_argument("--cqlbench", default=os.path.join(REPO, "target/release/cqlbench"))
    ap.add_argument("--example", default=None)
    a = ap.parse_args()
    example = a.example
    if example is None:
        subprocess.run(["cargo", "build", "--release", "--example", "long_result"], cwd=REPO, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        example = os.path.join(REPO, "target/release/examples/long_result")
    work = tempfile.mkdtemp(prefix="cqlbench-long-report-")
    env_home = dict(os.environ, CQLBENCH_HOME=f"{work}/home")
    os.environ.update(env_home)
    rows = {}
    for kind, extra in [("kept now", []), ("every second (before)", ["--every-second"])]:
        tag = "now" if not extra else "before"
        day1, day2 = f"{work}/{tag}-1.json", f"{work}/{tag}-2.json"
        t = time.time()
        subprocess.run(["nice", "-n", "19", example, day1, str(a.hours)] + extra, check=True)
        gen = time.time() - t
        # The second day is a copy: compare's cost is in reading and testing, not in the values.
        subprocess.run(["cp", day1, day2], check=True)
        size = os.path.getsize(day1) / 2**20
        html = timed([a.cqlbench, "report", day1, "--html", f"{work}/{tag}.html"])
        text = timed([a.cqlbench, "report", day1])
        cmp_ = timed([a.cqlbench, "compare", day1, day2])
        rows[tag] = (kind, size, html, text, cmp_, os.path.getsize(f"{work}/{tag}.html") / 2**20)
        print(f"wrote a {a.hours:g} h result ({kind}) in {gen:.0f} s", flush=True)
    print(f"\n{a.hours:g}-hour result          JSON MiB   report --html s / MiB   report s / MiB   compare s / MiB   HTML MiB")
    for tag in ("now", "before"):
        kind, size, html, text, cmp_, hsize = rows[tag]
        print(f"{kind:<24} {size:>9.1f}   {html[0]:>9.2f} / {html[1]:>6.0f}   {text[0]:>6.2f} / {text[1]:>5.0f}"
              f"   {cmp_[0]:>7.2f} / {cmp_[1]:>5.0f}   {hsize:>8.2f}")
    n, b = rows["now"], rows["before"]
    print(f"before/now: JSON {b[1] / n[1]:.1f}x, report --html time {b[2][0] / n[2][0]:.1f}x and "
          f"memory {b[2][1] / n[2][1]:.1f}x, compare time {b[4][0] / n[4][0]:.1f}x")
    subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    sys.exit(main())
