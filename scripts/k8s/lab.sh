#!/usr/bin/env bash
# A single-node Kubernetes lab cluster on this machine, from the binaries that scripts/k8s/build.sh
# built (no kubeadm, no registry, no systemd):
#
#   scripts/k8s/lab.sh up       start etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
#                               a private containerd and kubelet; wait for the node to be Ready
#   scripts/k8s/lab.sh down     stop all of them, clean up containers, mounts, cgroups, CNI bridge
#   scripts/k8s/lab.sh status   what is running
#   scripts/k8s/lab.sh demo     (after up) build a tiny test image, run a hostNetwork pod and an
#                               Indexed Job (completions 2, parallelism 2) in namespace lab-demo
#   scripts/k8s/lab.sh load FILE (after up) import an image archive (OCI or docker, e.g. the one
#                               scripts/image.sh writes) into the lab's containerd; pods use it
#                               with imagePullPolicy Never or IfNotPresent (there is no registry)
#
# Everything lives in a private state dir, K8S_LAB_DIR
# (default ${CQLBENCH_HOME:-$HOME/.local/share/cqlbench}/k8s-lab): certificates, etcd data,
# containerd root/state/socket, kubelet root dir, pod logs, logs of every process (log/) and one
# PID file per process (run/). The kubeconfig is $K8S_LAB_DIR/kubeconfig
# (export KUBECONFIG=... or kubectl --kubeconfig ...). See LAB.md for timings and details.
#
# Ports (all on 127.0.0.1, none of them defaults): etcd 12379/12380, kube-apiserver 16443,
# controller-manager 20257, scheduler 20259, kubelet healthz 20248. kubelet's API listens on
# 20250 on the node IP 198.19.251.1, a /32 that `up` adds to lo (kubelet refuses a loopback
# node IP) and `down` removes. Service CIDR 198.19.240.0/24, pod CIDR (bridge "cqlb-lab0",
# host-local IPAM) 198.19.250.0/24: RFC 2544 benchmarking space, no gateway, no masquerade,
# no iptables rules. No kube-proxy, no DNS: meant for hostNetwork pods.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.34.3}
BIN=${K8S_CACHE:-${CQLBENCH_HOME:-$HOME/.local/share/cqlbench}/cache/k8s/$K8S_VERSION/bin}
S=${K8S_LAB_DIR:-${CQLBENCH_HOME:-$HOME/.local/share/cqlbench}/k8s-lab}
NODE=cqlbench-lab
NODE_IP=198.19.251.1
SERVICE_CIDR=198.19.240.0/24
SERVICE_IP=198.19.240.1
POD_CIDR=198.19.250.0/24
BRIDGE=cqlb-lab0
ETCD_PORT=12379
ETCD_PEER_PORT=12380
API_PORT=16443
KUBELET_PORT=20250
PAUSE_IMAGE=localhost/cqlbench-lab/pause:1
DEMO_IMAGE=localhost/cqlbench-lab/hello:2
SOCK=$S/containerd/containerd.sock
KC=$S/kubeconfig
HOST_DIRS="/var/lib/kubelet /var/lib/kubelet/device-plugins /var/log/containers /run/containerd /run/containerd/s /run/netns"
COMPONENTS="etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet"

log() { printf '[k8s-lab %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { echo "lab.sh: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}'; }
kubectl() { "$BIN/kubectl" --kubeconfig "$KC" "$@"; }
ctr_() { ctr -a "$SOCK" -n k8s.io "$@"; }

# --- processes ------------------------------------------------------------------------------
# The PID file holds the PID; a PID counts as ours only while /proc/PID/exe is the expected binary,
# so a reused PID is never signalled.
pid_of() {
  local name=$1 pid exe want
  [ -f "$S/run/$name.pid" ] || return 1
  pid=$(cat "$S/run/$name.pid")
  [ -n "$pid" ] && alive "$pid" || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  case $name in containerd) want=/usr/bin/containerd ;; *) want=$BIN/$name ;; esac
  [ "$exe" = "$want" ] || return 1
  echo "$pid"
}

start() {
  local name=$1; shift
  if pid_of "$name" >/dev/null; then log "$name already running (pid $(pid_of "$name"))"; return 0; fi
  # setsid: own session, so that a Ctrl-C in this shell does not reach it.
  setsid "$@" >>"$S/log/$name.log" 2>&1 </dev/null &
  echo $! >"$S/run/$name.pid"
  log "started $name (pid $!, log $S/log/$name.log)"
}

