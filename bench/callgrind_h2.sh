#!/usr/bin/env bash
# User-space instructions per HTTP/2 request of the plaintext example, counted by callgrind
# (repeatable on a loaded machine, unlike timings; kernel time is not counted). The HTTP/2
# counterpart of bench/callgrind.sh.
#
# Starts the server under callgrind, warms it up, then for each shape zeroes the counters,
# sends N requests with h2load (h2c, prior knowledge), dumps the counters and prints Ir per
# request:
#   (m32) 16 connections, 32 streams in flight each (h2load -c16 -m32)
#   (m1)  16 connections, one stream at a time (h2load -c16 -m1)
# How frames batch per read depends on timing, and the server runs ~50x slower under
# callgrind, so compare runs of this script with each other, not with real batching.
#
# usage: bench/callgrind_h2.sh [BIN]      (N=50000 by default)
# Everything runs on 127.0.0.1; the server is stopped by PID at exit.
set -euo pipefail

N=${N:-50000}
PORT=${PORT:-18491}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$ROOT/target/release/examples/plaintext}
OUT=${OUT:-$(mktemp -d /tmp/peregrine-callgrind-h2.XXXXXX)}
mkdir -p "$OUT"
PID=

cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

command -v h2load >/dev/null || { apt-get update && apt-get install -y nghttp2-client; }

valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out.%p" \
    "$BIN" --addr "127.0.0.1:$PORT" --workers 1 ${ARGS:-} 2>"$OUT/valgrind.log" &
PID=$!
for _ in $(seq 100); do
    curl -sf --http2-prior-knowledge "http://127.0.0.1:$PORT/plaintext" >/dev/null 2>&1 && break
    sleep 0.2
done

total() {
    local f
    f=$(ls -t "$OUT"/callgrind.out.* | head -1)
    awk '/^summary:/ {print $2}' "$f"
}

url="http://127.0.0.1:$PORT/plaintext"
timeout 300 h2load -t1 -c16 -m32 -n 20000 "$url" >/dev/null
for shape in m32 m1; do
    callgrind_control -z "$PID" >/dev/null 2>&1
    out=$(timeout 600 h2load -t1 -c16 -"$shape" -n "$N" "$url")
    done=$(echo "$out" | awk '/^requests:/ {print $8}')
    callgrind_control -d "$shape" "$PID" >/dev/null 2>&1
    sleep 0.5
    ir=$(total)
    awk -v ir="$ir" -v n="$done" -v m="$shape" \
        'BEGIN { printf "(%s) %d requests, %d Ir, %.0f Ir/request\n", m, n, ir, ir / n }'
done
echo "dumps in $OUT (callgrind_annotate --inclusive=yes FILE)"
