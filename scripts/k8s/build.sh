#!/usr/bin/env bash
# Builds, from Go modules only (the Go module proxy; no git checkout, no release download), the
# Kubernetes binaries kube-apiserver, kube-controller-manager, kube-scheduler, kubelet and kubectl
# (k8s.io/kubernetes v1.34.3) plus etcd and etcdctl (go.etcd.io/etcd v3.6.x) into a cache folder:
#
#   ${K8S_CACHE:-${CQLBENCH_HOME:-$HOME/.local/share/cqlbench}/cache/k8s/v1.34.3/bin}
#
# Binaries already in that folder are skipped, so a second run is a no-op. Each binary is built to
# a temporary name and renamed only once `go build` succeeded, so an interrupted run leaves no
# half-written binary behind. The scratch Go modules the builds run in live beside the cache
# folder (K8S_BUILD_DIR, default <cache>/../build), with per-binary logs and build-times.tsv.
#
# How: k8s.io/kubernetes replaces its staging modules (k8s.io/api, k8s.io/client-go, ...) with
# ./staging paths, which a consumer module ignores; the scratch module therefore requires
# k8s.io/kubernetes v1.34.3 and replaces each of those staging modules with its published v0.34.3
# module. The list of staging modules is read from k8s.io/kubernetes's own go.mod in the module
# cache. The flags follow hack/lib/golang.sh's non-debug build: CGO_ENABLED=0, -trimpath,
# -tags selinux,notest,grpcnotrace, -ldflags "-s -w -X <version vars>" (so `kubectl version`
# and `--version` report v1.34.3). etcd is built in a second scratch module so that its
# dependency versions do not change Kubernetes's (and vice versa).
#
# Every go command runs under `nice -n 19` with -p 1 and one build at a time, so that the build
# barely disturbs other work on the machine.
#
# Timings on the 2-core dev machine (Go 1.26.8, a 3-node Cassandra cluster running beside it, the
# build at nice 19, -p 1): cold run (empty Go module and build caches) 19 min 6 s wall for all
# seven binaries (kubectl 5m38s, kube-apiserver 7m56s, etcd 1m35s, etcdctl 8s,
# kube-controller-manager 2m48s, kube-scheduler 9s, kubelet 52s; see NOTES.md); warm run
# (everything present) 0.01 s; into an empty K8S_CACHE with Go's caches warm, 32 s.
#
# Environment: K8S_CACHE (bin folder), K8S_BUILD_DIR, K8S_VERSION (default v1.34.3),
# ETCD_VERSION (default v3.6.16), K8S_BINARIES (space-separated subset of the names above),
# K8S_FORCE=1 (rebuild even if present), CGO_ENABLED (default 0).
# Usage: scripts/k8s/build.sh [--list]   (--list prints the cache folder and what is in it)
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.34.3}
ETCD_VERSION=${ETCD_VERSION:-v3.6.16}
# k8s.io/kubernetes vX.Y.Z publishes its staging modules as v0.Y.Z.
STAGING_VERSION=v0.${K8S_VERSION#v1.}
K8S_CACHE=${K8S_CACHE:-${CQLBENCH_HOME:-$HOME/.local/share/cqlbench}/cache/k8s/$K8S_VERSION/bin}
K8S_BUILD_DIR=${K8S_BUILD_DIR:-$(dirname "$K8S_CACHE")/build}
ALL_BINARIES="kubectl kube-apiserver etcd etcdctl kube-controller-manager kube-scheduler kubelet"
K8S_BINARIES=${K8S_BINARIES:-$ALL_BINARIES}

log() { printf '[k8s-build %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

present() { [ -x "$K8S_CACHE/$1" ] && [ -s "$K8S_CACHE/$1" ]; }

if [ "${1:-}" = --list ]; then
  echo "$K8S_CACHE"
  ls -l "$K8S_CACHE" 2>/dev/null || true
  exit 0
elif [ -n "${1:-}" ]; then
  echo "build.sh: unknown argument '$1' (--list, or nothing)" >&2
  exit 2
fi

# One build at a time: a second build.sh (a test that needs the binaries while scripts/test.sh
# builds them in the background) waits for the first, then finds everything present.
mkdir -p "$K8S_BUILD_DIR"
exec 9>"$K8S_BUILD_DIR/.lock"
if ! flock -n 9; then
  log "another build.sh holds $K8S_BUILD_DIR/.lock: waiting for it"
  flock 9
fi

# Warm path: nothing to do, and no go command is run at all.
missing=()
for b in $K8S_BINARIES; do
  case " $ALL_BINARIES " in *" $b "*) ;; *) echo "build.sh: unknown binary '$b'" >&2; exit 2 ;; esac
  if [ "${K8S_FORCE:-0}" = 1 ] || ! present "$b"; then missing+=("$b"); fi
