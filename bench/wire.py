"""The wire's view of a client's CQL operations (issue 59): a packet capture of the node's port
on the loopback, decoded by Wireshark's CQL dissector (tshark), gives each request's time on the
wire and its response's, whatever the client measures itself.

- `Capture(path)`: `dumpcap` on `lo`, CQL port only, pinned to CPU 0 (the node's, not the
  client's), for the length of a `with` block.
- `figures(path, t_from, t_to)`: of the requests sent in [t_from, t_to] (Unix seconds):
  - wire latency p50/p90/p99 (ms): from the packet carrying an EXECUTE to the one carrying its
    result, as the dissector pairs them by stream id (`cql.response_time`). Both packets are
    timestamped as they pass the loopback, so this is the node's time plus both kernels'
    network paths, without either client's wake-ups, scheduling or timing code;
  - how the client spaced its sends: the gaps between consecutive EXECUTE requests (all its
    connections together) at p10/p50/p90, the share sent within 50 µs of the one before, and
    the mean number of requests per burst (requests closer than 100 µs together).

Needs `dumpcap` and `tshark` (Debian: `apt-get install tshark`) and the right to capture (root,
or dumpcap's capabilities); `ensure_tools()` installs them when missing, as bench/load.py
installs latte. The node's port is decoded as CQL, protocol v4 (what both clients speak).
"""
import shutil
import subprocess
import sys
import time

PORT = 9042
# CQL opcodes (native protocol v4): EXECUTE, RESULT, ERROR.
EXECUTE, RESULT, ERROR = 10, 8, 0


def ensure_tools():
    if shutil.which("dumpcap") and shutil.which("tshark"):
        return
    print("wire: installing tshark (dumpcap and Wireshark's CQL dissector)…", flush=True)
    env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "tshark"]):
        if subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL).returncode != 0:
            sys.exit(f"wire: `{' '.join(cmd)}` failed: --wire needs dumpcap and tshark")


class Capture:
    """dumpcap writing the loopback's CQL packets to `path` while the block runs."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        self.p = subprocess.Popen(["taskset", "-c", "0", "dumpcap", "-q", "-i", "lo", "-f", f"tcp port {PORT}",
                                   "-w", str(self.path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # dumpcap has started capturing once the file exists (its header written).
        for _ in range(100):
            if self.path.exists() or self.p.poll() is not None:
                break
            time.sleep(0.05)
        if self.p.poll() is not None:
            sys.exit(f"wire: dumpcap did not start: {self.p.stderr.read().decode()[-500:]}")
        return self

    def __exit__(self, *exc):
        time.sleep(0.3)  # the last responses
        self.p.terminate()
        self.p.wait()
        return False


def pct(sorted_values, q):
    if not sorted_values:
        return None
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def figures(path, t_from, t_to):
    """The wire's figures of the requests sent in [t_from, t_to]; None when it saw none."""
    out = subprocess.run(["tshark", "-r", str(path), "-d", f"tcp.port=={PORT},cql", "-Y", "cql",
                          "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=;",
                          "-e", "frame.time_epoch", "-e", "tcp.dstport", "-e", "cql.opcode",
                          "-e", "cql.response_time"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"wire: tshark could not read {path}: {out.stderr[-500:]}")
    sends, latencies = [], []
    for line in out.stdout.splitlines():
        cols = line.split("\t")
        if len(cols) < 3 or not cols[0]:
            continue
        t = float(cols[0])
        if not t_from <= t <= t_to:
            continue
        opcodes = [int(o) for o in cols[2].split(";") if o]
        if cols[1] == str(PORT):
            # Client to node: every EXECUTE in this packet was sent now.
            sends += [t] * sum(1 for o in opcodes if o == EXECUTE)
        else:
            times = [float(r) for r in cols[3].split(";") if r] if len(cols) > 3 else []
            # The dissector gives a response time to each response it paired with a request;
            # the RESULTs and ERRORs of a packet come in the order of its PDUs.
            answered = [o for o in opcodes if o in (RESULT, ERROR)]
            latencies += times[:len(answered)]
    if not sends or not latencies:
        return None
    sends.sort()
    lat = sorted(v * 1000 for v in latencies)
    gaps = sorted((b - a) * 1e6 for a, b in zip(sends, sends[1:]))
    bursts = 1 + sum(1 for g in gaps if g >= 100)
    return {
        "n": len(lat),
        "wire": (pct(lat, 0.5), pct(lat, 0.9), pct(lat, 0.99)),
        "gap_us": (pct(gaps, 0.1), pct(gaps, 0.5), pct(gaps, 0.9)),
        "together": sum(1 for g in gaps if g < 50) / max(1, len(gaps)),
        "per_burst": len(sends) / bursts,
    }


def text(w):
    if not w:
        return "wire -"
    p50, p90, p99 = w["wire"]
    g10, g50, g90 = w["gap_us"]
    return (f"wire {p50:.3f}/{p90:.3f}/{p99:.3f} ms, sends {g10:.0f}/{g50:.0f}/{g90:.0f} µs apart "
            f"(p10/p50/p90), {w['together'] * 100:.0f}% within 50 µs, {w['per_burst']:.1f} per burst")
