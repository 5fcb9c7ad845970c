# Shell functions the peer scripts (bench-peers.sh, bench-items.sh) share;
# sourced, not run. The caller sets MINIO (the server binary) and work (a
# directory of its own, removed at the end) and kills $minio_pid on exit.

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start_minio NAME: a fresh MinIO server on 127.0.0.1 with a random password
# and its data under $work/minio, as the tests start it
# (internal/testenv/minio.go). Sets MINIO_ADDR, AK, SK and minio_pid; on
# failure prints "NAME: ..." and exits 1.
start_minio() {
	local port cport
	port=$(free_port) cport=$(free_port)
	MINIO_ADDR=127.0.0.1:$port AK=${1}admin SK=$1-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
	MINIO_ROOT_USER=$AK MINIO_ROOT_PASSWORD=$SK MINIO_BROWSER=off MINIO_UPDATE=off CI= \
		"$MINIO" server --quiet --address "$MINIO_ADDR" --console-address "127.0.0.1:$cport" "$work/minio" >"$work/minio.log" 2>&1 &
	minio_pid=$!
	for _ in $(seq 300); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$MINIO_ADDR/minio/health/ready")" = 200 ] && return 0
		kill -0 "$minio_pid" 2>/dev/null || break
		sleep 0.2
	done
	echo "$1: MinIO did not start: $(tail -3 "$work/minio.log")" >&2
	exit 1
}