done
if [ ${#missing[@]} -eq 0 ]; then
  log "all present in $K8S_CACHE: $K8S_BINARIES"
  exit 0
fi
log "to build: ${missing[*]} -> $K8S_CACHE"

command -v go >/dev/null || { echo "build.sh: go is not installed" >&2; exit 1; }
mkdir -p "$K8S_CACHE" "$K8S_BUILD_DIR/kubernetes" "$K8S_BUILD_DIR/etcd" "$K8S_BUILD_DIR/logs"

export GOTOOLCHAIN=local GOWORK=off GOFLAGS="-mod=mod -p=1 -buildvcs=false"
export CGO_ENABLED=${CGO_ENABLED:-0}
GO=(nice -n 19 go)
TIMES=$K8S_BUILD_DIR/build-times.tsv
[ -f "$TIMES" ] || printf 'date\tbinary\tseconds\tresult\n' >"$TIMES"

# --- scratch module for Kubernetes -----------------------------------------------------------
k8s_module() {
  local dir=$K8S_BUILD_DIR/kubernetes
  [ -f "$dir/.ready-$K8S_VERSION" ] && return 0
  log "downloading k8s.io/kubernetes@$K8S_VERSION"
  local info kdir
  if ! info=$(cd "$dir" && "${GO[@]}" mod download -json "k8s.io/kubernetes@$K8S_VERSION"); then
    # go mod download -json reports the error inside the JSON on stdout.
    printf 'build.sh: go mod download k8s.io/kubernetes@%s failed:\n%s\n' "$K8S_VERSION" "$info" >&2
    exit 1
  fi
  kdir=$(printf '%s\n' "$info" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -f "$kdir/go.mod" ] || { echo "build.sh: no go.mod for k8s.io/kubernetes@$K8S_VERSION" >&2; exit 1; }
  local staging
  staging=$(sed -n 's#^[[:space:]]*\(k8s\.io/[A-Za-z0-9._-]*\) => \./staging/src/.*#\1#p' "$kdir/go.mod")
  [ -n "$staging" ] || { echo "build.sh: no staging replaces found in $kdir/go.mod" >&2; exit 1; }
  {
    echo "module cqlbench.local/k8s-build"
    echo
    # The same go and godebug lines as k8s.io/kubernetes, so the binaries get its runtime defaults.
    grep -E '^(go|godebug) ' "$kdir/go.mod"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    echo "replace ("
    for m in $staging; do echo "	$m => $m $STAGING_VERSION"; done
    echo ")"
  } >"$dir/go.mod"
  : >"$dir/go.sum"
  # Commit, commit date of the release tag, as the proxy reports them.
  printf '%s\n' "$info" | sed -n 's/^[[:space:]]*"Hash": "\(.*\)",\{0,1\}$/\1/p' | head -1 >"$dir/commit"
  sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$(printf '%s\n' "$info" | sed -n 's/^[[:space:]]*"Info": "\(.*\)",$/\1/p')" >"$dir/date"
  touch "$dir/.ready-$K8S_VERSION"
}

k8s_ldflags() {
  local dir=$K8S_BUILD_DIR/kubernetes v=$K8S_VERSION commit date major minor flags="-s -w" pkg
  commit=$(cat "$dir/commit" 2>/dev/null || true)
  date=$(cat "$dir/date" 2>/dev/null || true)
  major=${v#v}; major=${major%%.*}
  minor=${v#v*.}; minor=${minor%%.*}
  # hack/lib/version.sh sets the same variables in both packages.
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    flags+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    [ -n "$commit" ] && flags+=" -X $pkg.gitCommit=$commit -X $pkg.gitTreeState=clean"
    [ -n "$date" ] && flags+=" -X $pkg.buildDate=$date"
  done
  printf '%s' "$flags"
}

# --- scratch module for etcd -----------------------------------------------------------------
etcd_module() {
  local dir=$K8S_BUILD_DIR/etcd
  [ -f "$dir/.ready-$ETCD_VERSION" ] && return 0
  {
    echo "module cqlbench.local/etcd-build"
    echo
    echo "go $(go env GOVERSION | sed 's/^go//; s/-.*//')"
    echo
    echo "require ("
    echo "	go.etcd.io/etcd/server/v3 $ETCD_VERSION"
    echo "	go.etcd.io/etcd/etcdctl/v3 $ETCD_VERSION"
    echo ")"
  } >"$dir/go.mod"
  : >"$dir/go.sum"
  touch "$dir/.ready-$ETCD_VERSION"
}

# build NAME DIR PACKAGE LDFLAGS
build() {
  local name=$1 dir=$2 pkg=$3 ldflags=$4 start end secs out log
  out="$K8S_CACHE/.$name.tmp.$$"
  log="$K8S_BUILD_DIR/logs/$name.log"
  log "building $name ($pkg), log $log"
  start=$(date +%s)
  if (cd "$dir" && "${GO[@]}" build -trimpath -tags selinux,notest,grpcnotrace \
        -ldflags "$ldflags" -o "$out" "$pkg") >"$log" 2>&1; then
    mv -f "$out" "$K8S_CACHE/$name"
    end=$(date +%s); secs=$((end - start))
    log "built $name in ${secs}s ($(du -h "$K8S_CACHE/$name" | cut -f1))"
    printf '%s\t%s\t%s\tok\n' "$(date -u +%FT%TZ)" "$name" "$secs" >>"$TIMES"
  else
    rm -f "$out"
    end=$(date +%s); secs=$((end - start))
    log "FAILED $name after ${secs}s; last lines of $log:"
    tail -n 20 "$log" >&2
    printf '%s\t%s\t%s\tfailed\n' "$(date -u +%FT%TZ)" "$name" "$secs" >>"$TIMES"
    return 1
  fi
}

failed=()
for b in "${missing[@]}"; do
  case $b in
    etcd|etcdctl)
      etcd_module
      if [ "$b" = etcd ]; then pkg=go.etcd.io/etcd/server/v3; else pkg=go.etcd.io/etcd/etcdctl/v3; fi
      build "$b" "$K8S_BUILD_DIR/etcd" "$pkg" "-s -w" || failed+=("$b")
      ;;
    *)
      k8s_module
      build "$b" "$K8S_BUILD_DIR/kubernetes" "k8s.io/kubernetes/cmd/$b" "$(k8s_ldflags)" || failed+=("$b")
      ;;
  esac
done

if [ ${#failed[@]} -gt 0 ]; then
  log "failed: ${failed[*]} (logs in $K8S_BUILD_DIR/logs)"
  exit 1
fi
log "done: $K8S_CACHE"
ls -l "$K8S_CACHE" >&2
