#!/usr/bin/env bash
# Builds the fsbench container image from a static fsbench binary, without a
# Docker daemon: `make image` runs it (see docs/container.md).
#
#   deploy/image.sh BINARY VERSION IMAGE ARCHIVE
#
# BINARY is a static (CGO_ENABLED=0) fsbench; the image is tagged IMAGE:VERSION
# in the local podman image store and saved as an OCI archive to ARCHIVE.
# The build context is a temporary directory holding the binary and the few
# files a scratch image lacks: the build host's CA certificates, a passwd and
# group with the non-root user 65532 and a /tmp of mode 1777.
#
# Environment: PODMAN (the podman command; default podman), ARCH (the
# image's architecture; default the host's), TIMESTAMP (seconds since the
# epoch for the image's and files' dates, so that a rebuild of one commit
# gives the same layers), REVISION (the source commit, for the labels).
set -euo pipefail
umask 022 # the context's modes are the image's

if [ $# -ne 4 ]; then
	echo "usage: $0 BINARY VERSION IMAGE ARCHIVE" >&2
	exit 2
fi
binary=$1 version=$2 image=$3 archive=$4

# add_docker_manifest ARCHIVE REF adds docker save's manifest.json to an OCI
# archive of one image, naming the OCI blobs as its config and layers (the
# layout docker save itself writes since Docker 25), so that `docker load`
# with Docker's classic image store reads the archive too.
add_docker_manifest() {
	local archive=$1 ref=$2 index manifest digests tmp
	index="$(tar -xOf "$archive" index.json)"
	digests=($(grep -o '"digest":"sha256:[0-9a-f]*"' <<<"$index" | cut -d'"' -f4))
	[ ${#digests[@]} -eq 1 ] || { echo "image.sh: $archive: ${#digests[@]} manifests, want 1" >&2; return 1; }
	manifest="$(tar -xOf "$archive" "blobs/sha256/${digests[0]#sha256:}")"
	# config's digest comes first, then the layers' (annotations hold none).
	digests=($(grep -o '"digest":"sha256:[0-9a-f]*"' <<<"${manifest%%\"annotations\":*}" | cut -d'"' -f4))
	local config="blobs/sha256/${digests[0]#sha256:}" layers="" d
	for d in "${digests[@]:1}"; do layers+="${layers:+,}\"blobs/sha256/${d#sha256:}\""; done
	tmp="$(mktemp -d)"
	printf '[{"Config":"%s","RepoTags":["%s"],"Layers":[%s]}]\n' "$config" "$ref" "$layers" >"$tmp/manifest.json"
	tar -rf "$archive" -C "$tmp" --owner=0 --group=0 --numeric-owner --mtime="@${TIMESTAMP:-0}" manifest.json
	rm -rf "$tmp"
}
here="$(cd "$(dirname "$0")" && pwd)"
read -r -a podman <<<"${PODMAN:-podman}"
cacerts=/etc/ssl/certs/ca-certificates.crt

[ -f "$binary" ] || { echo "image.sh: no binary at $binary (run make image)" >&2; exit 1; }
[ -f "$cacerts" ] || { echo "image.sh: $cacerts missing (apt-get install ca-certificates)" >&2; exit 1; }

ctx="$(mktemp -d "${TMPDIR:-/tmp}/fsbench-image-XXXXXX")"
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/rootfs/etc/ssl/certs" "$ctx/rootfs/tmp" "$ctx/rootfs/home" "$ctx/nonroot"
chmod 1777 "$ctx/rootfs/tmp"
cp "$cacerts" "$ctx/rootfs/etc/ssl/certs/ca-certificates.crt"
cat >"$ctx/rootfs/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
EOF
cat >"$ctx/rootfs/etc/group" <<'EOF'
root:x:0:
nobody:x:65534:
nonroot:x:65532:
EOF
chmod 0644 "$ctx/rootfs/etc/passwd" "$ctx/rootfs/etc/group" "$ctx/rootfs/etc/ssl/certs/ca-certificates.crt"
install -m 0755 "$binary" "$ctx/fsbench"

args=(build --layers=false --file "$here/Dockerfile" --tag "$image:$version"
	--build-arg "VERSION=$version" --build-arg "REVISION=${REVISION:-}")
[ -n "${ARCH:-}" ] && args+=(--arch "$ARCH")
[ -n "${TIMESTAMP:-}" ] && args+=(--timestamp "$TIMESTAMP")
"${podman[@]}" "${args[@]}" "$ctx"

mkdir -p "$(dirname "$archive")"
rm -f "$archive"
"${podman[@]}" save --format oci-archive --output "$archive" "$image:$version"
add_docker_manifest "$archive" "$image:$version"
echo "image.sh: $image:$version in the local image store and in $archive" >&2