# Alive: /proc/PID exists and is not a zombie (our processes are reparented to PID 1 once this
# script exits, and their /proc entry lingers until PID 1 reaps them).
alive() { [ -d "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

stop() {
  local name=$1 pid i
  if pid=$(pid_of "$name"); then
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 100); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then log "$name (pid $pid) ignored SIGTERM for 10 s: SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; sleep 0.5; fi
    log "stopped $name (pid $pid)"
  fi
  rm -f "$S/run/$name.pid"
}

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
  local secs=$1 what=$2 i; shift 2
  for i in $(seq 1 $((secs * 2))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  die "timed out after ${secs}s waiting for $what (logs in $S/log)"
}

# --- certificates ---------------------------------------------------------------------------
cert() { # cert NAME SUBJECT [SAN]   -> pki/NAME.crt, pki/NAME.key signed by pki/ca
  local name=$1 subj=$2 san=${3:-} p=$S/pki
  [ -s "$p/$name.crt" ] && return 0
  openssl genrsa -out "$p/$name.key" 2048 2>/dev/null
  openssl req -new -key "$p/$name.key" -subj "$subj" -out "$p/$name.csr" 2>/dev/null
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    if [ -n "$san" ]; then echo "extendedKeyUsage=serverAuth,clientAuth"; echo "subjectAltName=$san"
    else echo "extendedKeyUsage=clientAuth"; fi
  } >"$p/$name.ext"
  openssl x509 -req -in "$p/$name.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$p/$name.ext" -out "$p/$name.crt" 2>/dev/null
  rm -f "$p/$name.csr" "$p/$name.ext"
}

kubeconfig() { # kubeconfig FILE CERTNAME
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $S/pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $S/pki/$2.crt
    client-key: $S/pki/$2.key
contexts:
- name: lab
  context: {cluster: lab, user: $2}
current-context: lab
EOF
}

make_pki() {
  mkdir -p "$S/pki"; chmod 700 "$S/pki"
  local p=$S/pki
  if [ ! -s "$p/ca.crt" ]; then
    openssl genrsa -out "$p/ca.key" 2048 2>/dev/null
    openssl req -x509 -new -key "$p/ca.key" -subj "/CN=cqlbench-lab-ca" -days 3650 -sha256 -out "$p/ca.crt" 2>/dev/null
  fi
  [ -s "$p/sa.key" ] || { openssl genrsa -out "$p/sa.key" 2048 2>/dev/null; openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null; }
  cert apiserver "/CN=kube-apiserver" \
    "IP:127.0.0.1,IP:$SERVICE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  cert admin "/O=system:masters/CN=cqlbench-lab-admin"
  cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  cert controller-manager "/CN=system:kube-controller-manager"
  cert scheduler "/CN=system:kube-scheduler"
  cert kubelet-client "/O=system:nodes/CN=system:node:$NODE"
  cert kubelet-server "/CN=$NODE" "IP:$NODE_IP,DNS:$NODE"
  kubeconfig "$KC" admin
  kubeconfig "$S/controller-manager.kubeconfig" controller-manager
  kubeconfig "$S/scheduler.kubeconfig" scheduler
  kubeconfig "$S/kubelet.kubeconfig" kubelet-client
}

