#!/usr/bin/env python3
"""Time to a newcomer's first result (issue 36): `scripts/quickstart.sh` on a fresh clone with an
empty HOME, every line of its output timestamped.

The clone is made from this checkout's HEAD (or --commit) into a temporary directory; HOME is a new empty
directory, so Cargo's registry (CARGO_HOME under it), Maven's repository (~/.m2 under it, through
MAVEN_OPTS' user.home) and cqlbench's jar cache and home all start empty. Only the Rust toolchain (RUSTUP_HOME and the rustup proxies,
from this machine) and the system packages scripts/setup.sh would install are already there.
Prints the wall time to the build's end, to the report and to the end (cluster stopped), the
build's own figure, when each step started, and what the prefetch log says.

Usage: bench/quickstart_fresh.py [--keep] [--commit REV]
Runs a local 3-node cluster on 127.0.0.1-3: nothing else may use those addresses meanwhile.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keep", action="store_true", help="keep the clone and the home (printed)")
    ap.add_argument("--commit", default="HEAD", help="the commit to clone (a before/after pair)")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="cqlbench-fresh-")
    clone, home = os.path.join(work, "clone"), os.path.join(work, "home")
    os.makedirs(home)
    subprocess.run(["git", "clone", "-q", REPO, clone], check=True)
    subprocess.run(["git", "checkout", "-q", a.commit], cwd=clone, check=True)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True,
                          text=True, check=True).stdout.strip()
    rustup_home = os.environ.get("RUSTUP_HOME", os.path.expanduser("~/.rustup"))
    cargo_bin = os.path.join(os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo")), "bin")
    env = {
        "HOME": home,
        "PATH": f"{cargo_bin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "RUSTUP_HOME": rustup_home,
        "CARGO_HOME": os.path.join(home, ".cargo"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        # Java takes user.home from the password file, not from HOME: without this Maven would
        # use this machine's ~/.m2, already holding Cassandra's jars (runs before 2026-12-04 did).
        "MAVEN_OPTS": f"-Duser.home={home}",
    }
    t0 = time.time()
    marks = []
    p = subprocess.Popen([os.path.join(clone, "scripts", "quickstart.sh")], cwd=clone, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
    log = []
    for line in p.stdout:
        t = time.time() - t0
        log.append((t, line.rstrip("\n")))
        marks.append((t, line.rstrip("\n")))
    code = p.wait()
    total = time.time() - t0
    out_log = os.path.join(work, "quickstart.log")
    with open(out_log, "w") as f:
        for t, l in log:
            f.write(f"{t:7.1f}  {l}\n")
    if code != 0:
        print("\n".join(f"{t:7.1f}  {l}" for t, l in log[-30:]))
        sys.exit(f"scripts/quickstart.sh exited {code} after {total:.0f} s (log: {out_log})")

    def first(pattern):
        for t, l in marks:
            if re.search(pattern, l):
                return t, l
        return None, None

    built_at, built = first(r"Finished `quick` profile")
    report_at, report = first(r"^━━ report: ")
    print(f"fresh clone of {head}, empty HOME: scripts/quickstart.sh exited 0")
    if built_at is not None:
        print(f"  build finished at {built_at:6.1f} s  ({built.strip()})")
    steps = [(t, l) for t, l in marks
             if re.match(r"^(━━ |created |fetching |reusing |\S+: .* up \(UN\) in |took )", l)]
    for t, l in steps[:20]:
        print(f"  {t:6.1f} s  {l.strip()[:110]}")
    if report_at is not None:
        print(f"  first report line at {report_at:6.1f} s  ({report.strip()[:100]})")
    print(f"  total wall {total:.1f} s ({total / 60:.2f} min)")
    prefetch = os.path.join(clone, "target", "prefetch.log")
    if os.path.exists(prefetch):
        with open(prefetch) as f:
            lines = [l.strip() for l in f if l.strip()]
        print(f"  prefetch: {lines[-1] if lines else '(empty log)'} (its log last written at "
              f"{os.path.getmtime(prefetch) - t0:.1f} s)")
    m2 = os.path.join(home, ".m2", "repository")
    m2_mib = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(m2) for f in fs) / 2**20
    print(f"  Maven repository of the empty home afterwards: {m2_mib:.0f} MiB")
    if a.keep:
        print(f"  log: {out_log}; kept: {work}")
    else:
        # The quickstart stopped its cluster; the clone and home go (the log is printed above).
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
