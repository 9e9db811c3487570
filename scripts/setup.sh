#!/usr/bin/env bash
# Installs what cqlbench needs on a fresh Debian/Ubuntu machine: a JDK (11 or 17) and Maven to
# run and fetch Apache Cassandra, fio and sysbench for `cqlbench probe`, and Chromium, in which
# the tests check the HTML report (tests/html_chromium.rs). Rust must already be installed
# (rustup). Cassandra's jars are fetched by cqlbench itself on first use.
set -euo pipefail

need=()
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || need+=(maven)
command -v fio >/dev/null 2>&1 || need+=(fio)
command -v sysbench >/dev/null 2>&1 || need+=(sysbench)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  # env: sudo would drop a plain DEBIAN_FRONTEND=… prefix.
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found: install Rust with rustup first" >&2
  exit 1
fi
echo "setup: java, mvn, fio, sysbench, chromium and cargo are present"
