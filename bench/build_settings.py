#!/usr/bin/env python3
"""What a build setting costs and buys (issue 36): clean-build time against operations per client
CPU-second.

Each setting is built from scratch into a target directory of its own (crates already
downloaded are reused; nothing else is), timed (wall and the compiler's CPU), and then each
binary after the first is run against the first with bench/ab.py (alternating pairs against
one warm local node). Prints a table: build wall, build CPU, binary size, and ab.py's verdict.

A setting is `LTO/CODEGEN_UNITS` for the release profile with those two values overridden
(`fat/1` is the release profile as shipped, `thin/16`, `false/16`), or `profile:NAME` for a
profile of Cargo.toml as it is (`profile:quick`, the quickstart's).

Usage: bench/build_settings.py [--pairs 6] [--server-warmup 120] [--no-ab] SETTING...
       bench/build_settings.py fat/1 profile:quick
"""

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build(setting, target):
    """Builds `setting` into the fresh directory `target`; (wall s, CPU s, binary)."""
    shutil.rmtree(target, ignore_errors=True)
    env = dict(os.environ, CARGO_TARGET_DIR=target)
    if setting.startswith("profile:"):
        profile = setting.split(":", 1)[1]
        cmd = ["cargo", "build", "--profile", profile, "--bin", "cqlbench"]
        out_dir = "release" if profile == "release" else profile
    else:
        lto, _, cgu = setting.partition("/")
        if not cgu.isdigit():
            sys.exit(f"{setting}: give LTO/CODEGEN_UNITS (e.g. thin/16) or profile:NAME")
        env["CARGO_PROFILE_RELEASE_LTO"] = lto
        env["CARGO_PROFILE_RELEASE_CODEGEN_UNITS"] = cgu
        cmd = ["cargo", "build", "--release", "--bin", "cqlbench"]
        out_dir = "release"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.time()
    p = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.time() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} ({setting}) failed: {p.stderr.strip()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, os.path.join(target, out_dir, "cqlbench")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("settings", nargs="+")
    ap.add_argument("--pairs", type=int, default=6, help="ab.py pairs per comparison")
    ap.add_argument("--server-warmup", type=int, default=120, help="ab.py's unmeasured load first (s)")
    ap.add_argument("--no-ab", action="store_true", help="build times only")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="cqlbench-build-settings-")
    rows = []
    try:
        for i, s in enumerate(a.settings):
            wall, cpu, binary = build(s, os.path.join(work, f"target-{i}"))
            kept = os.path.join(work, f"cqlbench-{i}")
            shutil.copy2(binary, kept)
            shutil.rmtree(os.path.join(work, f"target-{i}"), ignore_errors=True)
            size = os.path.getsize(kept) / 2**20
            print(f"{s}: clean build {wall:.0f} s wall, {cpu:.0f} s CPU, binary {size:.1f} MiB", flush=True)
            rows.append([s, wall, cpu, size, kept, ""])
        if not a.no_ab:
            base = rows[0]
            for row in rows[1:]:
                p = subprocess.run([sys.executable, os.path.join(REPO, "bench", "ab.py"), base[4], row[4],
                                    "--pairs", str(a.pairs), "--server-warmup", str(a.server_warmup)],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                print(p.stdout, flush=True)
                if p.returncode != 0:
                    sys.exit(f"ab.py {base[0]} {row[0]} failed")
                verdict = [l for l in p.stdout.splitlines() if "ops per client CPU-s (medians" in l]
                row[5] = verdict[-1].strip() if verdict else "(no verdict line)"
        print("\n| setting | clean build wall | build CPU | binary | ops per client CPU-s, A = "
              f"{rows[0][0]}, B = the setting |")
        print("|---|---|---|---|---|")
        for s, wall, cpu, size, _, verdict in rows:
            print(f"| {s} | {wall:.0f} s | {cpu:.0f} s | {size:.1f} MiB | {verdict or '(baseline)'} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
