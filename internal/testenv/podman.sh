#!/usr/bin/env bash
# Runs podman with the settings fsbench's image build and image tests need,
# so `make image` and the tests invoke it the same way:
#
#   internal/testenv/podman.sh build ...
#   internal/testenv/podman.sh run --rm IMAGE --version
#
# On hosts with a hybrid cgroup layout crun refuses to start containers, so
# runc is used with the cgroupfs manager when runc is installed. Hosts that
# may not raise the open-file limit refuse podman's default ulimits, so a
# containers.conf without them is written to the cache directory and passed
# in CONTAINERS_CONF (unless the caller already sets CONTAINERS_CONF).
# FSBENCH_PODMAN_FLAGS replaces the global flags ("" for none).
set -euo pipefail

if ! command -v podman >/dev/null; then
	echo "podman.sh: podman not found (apt-get install podman runc)" >&2
	exit 127
fi

if [ -z "${CONTAINERS_CONF:-}" ]; then
	conf_dir="${FSBENCH_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fsbench-test}"
	mkdir -p "$conf_dir"
	conf="$conf_dir/containers.conf"
	want=$'[containers]\n# the open-file limit may not be set here: keep the host\'s\ndefault_ulimits = []'
	if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$want" ]; then
		tmp="$(mktemp "$conf.XXXXXX")"
		printf '%s\n' "$want" >"$tmp"
		mv -f "$tmp" "$conf"
	fi
	export CONTAINERS_CONF="$conf"
fi

if [ -n "${FSBENCH_PODMAN_FLAGS+set}" ]; then
	read -r -a flags <<<"$FSBENCH_PODMAN_FLAGS"
elif command -v runc >/dev/null || [ -x /usr/sbin/runc ]; then
	flags=(--runtime runc --cgroup-manager=cgroupfs)
else
	flags=()
fi

exec podman "${flags[@]}" "$@"
