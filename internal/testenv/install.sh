#!/usr/bin/env bash
# Installs what fsbench's test suite needs on a fresh Debian machine:
# FUSE (bindfs), fio, an NFSv3 server (nfs-ganesha with its VFS backend,
# rpcbind), iproute2 (test hosts in network namespaces), headless Chromium
# with a font (the HTML report's browser test), podman and runc (the
# container image's build and tests), Open MPI's mpirun (launched runs), time and curl (bench-peers.sh), a
# MinIO server built from the Go module proxy, and kubernetes-validate (the
# manifests' schema check) in a virtualenv. Everything is idempotent: a
# second run finds it all in place and does nothing.
set -euo pipefail

BIN_DIR="${FSBENCH_TEST_BIN:-$HOME/.cache/fsbench-test/bin}"
# The MinIO server the tests run against, pinned so every machine tests the
# same server.
MINIO_VERSION="${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"
# The schema checker of deploy/k8s, pinned like MinIO; the Kubernetes version
# it checks against is pinned in internal/cli/deploy_test.go.
KUBERNETES_VALIDATE_VERSION="${KUBERNETES_VALIDATE_VERSION:-1.37.0}"
VENV="$(dirname "$BIN_DIR")/venv"
mkdir -p "$BIN_DIR"

need_apt=()
command -v bindfs >/dev/null || need_apt+=(bindfs)
command -v fusermount >/dev/null || command -v fusermount3 >/dev/null || need_apt+=(fuse3)
command -v fio >/dev/null || need_apt+=(fio)
command -v ganesha.nfsd >/dev/null || need_apt+=(nfs-ganesha)
[ -e /usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so ] || [ -n "$(ls /usr/lib/*/ganesha/libfsalvfs.so 2>/dev/null)" ] || need_apt+=(nfs-ganesha-vfs)
command -v rpcbind >/dev/null || [ -x /usr/sbin/rpcbind ] || need_apt+=(rpcbind)
command -v openssl >/dev/null || need_apt+=(openssl)
[ -x /usr/bin/time ] || need_apt+=(time) # bench-peers.sh: peak memory of each run
command -v curl >/dev/null || need_apt+=(curl)
# fsbench replay's tests record real programs' file calls.
command -v strace >/dev/null || need_apt+=(strace)
command -v python3 >/dev/null || need_apt+=(python3)
# --metrics-listen and fsbench probe: a real server scrapes, a real gateway receives.
command -v prometheus >/dev/null || need_apt+=(prometheus)
command -v promtool >/dev/null || need_apt+=(prometheus)
command -v prometheus-pushgateway >/dev/null || need_apt+=(prometheus-pushgateway)
command -v ip >/dev/null || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || need_apt+=(iproute2)
command -v chromium >/dev/null || need_apt+=(chromium)
dpkg -s fonts-liberation >/dev/null 2>&1 || need_apt+=(fonts-liberation)
command -v podman >/dev/null || need_apt+=(podman)
# Launched runs (mpirun -np 4 fsbench ...); ssh is how Open MPI's mpirun
# starts ranks on other hosts.
command -v mpirun >/dev/null || need_apt+=(openmpi-bin)
command -v ssh >/dev/null || need_apt+=(openssh-client)
command -v runc >/dev/null || [ -x /usr/sbin/runc ] || need_apt+=(runc)
[ -f /etc/ssl/certs/ca-certificates.crt ] || need_apt+=(ca-certificates)
[ -x "$VENV/bin/python" ] || python3 -m venv --help >/dev/null 2>&1 || need_apt+=(python3-venv)

if [ ${#need_apt[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install.sh: need root to install: ${need_apt[*]}" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# The module version a binary was built from ("" if unknown). A server
# built by go install prints no version of its own (minio --version says
# DEVELOPMENT.GOGET), so its build information is read instead; testenv
# checks the same (checkMinIOVersion in minio.go).
built_version() {
	go version -m "$1" 2>/dev/null | awk '$1 == "mod" && $2 == "github.com/minio/minio" { print $3 }'
}

if [ ! -x "$BIN_DIR/minio" ] || [ "$(built_version "$BIN_DIR/minio")" != "$MINIO_VERSION" ]; then
	echo "install.sh: building the MinIO server $MINIO_VERSION (a few minutes, once)" >&2
	rm -f "$BIN_DIR/minio"
	GOBIN="$BIN_DIR" GOFLAGS=-buildvcs=false go install "github.com/minio/minio@$MINIO_VERSION"
fi

if [ "$("$VENV/bin/kubernetes-validate" --version 2>/dev/null)" != "$KUBERNETES_VALIDATE_VERSION" ]; then
	[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
	"$VENV/bin/pip" install --quiet --disable-pip-version-check "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
fi
ln -sf "$VENV/bin/kubernetes-validate" "$BIN_DIR/kubernetes-validate"
echo "install.sh: test tools ready (bindfs, fio, nfs-ganesha, prometheus, pushgateway, iproute2, chromium, podman, strace; minio and kubernetes-validate in $BIN_DIR)" >&2