# --- images (built locally: there is no registry) -------------------------------------------
# pause: the sandbox ("infra") container's program; it sleeps until SIGTERM/SIGINT.
# hello: the demo program; prints its host name, JOB_COMPLETION_INDEX and its arguments.
write_sources() {
  mkdir -p "$S/images/src/pause" "$S/images/src/hello"
  cat >"$S/images/src/pause/main.go" <<'EOF'
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
EOF
  cat >"$S/images/src/hello/main.go" <<'EOF'
package main

import (
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

func main() {
	h, _ := os.Hostname()
	fmt.Printf("hello from cqlbench-lab: hostname=%s JOB_COMPLETION_INDEX=%q args=%s\n",
		h, os.Getenv("JOB_COMPLETION_INDEX"), strings.Join(os.Args[1:], " "))
	// dial=HOST:PORT: open a TCP connection (shows what a hostNetwork pod can reach).
	for _, a := range os.Args[1:] {
		if addr, ok := strings.CutPrefix(a, "dial="); ok {
			c, err := net.DialTimeout("tcp", addr, 3*time.Second)
			if err != nil {
				fmt.Printf("dial %s: %v\n", addr, err)
				os.Exit(1)
			}
			fmt.Printf("dial %s: connected from %s\n", addr, c.LocalAddr())
			c.Close()
		}
	}
}
EOF
  for d in pause hello; do printf 'module cqlbench.local/lab/%s\n\ngo 1.22\n' "$d" >"$S/images/src/$d/go.mod"; done
}

build_image() { # build_image NAME REF -> images/NAME-TAG.tar (docker-archive); skipped if present
  local name=$1 ref=$2 tar=$S/images/$1-${2##*:}.tar work c
  [ -s "$tar" ] && return 0
  command -v go >/dev/null || die "go is needed to build the $name image"
  command -v buildah >/dev/null || die "buildah is needed to build the $name image (apt-get install buildah)"
  write_sources
  (cd "$S/images/src/$name" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false \
    go build -trimpath -ldflags "-s -w" -o "$S/images/$name.bin" .)
  work=$(mktemp -d)
  local st=(--root "$work/storage" --runroot "$work/run" --storage-driver vfs)
  c=$(buildah "${st[@]}" from scratch)
  buildah "${st[@]}" copy "$c" "$S/images/$name.bin" "/$name" >/dev/null
  buildah "${st[@]}" config --entrypoint "[\"/$name\"]" --cmd '[]' "$c"
  buildah "${st[@]}" commit -q "$c" "$ref" >/dev/null
  buildah "${st[@]}" push -q "$ref" "docker-archive:$tar.tmp:$ref" >/dev/null 2>&1
  buildah "${st[@]}" rm "$c" >/dev/null
  rm -rf "$work"
  mv "$tar.tmp" "$tar"
  log "built image $ref -> $tar"
}

# (The list is read into a variable first: with pipefail, `ctr ... | grep -q` fails whenever grep
# exits before ctr has written everything and ctr dies of SIGPIPE.)
has_node_ip() { local l; l=$(ip -4 addr show dev lo) && grep -q " $NODE_IP/32" <<<"$l"; }
has_image() { local l; l=$(ctr_ images ls -q) && grep -qx "$1" <<<"$l"; }

import_image() { # import_image NAME REF
  local tar=$S/images/$1-${2##*:}.tar
  if has_image "$2"; then return 0; fi
  ctr_ images import "$tar" >/dev/null
  has_image "$2" || die "import of $tar did not create $2"
  log "imported $2 into containerd (namespace k8s.io)"
}

# --- configuration files --------------------------------------------------------------------
write_configs() {
  mkdir -p "$S/containerd/root" "$S/containerd/state" "$S/containerd/opt" "$S/cni/net.d" "$S/cni/ipam" \
    "$S/kubelet/root" "$S/kubelet/pod-logs"
  cat >"$S/containerd/config.toml" <<EOF
version = 2
root = "$S/containerd/root"
state = "$S/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$S/containerd/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$S/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  enable_selinux = false
  # This machine denies lowering oom_score_adj even to root ("failed to update
  # /proc/self/oom_score_adj: Permission denied" from runc); clamp to containerd's own value.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$S/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$S/cni/net.d"
    max_conf_num = 1
EOF
  cat >"$S/cni/net.d/10-cqlbench-lab.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "cqlbench-lab",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": false,
      "isDefaultGateway": false,
      "ipMasq": false,
      "hairpinMode": false,
      "ipam": {
        "type": "host-local",
        "dataDir": "$S/cni/ipam",
        "ranges": [[{"subnet": "$POD_CIDR"}]]
      }
    },
    {"type": "loopback"}
  ]
}
EOF
  cat >"$S/kubelet/config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# cgroup v1 host without systemd as PID 1: cgroupfs driver (containerd: SystemdCgroup = false)
cgroupDriver: cgroupfs
# v1.34 defaults to false already; v1.35 flips it to true (KEP 5573), so say it.
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$SOCK
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 20248
tlsCertFile: $S/pki/kubelet-server.crt
tlsPrivateKeyFile: $S/pki/kubelet-server.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $S/pki/ca.crt}
authorization:
  mode: AlwaysAllow
