#!/usr/bin/env bash
# The loader image: a minimal OCI image of the cqlbench binary, for the Indexed Job that
# `cqlbench k8s loaders --image NAME` renders (and for any host with a container runtime).
#
#   scripts/image.sh [--binary PATH] [--name NAME] [--out FILE] [--no-probe-tools]
#
# Built with Debian's buildah from an empty image (no base image, no registry): the binary
# (stripped), the shared libraries it links, `sleep` and `tar` (the collector pod sleeps and
# `kubectl cp` needs tar), and fio and sysbench with their libraries (what `cqlbench probe`
# runs), all taken from this host. It runs as root (a results volume is writable whatever its
# owner); `podman run --user` or a pod's securityContext can choose another user. Written as an OCI archive that `podman load`, `docker load`
# (Docker 25 or later), `kind load image-archive` or `skopeo copy oci-archive:FILE docker://…`
# take. buildah works in a storage directory of its own, removed at the end: nothing is left in
# the host's container storage.
#
# Defaults: the release build (built if missing), NAME cqlbench-loader:<version>-<git rev>,
# FILE target/image/cqlbench-loader.oci.tar. Prints the name, the archive, its size and the
# build's wall time. Needs buildah (scripts/setup.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."

binary="" name="" out="target/image/cqlbench-loader.oci.tar" probe_tools=1
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
    --name) name="${2:?--name needs an image name}"; shift 2 ;;
    --out) out="${2:?--out needs a file}"; shift 2 ;;
    --no-probe-tools) probe_tools=0; shift ;;
    *) echo "image: unknown argument '$1' (--binary PATH, --name NAME, --out FILE, --no-probe-tools)" >&2; exit 2 ;;
  esac
done
command -v buildah >/dev/null || { echo "image: buildah is not installed (apt-get install buildah)" >&2; exit 1; }
start=$(date +%s.%N)
if [ -z "$binary" ]; then
  [ -x target/release/cqlbench ] || cargo build --release --bin cqlbench
  binary=target/release/cqlbench
fi
[ -x "$binary" ] || { echo "image: '$binary' is not an executable file" >&2; exit 1; }
version=$("$binary" --version | awk '{print $2}')
rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$name" ] || name="cqlbench-loader:${version}-${rev}"
case "$name" in
  *[!a-z0-9._/:-]* | "" | :* | */ ) echo "image: '$name' is not an image name (lower-case letters, digits, . _ - / and one :TAG)" >&2; exit 2 ;;
esac
out_dir=$(dirname "$out")
mkdir -p "$out_dir"
[ -d "$out" ] && { echo "image: '$out' is a directory: give the archive's file name" >&2; exit 2; }

work=$(mktemp -d)
storage=(--root "$work/storage" --runroot "$work/run" --storage-driver vfs)
ctr=""
cleanup() {
  if [ -n "$ctr" ]; then buildah "${storage[@]}" rm "$ctr" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The root filesystem: each program and every library it loads, at their host paths.
root="$work/rootfs"
mkdir -p "$root/usr/local/bin" "$root/tmp" "$root/home/cqlbench" "$root/etc"
chmod 1777 "$root/tmp"
chmod 0777 "$root/home/cqlbench"
strip -o "$root/usr/local/bin/cqlbench" "$binary"
programs=("$root/usr/local/bin/cqlbench" "$(command -v sleep)" "$(command -v tar)")
if [ "$probe_tools" = 1 ]; then
  for tool in fio sysbench; do
    path=$(command -v "$tool") || { echo "image: $tool is not installed (apt-get install $tool, or --no-probe-tools)" >&2; exit 1; }
    programs+=("$path")
  done
fi
for p in "${programs[@]}"; do
  case "$p" in "$root"/*) ;; *) cp --parents -L "$p" "$root" ;; esac
  ldd "$p" | grep -o '/[^ ]*' | while read -r lib; do
    [ -e "$root$lib" ] || cp --parents -L "$lib" "$root"
  done
done
printf 'root:x:0:0:root:/root:/bin/false\ncqlbench:x:1000:1000:cqlbench:/home/cqlbench:/bin/false\n' >"$root/etc/passwd"
printf 'root:x:0:\ncqlbench:x:1000:\n' >"$root/etc/group"

ctr=$(buildah "${storage[@]}" from scratch)
buildah "${storage[@]}" copy "$ctr" "$root" / >/dev/null
buildah "${storage[@]}" config \
  --env PATH=/usr/local/bin:/usr/bin:/bin \
  --env HOME=/home/cqlbench \
  --workingdir /home/cqlbench \
  --entrypoint '[]' --cmd '["cqlbench", "--help"]' \
  --label org.opencontainers.image.title=cqlbench-loader \
  --label org.opencontainers.image.version="$version" \
  --label org.opencontainers.image.revision="$rev" \
  "$ctr"
rm -f "$out"
buildah "${storage[@]}" commit --quiet --format oci --disable-compression=false "$ctr" "oci-archive:$out:$name" >/dev/null
end=$(date +%s.%N)
size=$(stat -c %s "$out")
awk -v n="$name" -v o="$out" -v s="$size" -v a="$start" -v b="$end" \
  'BEGIN { printf "image %s\narchive %s (%.1f MiB)\nbuilt in %.1f s\n", n, o, s / 1048576, b - a }'
