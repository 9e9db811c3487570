#!/usr/bin/env bash
# Cross-check one `cqlbench probe` profile against fio run by hand on the same job file.
#
#   bench/probe-vs-fio.sh [PROFILE] [DIR]
#
# PROFILE defaults to rand_read_4k; DIR (the filesystem to test) defaults to /tmp. The probe
# runs with --quick (override the seconds with RUNTIME_S=N) and --write-jobs; then fio runs the
# written job file in a fresh directory on the same filesystem:
#
#   cd <DIR>/probe-vs-fio.*/hand && fio --output-format=json <jobs>/<PROFILE>.fio
#
# Runs both REPEAT times (default 3), alternating, because other load on the machine moves
# figures between consecutive runs; prints every pair, the medians and their ratio
# (cqlbench / fio). Needs fio and jq.
# CQLBENCH selects the binary (default: target/release/cqlbench, else target/debug/cqlbench).
set -euo pipefail

profile=${1:-rand_read_4k}
dir=${2:-/tmp}
if [[ -z "${CQLBENCH:-}" ]]; then
    CQLBENCH=target/release/cqlbench
    [[ -x $CQLBENCH ]] || CQLBENCH=target/debug/cqlbench
fi
for tool in fio jq "$CQLBENCH"; do
    command -v "$tool" >/dev/null || { echo "probe-vs-fio: '$tool' not found" >&2; exit 1; }
done

work=$(mktemp -d "$dir/probe-vs-fio.XXXXXX")
trap 'rm -rf "$work"' EXIT
runtime_args=()
[[ -n "${RUNTIME_S:-}" ]] && runtime_args=(--runtime-s "$RUNTIME_S")
repeat=${REPEAT:-3}
figures='["read_iops", "write_iops", "read_mb_s", "write_mb_s", "read_p99_us", "write_p99_us"]'

echo "profile $profile on $(df --output=source "$dir" | tail -1) ($(fio --version)), $repeat alternating runs"
for i in $(seq "$repeat"); do
    run="$work/$i"
    mkdir -p "$run/hand"
    "$CQLBENCH" probe --quick --skip-cpu --profiles "$profile" "${runtime_args[@]}" \
        --dir "$run" --write-jobs "$run/jobs" --out "$run/probe.json" >/dev/null 2>"$run/probe.log" \
        || { cat "$run/probe.log" >&2; exit 1; }
    [[ $i == 1 ]] && echo "hand run: cd $run/hand && fio --output-format=json $run/jobs/$profile.fio"
    (cd "$run/hand" && fio --output-format=json "$run/jobs/$profile.fio" >"$run/hand.json")

    # The same figures from fio's JSON: totals over all jobs, latency from the profile's
    # latency job (named in the probe result), MB = 10^6 bytes, microseconds.
    latency_job=$(jq -r --arg p "$profile" \
        '.profiles[] | select(.name == $p) | .latency_job' "$run/probe.json")
    jq -c --arg p "$profile" --argjson f "$figures" \
        '.profiles[] | select(.name == $p) as $x | [$f[] | $x[.]]' "$run/probe.json" >"$run/a.json"
    jq -c --arg j "$latency_job" '
        def p99(d): if d.total_ios > 0 then d.clat_ns.percentile["99.000000"] / 1000 else null end;
        ([.jobs[] | select(.jobname == $j)][0]) as $lat
        | [([.jobs[].read.iops] | add), ([.jobs[].write.iops] | add),
           ([.jobs[].read.bw_bytes] | add) / 1e6, ([.jobs[].write.bw_bytes] | add) / 1e6,
           p99($lat.read), p99($lat.write)]' "$run/hand.json" >"$run/b.json"
done

# One row per figure: each run's pair, then the medians and their ratio.
jq -n -r --argjson f "$figures" --argjson n "$repeat" '
    def median: sort | if length % 2 == 1 then .[length / 2 | floor]
                       else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    def fmt: if . >= 100 then (. | round | tostring) else ((. * 10 | round) / 10 | tostring) end;
    [inputs] as $all
    | [range(0; $n) | {a: $all[2 * .], b: $all[2 * . + 1]}] as $runs
    | "figure        runs (cqlbench / fio by hand)                      median cqlbench  median fio  ratio",
      (range(0; $f | length) as $k
       | [$runs[] | {a: .a[$k], b: .b[$k]}] as $pairs
       | select(all($pairs[]; .a != null and .b != null and .b != 0))
       | ([$pairs[].a] | median) as $ma | ([$pairs[].b] | median) as $mb
       | ($ma / $mb) as $r
       | "\($f[$k] | . + " " * (13 - length)) \([$pairs[] | "\(.a | fmt)/\(.b | fmt)"] | join("  ") | . + " " * ([50 - length, 1] | max)) \($ma | fmt | " " * ([15 - length, 0] | max) + .)  \($mb | fmt | " " * ([10 - length, 0] | max) + .)  \($r * 1000 | round / 1000)\(if $r < 0.9 or $r > 1.1 then "  (outside 10%)" else "" end)")
    ' $(for i in $(seq "$repeat"); do echo "$work/$i/a.json" "$work/$i/b.json"; done)
