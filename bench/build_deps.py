#!/usr/bin/env python3
"""What the quickstart's build spends its time on (issue 36): a clean `cargo build --profile quick
--bin cqlbench --timings` of a commit, with the features scripts/quickstart.sh builds (since
issue 59 without the default `k8s` and `tls`; `--default-features` builds them too), then the
longest compilation units and, for each direct dependency, the compile time of the crates only
it brings in.

The commit (default HEAD) is cloned into a temporary directory and built from scratch there
(crates already in Cargo's registry are reused: no download is timed). Cargo's own timing report
gives each unit's duration; a unit is one crate's library, build script or build-script run. A
dependency's own share is found with `cargo tree`: the packages of the normal and build graph
that disappear when its line is taken out of Cargo.toml, summed over their units. The sum of all units exceeds the wall time
because two units compile at once on two cores; what one dependency's removal saves in wall
time is about its share divided by the cores.

Prints: the wall time, the sum of the units, the longest units, and the dependencies by share.

Usage: bench/build_deps.py [--commit REV] [--top 15] [--keep] [--default-features]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def units(clone):
    """The units of the newest timing report: name, version, target, duration (s)."""
    d = os.path.join(clone, "target", "cargo-timings")
    newest = max((os.path.join(d, f) for f in os.listdir(d) if f.startswith("cargo-timing-")),
                 key=os.path.getmtime)
    html = open(newest).read()
    m = re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S)
    if not m:
        raise SystemExit(f"build_deps: no unit data in {newest} (a newer Cargo's report format?)")
    return json.loads(m.group(1))


def packages(clone, features, manifest_text=None):
    """The `name@vVERSION`s of the normal and build dependency graph, Cargo.toml as it is or as
    `manifest_text` (restored afterwards)."""
    path, lock = os.path.join(clone, "Cargo.toml"), os.path.join(clone, "Cargo.lock")
    original, original_lock = open(path).read(), open(lock).read()
    try:
        if manifest_text is not None:
            open(path, "w").write(manifest_text)
        out = subprocess.run(["cargo", "tree", "-e", "normal,build", "--prefix", "none",
                              "--no-dedupe", "-f", "{p}", "--offline", *features], cwd=clone,
                             capture_output=True, text=True)
        if out.returncode != 0:
            return None
        return {"@".join(line.split()[:2]) for line in out.stdout.splitlines() if line.strip()}
    finally:
        # cargo tree rewrites the lock file to the edited manifest: both are put back.
        open(path, "w").write(original)
        open(lock, "w").write(original_lock)


def direct_dependencies(manifest):
    """The `[dependencies]` table's names, in order."""
    names, inside = [], False
    for line in manifest.splitlines():
        if line.startswith("["):
            inside = line.strip() == "[dependencies]"
            continue
        m = re.match(r"^([A-Za-z0-9_-]+)\s*=", line)
        if inside and m:
            names.append(m.group(1))
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commit", default="HEAD")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--keep", action="store_true", help="keep the clone (printed)")
    ap.add_argument("--default-features", action="store_true",
                    help="build the default features too (the build before issue 59, or a full one)")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="cqlbench-build-deps-")
    clone = os.path.join(work, "clone")
    subprocess.run(["git", "clone", "-q", REPO, clone], check=True)
    subprocess.run(["git", "checkout", "-q", a.commit], cwd=clone, check=True)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True,
                          text=True, check=True).stdout.strip()
    subprocess.run(["cargo", "fetch", "-q"], cwd=clone, check=True)
    t0 = time.time()
    before = os.times()
    # What scripts/quickstart.sh builds: its features, unless asked for the defaults (a commit
    # before the features existed has no `--no-default-features` effect either way).
    quickstart = open(os.path.join(clone, "scripts", "quickstart.sh")).read()
    features = [] if a.default_features or "--no-default-features" not in quickstart else [
        "--no-default-features"]
    subprocess.run(["cargo", "build", "-q", "--profile", "quick", "--bin", "cqlbench",
                    "--timings", *features], cwd=clone, check=True, stdout=subprocess.DEVNULL)
    wall = time.time() - t0
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system -
                                                          before.children_system)
    us = units(clone)
    total = sum(u["duration"] for u in us)
    print(f"{head}: clean quick build {' '.join(features) or '(default features)'} {wall:.1f} s wall, {cpu:.1f} s CPU; {len(us)} units, "
          f"their durations summed {total:.1f} s")
    print("\nlongest units (s):")
    for u in sorted(us, key=lambda u: -u["duration"])[:a.top]:
        sections = dict((k, v) for k, v in (u.get("sections") or []))
        split = ""
        if "frontend" in sections and "codegen" in sections:
            f = sections["frontend"]["end"] - sections["frontend"]["start"]
            split = f" (frontend {f:.1f}, codegen {u['duration'] - f:.1f})"
        print(f"  {u['duration']:6.1f}  {u['name']} {u['version']}{u['target']}{split}")
    manifest = open(os.path.join(clone, "Cargo.toml")).read()
    everything = packages(clone, features)
    by_package = {}
    for u in us:
        key = f"{u['name']}@v{u['version']}"
        by_package[key] = by_package.get(key, 0.0) + u["duration"]
    shares = []
    for dep in direct_dependencies(manifest):
        text = re.sub(rf"(?m)^{re.escape(dep)}\s*=.*\n", "", manifest)
        without = packages(clone, features, text)
        if without is None:
            continue  # the crate's code needs it to resolve features: not separable here
        only = everything - without
        shares.append((sum(by_package.get(p, 0.0) for p in only), dep, len(only)))
    print("\ndirect dependencies by the compile time of the crates only they bring in (s):")
    for share, dep, n in sorted(shares, reverse=True)[:a.top]:
        print(f"  {share:6.1f}  {dep} ({n} crates)")
    if a.keep:
        print(f"\nclone: {clone}")
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
