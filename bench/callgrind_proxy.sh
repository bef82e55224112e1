#!/usr/bin/env bash
# User-space instructions per proxied request of `peregrine proxy`, counted by callgrind
# (repeatable on a loaded machine; the kernel's share is not counted): the proxy runs under
# callgrind in front of the plaintext example (not under callgrind), and bench/callgrind.sh
# sends the requests through it, (a) one at a time on 8 connections and (b) 16 pipelined.
#
# usage: bench/callgrind_proxy.sh            (N=20000 by default, as bench/callgrind.sh)
#        ARGS='--keepalive 64' bench/callgrind_proxy.sh   (extra proxy arguments)
# Everything runs on 127.0.0.1; both processes are stopped at exit.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BACKEND_PORT=${BACKEND_PORT:-18495}
BACKEND=

cleanup() {
    [ -n "$BACKEND" ] && kill "$BACKEND" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

for bin in peregrine examples/plaintext; do
    [ -x "$ROOT/target/release/$bin" ] || {
        echo "build first: cargo build --release -p peregrine-cli -p peregrine --example plaintext" >&2
        exit 1
    }
done
"$ROOT/target/release/examples/plaintext" --addr "127.0.0.1:$BACKEND_PORT" --workers 1 &
BACKEND=$!
for _ in $(seq 50); do
    curl -sf "http://127.0.0.1:$BACKEND_PORT/plaintext" >/dev/null 2>&1 && break
    sleep 0.1
done

PRE_ARGS=proxy ARGS="--quiet --to http://127.0.0.1:$BACKEND_PORT ${ARGS:-}" \
    "$ROOT/bench/callgrind.sh" "$ROOT/target/release/peregrine"