podLogsDir: $S/kubelet/pod-logs
resolvConf: /etc/resolv.conf
clusterDomain: cluster.local
staticPodPath: ""
maxPods: 32
serializeImagePulls: false
# Otherwise kubelet adds KUBE-IPTABLES-HINT / KUBE-KUBELET-CANARY chains (v4 and v6) and a
# KUBE-FIREWALL chain hooked into INPUT and OUTPUT ("block incoming localnet connections").
makeIPTablesUtilChains: false
# The disk is shared with other work and is ~74 % full: keep the defaults (nodefs 10 %, image GC
# at 85 %) from tainting the node or deleting the locally imported images.
evictionHard:
  memory.available: "200Mi"
  nodefs.available: "1%"
  nodefs.inodesFree: "1%"
  imagefs.available: "1%"
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOF
}

# Ready, and (when KUBELET_STARTED is set) reported by this kubelet run: on a warm start the
# node object in etcd still says Ready=True from the previous run.
KUBELET_STARTED=""
node_ready() {
  local r
  r=$(kubectl get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].lastHeartbeatTime}' 2>/dev/null) || return 1
  [ "${r%% *}" = True ] || return 1
  [ -z "$KUBELET_STARTED" ] || [[ ! "${r#* }" < "$KUBELET_STARTED" ]]
}

node_untainted() {
  [ -z "$(kubectl get node "$NODE" -o jsonpath='{.spec.taints}' 2>/dev/null)" ] && node_ready
}

# --- up -------------------------------------------------------------------------------------
up() {
  local t0 t i b
  t0=$(now)
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
    [ -x "$BIN/$b" ] || die "$BIN/$b is missing: build the binaries first with scripts/k8s/build.sh"
  done
  for b in containerd ctr runc openssl ip; do command -v $b >/dev/null || die "$b is not installed (apt-get install containerd runc openssl iproute2)"; done
  [ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] || die "CNI plugins missing in /usr/lib/cni (apt-get install containernetworking-plugins)"
  [ "$(id -u)" = 0 ] || die "must run as root (kubelet and containerd)"
  mkdir -p "$S/run" "$S/log"
  chmod 700 "$S"
  # Fixed host paths that kubelet (device-plugin socket, /var/log/containers symlinks) and
  # containerd (shim sockets in /run/containerd/s) create whatever their configuration says:
  # remember the ones that do not exist yet, so that `down` removes exactly those (when empty).
  local d
  for d in $HOST_DIRS; do [ -e "$d" ] || grep -qx "$d" "$S/run/host-dirs" 2>/dev/null || echo "$d" >>"$S/run/host-dirs"; done
  log "state dir $S"
  make_pki
  write_configs
  build_image pause "$PAUSE_IMAGE"
  # The node IP: a /32 on lo (kubelet rejects a loopback node IP; this keeps kubelet off eth0).
  has_node_ip || ip addr add "$NODE_IP/32" dev lo

  t=$(now)
  start etcd "$BIN/etcd" --name lab --data-dir "$S/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "lab=http://127.0.0.1:$ETCD_PEER_PORT" --listen-metrics-urls "" \
    --quota-backend-bytes 2147483648 --log-level warn
  wait_for 60 etcd curl -fsS "http://127.0.0.1:$ETCD_PORT/health"
  log "etcd healthy after $(since "$t")s"

  t=$(now)
  start kube-apiserver "$BIN/kube-apiserver" \
    --bind-address 127.0.0.1 --secure-port "$API_PORT" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --service-cluster-ip-range "$SERVICE_CIDR" \
    --client-ca-file "$S/pki/ca.crt" \
    --tls-cert-file "$S/pki/apiserver.crt" --tls-private-key-file "$S/pki/apiserver.key" \
    --kubelet-client-certificate "$S/pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$S/pki/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types InternalIP \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$S/pki/sa.pub" --service-account-signing-key-file "$S/pki/sa.key" \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --allow-privileged=true --profiling=false --v=1
  wait_for 120 "kube-apiserver /readyz" kubectl get --raw /readyz
  log "kube-apiserver ready after $(since "$t")s"

  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig "$S/controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port 20257 --leader-elect=false \
    --use-service-account-credentials=true \
    --service-account-private-key-file "$S/pki/sa.key" --root-ca-file "$S/pki/ca.crt" \
    --cluster-signing-cert-file "$S/pki/ca.crt" --cluster-signing-key-file "$S/pki/ca.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" --profiling=false --v=1
  start kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig "$S/scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port 20259 --leader-elect=false --profiling=false --v=1

  t=$(now)
  start containerd /usr/bin/containerd --config "$S/containerd/config.toml"
  wait_for 60 containerd ctr -a "$SOCK" version
  log "containerd up after $(since "$t")s"
  import_image pause "$PAUSE_IMAGE"

  t=$(now)
  KUBELET_STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  start kubelet "$BIN/kubelet" --config "$S/kubelet/config.yaml" \
    --kubeconfig "$S/kubelet.kubeconfig" --root-dir "$S/kubelet/root" \
    --hostname-override "$NODE" --node-ip "$NODE_IP" --v=1
  wait_for 180 "node $NODE Ready" node_ready
  log "node $NODE Ready $(since "$t")s after kubelet start, $(since "$t0")s after 'up' began"
  # Ready comes before the node lifecycle controller lifts the node.kubernetes.io/not-ready
  # taint; pods schedule only after that.
  wait_for 120 "the not-ready taint to go" node_untainted
  log "node $NODE schedulable (no taints) $(since "$t0")s after 'up' began"
  echo "KUBECONFIG=$KC"
}

