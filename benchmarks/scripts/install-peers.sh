#!/usr/bin/env bash
# Builds the peers the speed scripts run fsbench beside, from their released
# sources as the Go module proxy serves them, into the test binaries'
# directory (~/.cache/fsbench-test/bin, or FSBENCH_TEST_BIN): MinIO's warp
# (bench-peers) and juicefs (bench-items). `go install` of either is
# refused (their go.mod has replace directives, or the checksum database
# does not know the version), so the script downloads the module and builds
# it in a copy. A peer already there at its version is kept. fio (bench-compare,
# bench-fio) comes from Debian: apt-get install fio.
#
# Environment: WARP_VERSION (default v1.3.1), JUICEFS_VERSION (default
# v1.4.1), PEERS (default "warp juicefs"). juicefs takes several minutes to
# build on two cores.
set -euo pipefail
BIN_DIR=${FSBENCH_TEST_BIN:-$HOME/.cache/fsbench-test/bin}
WARP_VERSION=${WARP_VERSION:-v1.3.1}
JUICEFS_VERSION=${JUICEFS_VERSION:-v1.4.1}
PEERS=${PEERS:-warp juicefs}
die() { echo "install-peers: $*" >&2; exit 1; }
command -v go >/dev/null || die "needs go"
mkdir -p "$BIN_DIR"

# build NAME MODULE VERSION [LDFLAGS]: NAME into BIN_DIR from MODULE@VERSION.
build() {
	local name=$1 module=$2 version=$3 ldflags=${4:-} dir src
	# warp 1.3.1 is not in the checksum database; the proxy's copy is
	# taken as it is.
	dir=$(GONOSUMDB=$module GOFLAGS=-mod=mod go mod download -json "$module@$version" |
		python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("Dir") or ""); sys.exit("install-peers: " + d["Error"] if d.get("Error") else 0)') ||
		die "cannot download $module@$version"
	src=$(mktemp -d "${TMPDIR:-/tmp}/fsbench-peer.XXXXXX")
	cp -r "$dir/." "$src" && chmod -R u+w "$src"
	echo "install-peers: building $name $version (this can take minutes)" >&2
	(cd "$src" && GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$BIN_DIR/$name.new" .) || {
		rm -rf "$src"
		die "building $name failed"
	}
	rm -rf "$src"
	mv "$BIN_DIR/$name.new" "$BIN_DIR/$name"
}

for peer in $PEERS; do
	case $peer in
	warp)
		[ -x "$BIN_DIR/warp" ] && "$BIN_DIR/warp" --version 2>/dev/null | grep -q "${WARP_VERSION#v}" ||
			build warp github.com/minio/warp "$WARP_VERSION" "-X github.com/minio/warp/pkg.Version=${WARP_VERSION#v}"
		;;
	juicefs)
		[ -x "$BIN_DIR/juicefs" ] && "$BIN_DIR/juicefs" version 2>/dev/null | grep -q "${JUICEFS_VERSION#v}" ||
			build juicefs github.com/juicedata/juicefs "$JUICEFS_VERSION"
		;;
	*) die "unknown peer $peer (want warp, juicefs)" ;;
	esac
	echo "install-peers: $BIN_DIR/$peer: $("$BIN_DIR/$peer" --version 2>/dev/null | head -1)"
done
command -v fio >/dev/null || echo "install-peers: fio is not installed (apt-get install fio)" >&2
