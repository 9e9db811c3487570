#!/usr/bin/env bash
# Resolves into Maven's local repository (~/.m2) the jars cqlbench fetches the first time it
# creates a local cluster of the default version: the newest Cassandra of the default line and
# the metrics agent. scripts/quickstart.sh runs it beside the build, so that the download
# overlaps the compiler; cqlbench then copies the jars from ~/.m2 instead of downloading them.
# The project file is cqlbench's own (src/cluster/fetch-pom.xml); the versions and Maven's
# JVM options are the constants of src/cluster/dist.rs. `--print` prints the artifacts instead
# of resolving them (a unit test of dist.rs checks them against the constants).
set -euo pipefail
cd "$(dirname "$0")/.."
constant() { sed -n "s/^pub const $1: &str = \"\(.*\)\";\$/\1/p" src/cluster/dist.rs; }
line=$(constant DEFAULT_LINE)
exporter=$(constant EXPORTER_VERSION)
jvm_opts=$(constant MAVEN_JVM_OPTS)
if [ -z "$line" ] || [ -z "$exporter" ] || [ -z "$jvm_opts" ]; then
  echo "prefetch: DEFAULT_LINE, EXPORTER_VERSION or MAVEN_JVM_OPTS not found in src/cluster/dist.rs" >&2
  exit 1
fi
# Maven's JVM as cqlbench runs it (the user's MAVEN_OPTS after, so they win): it shares the
# CPUs with the compiler here.
export MAVEN_OPTS="$jvm_opts${MAVEN_OPTS:+ $MAVEN_OPTS}"
artifacts=(
  "org.apache.cassandra cassandra-all [$line.0,$line.999]"
  "io.prometheus.jmx jmx_prometheus_javaagent $exporter"
)
case "${1:-}" in
  "") ;;
  --print) printf '%s\n' "${artifacts[@]}"; exit 0 ;;
  *) echo "prefetch: unknown argument '$1' (--print, or nothing)" >&2; exit 2 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for a in "${artifacts[@]}"; do
  read -r group artifact version <<<"$a"
  mkdir -p "$work/$artifact"
  sed -e "s|@GROUP@|$group|" -e "s|@ARTIFACT@|$artifact|" -e "s|@VERSION@|$version|" \
    src/cluster/fetch-pom.xml >"$work/$artifact/pom.xml"
  (cd "$work/$artifact" && mvn -B -q -Dstyle.color=never dependency:resolve -DincludeScope=runtime)
done
echo "prefetch: resolved ${#artifacts[@]} artifacts into Maven's local repository"
