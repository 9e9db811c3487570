#!/usr/bin/env bash
# Installs what cqlbench needs on a fresh Debian/Ubuntu machine: a JDK (11 or 17) and Maven to
# run and fetch Apache Cassandra, fio and sysbench for `cqlbench probe`, Chromium, in which
# the tests check the HTML report (tests/html_chromium.rs), Prometheus, which scrapes a live run in
# the tests (tests/load_real.rs), pip (cqlbench fetches the Java 11
# runtime Cassandra 4.x runs on with it) and kubernetes-validate (pip), with
# which they check the rendered Kubernetes manifests (tests/k8s_validate.rs), and buildah,
# podman and runc, with which they build and run the loader image (tests/image_real.rs). Rust must already
# be installed (rustup). Cassandra's jars are fetched by cqlbench itself on first use.
#
# `scripts/setup.sh run` installs only what the main job (scripts/quickstart.sh) needs: the
# JDK, Maven, fio and sysbench; no argument installs everything the tests need as well.
set -euo pipefail

for_tests=1
case "${1:-}" in
  "") ;;
  run) for_tests=0 ;;
  *) echo "setup: unknown argument '$1' (give 'run', or nothing for the tests' set-up)" >&2; exit 2 ;;
esac

need=()
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || need+=(maven)
command -v fio >/dev/null 2>&1 || need+=(fio)
command -v sysbench >/dev/null 2>&1 || need+=(sysbench)
if [ "$for_tests" -eq 1 ]; then
  # Prometheus: the live-metrics test scrapes cqlbench with it, and tests/prometheus_real.rs
  # fetches a node exporter's series from it.
  command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
  # The node exporter the host-metrics tests start (tests/node_exporter_real.rs,
  # tests/prometheus_real.rs).
  command -v prometheus-node-exporter >/dev/null 2>&1 || need+=(prometheus-node-exporter)
  # The SSH server the remote-probe test starts (tests/probe_ssh_real.rs), with ssh and ssh-keygen.
  [ -x /usr/sbin/sshd ] || need+=(openssh-server)
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || need+=(chromium)
  python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
  # The loader image (scripts/image.sh) and the test that runs it (tests/image_real.rs):
  # buildah builds it, podman runs it with runc (crun refuses this machine's hybrid cgroups).
  command -v buildah >/dev/null 2>&1 || need+=(buildah)
  command -v podman >/dev/null 2>&1 || need+=(podman)
  command -v runc >/dev/null 2>&1 || [ -x /usr/sbin/runc ] || need+=(runc)
  # The network lab (`cluster create --netns`, tests/lab_real.rs): namespaces, veths and
  # bridges with ip, link limits with tc, the gateway's NAT with iptables.
  command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || need+=(iproute2)
  command -v iptables >/dev/null 2>&1 || [ -x /usr/sbin/iptables-legacy ] ||
    [ -x /usr/sbin/iptables-nft ] || need+=(iptables)
  # The local Kubernetes (scripts/k8s/lab.sh, tests/k8s_real.rs): containerd and the CNI
  # plugins; its binaries are built from Go modules by scripts/k8s/build.sh (with Go 1.26 or
  # newer, which Debian 12 does not package: install it from go.dev).
  command -v containerd >/dev/null 2>&1 || need+=(containerd)
  [ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  # env: sudo would drop a plain DEBIAN_FRONTEND=… prefix.
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
# The manifests are typed against Kubernetes 1.33 (k8s::KUBERNETES_VERSION): the validator must
# bundle that version's schemas (kubernetes-validate 1.33 or newer).
kubernetes_validate_ok() {
  printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: setup\n' |
    kubernetes-validate --strict --quiet --kubernetes-version 1.33.0 - >/dev/null 2>&1
}
if [ "$for_tests" -eq 1 ] && ! kubernetes_validate_ok; then
  echo "setup: installing kubernetes-validate (pip)"
  pip=(env PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet
    --disable-pip-version-check --upgrade "kubernetes-validate>=1.33")
  # A Debian-managed Python refuses installs outside a virtual environment: install for the user.
  "${pip[@]}" 2>/dev/null || "${pip[@]}" --user --break-system-packages
  if command -v pyenv >/dev/null 2>&1; then pyenv rehash; fi
  hash -r
  if ! kubernetes_validate_ok; then
    echo "setup: kubernetes-validate is not on PATH or lacks Kubernetes 1.33" \
      "(is ~/.local/bin on PATH?)" >&2
    exit 1
  fi
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found: install Rust with rustup first" >&2
  exit 1
fi
if [ "$for_tests" -eq 1 ]; then
  echo "setup: java, mvn, fio, sysbench, prometheus, prometheus-node-exporter, chromium, kubernetes-validate, buildah, podman, runc, ip, iptables and cargo are present"
else
  echo "setup: java, mvn, fio, sysbench and cargo are present"
fi
