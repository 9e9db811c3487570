#!/usr/bin/env python3
"""Writes src/cluster/yaml_keys/<line>.txt: the cassandra.yaml keys each Cassandra line accepts.

The keys are the public fields of org.apache.cassandra.config.Config (what the YAML loader maps
a key to; any other top-level key makes the node refuse to start), plus the old names that 4.1+
still accept through `@Replaces(oldName=...)`, each written as `OLD -> NEW`. Read with `javap`
from the cassandra-all jar of one release per line, in the local Maven repository (a
`cqlbench cluster create --version X` fetches it there).

    scripts/yaml-keys.py 4.0=4.0.10 4.1=4.1.10 5.0=5.0.9
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
M2 = pathlib.Path.home() / ".m2/repository/org/apache/cassandra/cassandra-all"
FIELD = re.compile(r"^  public (?!static)[\w.$<>\[\], ]+ (\w+);$")
OLD = re.compile(r'^\s+oldName="(\w+)"$')


def keys(version):
    jar = M2 / version / f"cassandra-all-{version}.jar"
    out = subprocess.run(
        ["javap", "-v", "-public", "-cp", str(jar), "org.apache.cassandra.config.Config"],
        check=True, capture_output=True, text=True,
    ).stdout
    fields, renamed, current = [], [], None
    for line in out.splitlines():
        m = FIELD.match(line)
        if m:
            current = m.group(1)
            fields.append(current)
            continue
        m = OLD.match(line)
        if m and current:
            renamed.append(f"{m.group(1)} -> {current}")
    return sorted(set(fields)), sorted(set(renamed))


for arg in sys.argv[1:]:
    line, version = arg.split("=")
    fields, renamed = keys(version)
    path = ROOT / "src/cluster/yaml_keys" / f"{line}.txt"
    path.write_text(
        f"# cassandra.yaml keys of Cassandra {line}, read from cassandra-all {version} "
        "by scripts/yaml-keys.py\n" + "".join(f"{k}\n" for k in fields + renamed)
    )
    print(f"{path}: {len(fields)} keys, {len(renamed)} old names")
