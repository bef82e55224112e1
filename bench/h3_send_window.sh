#!/usr/bin/env bash
# HTTP/3 send window A/B: `peregrine serve --h3` with `--h3-send-window 4MiB` (the default)
# against 10,000,000 bytes (quinn's own default), the same binary, alternated over ROUNDS
# rounds: a 1 MiB file at 4 connections x 4 streams, `peregrine load --h3 -t1`, server pinned
# to CPU 0 and the load to CPU 1, DURATION seconds each. Prints req/s, errors and p50 per run.
#
# usage: bench/h3_send_window.sh      (ROUNDS=3 DURATION=5; BIN=DIR uses DIR/peregrine
#                                      instead of building target/release/peregrine)
# Everything runs on 127.0.0.1; each server is stopped by PID.
set -euo pipefail
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5}
PORT=${BASE_PORT:-18871}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${BIN:-}" ]; then
    (cd "$ROOT" && cargo build --release -q -p peregrine-cli)
    BIN="$ROOT/target/release"
fi
WORK=$(mktemp -d /tmp/peregrine-h3-window.XXXXXX)
PID=
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

mkdir -p "$WORK/www"
head -c $((1 << 20)) /dev/urandom >"$WORK/www/1m.bin"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null

for r in $(seq "$ROUNDS"); do
    for window in 4MiB 10000000; do
        taskset -c 0 "$BIN/peregrine" serve "$WORK/www" --addr "127.0.0.1:$PORT" --workers 1 \
            --quiet --drain-grace 0 --h3 --h3-send-window "$window" \
            --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem" >/dev/null &
        PID=$!
        sleep 1
        taskset -c 1 "$BIN/peregrine" load --h3 --insecure -t 1 -c 4 -m 4 -d "${DURATION}s" \
            --no-progress --json - "https://127.0.0.1:$PORT/1m.bin" 2>/dev/null |
            python3 -c 'import json, sys
r = json.load(sys.stdin)
print("round %s window %s: %.1f req/s, errors %d, p50 %d us"
      % (sys.argv[1], sys.argv[2], r["req_per_s"], r["errors_total"], r["latency_us"]["p50"]))' \
            "$r" "$window"
        kill "$PID"
        wait "$PID" 2>/dev/null || true
        PID=
        PORT=$((PORT + 1))
    done
done