# --- down -----------------------------------------------------------------------------------
down() {
  local t0 pid m c netns=""
  t0=$(now)
  [ -d "$S" ] || { log "no state dir $S: nothing to do"; return 0; }
  stop kubelet
  # Containers and sandboxes: kill and delete every task and container in containerd's k8s.io
  # namespace (our containerd only), so that no shim or container is left behind.
  if pid_of containerd >/dev/null && ctr -a "$SOCK" version >/dev/null 2>&1; then
    # Network namespaces of pod-network sandboxes (CRI removes them in StopPodSandbox, which
    # this bypasses): remember them from the containers' specs.
    for c in $(ctr_ containers ls -q 2>/dev/null); do
      netns+=" $(ctr_ containers info "$c" 2>/dev/null | grep -o '"/var/run/netns/cni-[0-9a-f-]*"' | tr -d '"' | sort -u || true)"
    done
    for c in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s SIGKILL "$c" >/dev/null 2>&1 || true; done
    sleep 0.5
    for c in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks rm -f "$c" >/dev/null 2>&1 || true; done
    for c in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers rm "$c" >/dev/null 2>&1 || true; done
  fi
  stop containerd
  # Shims of our containerd carry our socket in their command line.
  for pid in $(pgrep -f -- "containerd-shim-runc-v2 .*-address $SOCK( |$)" || true); do
    log "killing leftover shim $pid"; kill -KILL "$pid" 2>/dev/null || true
  done
  stop kube-scheduler
  stop kube-controller-manager
  stop kube-apiserver
  stop etcd
  # Mounts under the state dir (pod volumes, rootfs overlays, sandbox shm), deepest first.
  for m in $(awk -v s="$S/" 'index($2, s) == 1 {print $2}' /proc/self/mounts | sort -r); do
    umount "$m" 2>/dev/null || umount -l "$m" || true
  done
  for m in $netns; do
    [ -e "$m" ] || continue
    umount "$m" 2>/dev/null || true; rm -f "$m" && log "removed network namespace $m"
  done
  # Network: the CNI bridge (exists only if a non-hostNetwork pod ever ran), the node IP.
  if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link del "$BRIDGE"; log "deleted bridge $BRIDGE"; fi
  has_node_ip && ip addr del "$NODE_IP/32" dev lo
  # kubelet's symlinks in /var/log/containers that point into our pod logs.
  for m in /var/log/containers/*.log; do
    [ -L "$m" ] && case $(readlink "$m") in "$S"/*) rm -f "$m" ;; esac
  done
  rm -f /var/lib/kubelet/device-plugins/kubelet.sock
  if [ -f "$S/run/host-dirs" ]; then
    for m in $(sort -r "$S/run/host-dirs"); do [ -d "$m" ] && rmdir "$m" 2>/dev/null && log "removed $m"; done
    rm -f "$S/run/host-dirs"
  fi
  iptables_cleanup
  # kubelet's pod cgroups (cgroupfs driver: /kubepods in every v1 hierarchy); empty by now.
  for c in /sys/fs/cgroup/*/kubepods; do
    [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  done
  log "down in $(since "$t0")s"
}

# kubelet's iptables utility chains, in case a kubelet without makeIPTablesUtilChains: false ran
# from this state dir; skipped while any other kubelet runs on the host (they would be its).
iptables_cleanup() {
  local cmd t ch
  [ -z "$(pgrep -x kubelet || true)" ] || return 0
  for cmd in iptables ip6tables; do
    command -v $cmd >/dev/null || continue
    while $cmd -t filter -D INPUT -j KUBE-FIREWALL 2>/dev/null; do :; done
    while $cmd -t filter -D OUTPUT -j KUBE-FIREWALL 2>/dev/null; do :; done
    for t in filter nat mangle; do
      for ch in KUBE-FIREWALL KUBE-KUBELET-CANARY KUBE-IPTABLES-HINT; do
        if $cmd -t $t -S "$ch" >/dev/null 2>&1; then
          $cmd -t $t -F "$ch" 2>/dev/null; $cmd -t $t -X "$ch" 2>/dev/null && log "$cmd: removed chain $ch ($t)"
        fi
      done
    done
  done
}

# --- status ---------------------------------------------------------------------------------
status() {
  local n pid any=0
  echo "state dir: $S"
  for n in $COMPONENTS; do
    if pid=$(pid_of "$n"); then echo "  $n: running (pid $pid)"; any=1; else echo "  $n: stopped"; fi
  done
  [ -n "$(pgrep -f -- "containerd-shim-runc-v2 .*-address $SOCK( |$)" || true)" ] && echo "  containerd shims: $(pgrep -f -- "containerd-shim-runc-v2 .*-address $SOCK( |$)" | tr '\n' ' ')"
  has_node_ip && echo "  node IP $NODE_IP/32 on lo"
  ip link show "$BRIDGE" >/dev/null 2>&1 && echo "  bridge $BRIDGE present"
  if [ $any = 1 ] && kubectl get --raw /readyz >/dev/null 2>&1; then
    echo "  KUBECONFIG=$KC"
    kubectl get nodes -o wide 2>&1 | sed 's/^/  /'
  fi
}

# --- demo -----------------------------------------------------------------------------------
demo() {
  local t
  node_ready || die "the lab is not up (scripts/k8s/lab.sh up)"
  build_image hello "$DEMO_IMAGE"
  import_image hello "$DEMO_IMAGE"
  kubectl create namespace lab-demo --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  # The ServiceAccount admission plugin rejects pods until the controller made "default".
  wait_for 60 "serviceaccount lab-demo/default" kubectl -n lab-demo get serviceaccount default
  kubectl -n lab-demo delete pod hello --ignore-not-found >/dev/null
  kubectl -n lab-demo delete job hello-indexed --ignore-not-found >/dev/null
  t=$(now)
  kubectl -n lab-demo apply -f - <<EOF
apiVersion: v1
kind: Pod
metadata: {name: hello}
spec:
  hostNetwork: true
  restartPolicy: Never
  automountServiceAccountToken: false
  containers:
  - name: hello
    image: $DEMO_IMAGE
    imagePullPolicy: Never
    args: ["single", "pod", "dial=127.0.0.1:$API_PORT"]
---
apiVersion: batch/v1
kind: Job
metadata: {name: hello-indexed}
spec:
  completions: 2
  parallelism: 2
  completionMode: Indexed
  backoffLimit: 0
  template:
    spec:
      hostNetwork: true
      restartPolicy: Never
      automountServiceAccountToken: false
      containers:
      - name: hello
        image: $DEMO_IMAGE
        imagePullPolicy: Never
        args: ["indexed", "job", "dial=127.0.0.1:$API_PORT"]
EOF
  kubectl -n lab-demo wait --for=jsonpath='{.status.phase}'=Succeeded pod/hello --timeout=120s
  kubectl -n lab-demo wait --for=condition=Complete job/hello-indexed --timeout=120s
  log "pod and Indexed Job completed $(since "$t")s after apply"
  kubectl -n lab-demo get pods -o wide
  for p in $(kubectl -n lab-demo get pods -o name); do echo "--- kubectl logs $p"; kubectl -n lab-demo logs "$p"; done
}

load() { # load FILE: an image archive into the lab's containerd, replacing a same-named image
  local tar=${1:?load needs an image archive}
  [ -f "$tar" ] || die "load: '$tar' is not a file"
  [ -S "$SOCK" ] || die "load: the lab's containerd is not running (scripts/k8s/lab.sh up)"
  ctr_ images import "$tar" | sed 's/^/  /' >&2 || die "load: ctr could not import $tar"
  log "imported $tar into containerd (namespace k8s.io)"
}

case "${1:-}" in
  up) up ;;
  load) load "${2:-}" ;;
  down) down ;;
  status) status ;;
  demo) demo ;;
  *) echo "usage: scripts/k8s/lab.sh up|down|status|demo|load FILE   (state dir ${S})" >&2; exit 2 ;;
esac
