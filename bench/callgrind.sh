#!/usr/bin/env bash
# User-space instructions per request of the plaintext example, counted by callgrind: repeatable
# on a loaded machine, unlike wall-clock or CPU-time figures. Kernel time is not counted.
#
# Starts the server under callgrind, warms it up, zeroes the counters, sends N requests with
# bench/load.py in each mode, dumps the counters after each, and prints Ir per request:
#   (a) 8 connections, one request at a time per connection
#   (b) 8 connections, 16 requests pipelined per write
#
# usage: bench/callgrind.sh [BIN]        (N=20000 by default; BIN defaults to the release example)
#        ARGS='--metrics /metrics' bench/callgrind.sh   (extra server arguments: counters on)
#        PRE_ARGS=proxy bench/callgrind.sh target/release/peregrine   (arguments before --addr:
#        a subcommand; bench/callgrind_proxy.sh does this with a backend)
# Everything runs on 127.0.0.1; the server is stopped by PID at exit.
set -euo pipefail

N=${N:-20000}
PORT=${PORT:-18490}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-$ROOT/target/release/examples/plaintext}
OUT=${OUT:-$(mktemp -d /tmp/peregrine-callgrind.XXXXXX)}
mkdir -p "$OUT"
PID=

cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
    wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out.%p" \
    "$BIN" ${PRE_ARGS:-} --addr "127.0.0.1:$PORT" --workers 1 ${ARGS:-} 2>"$OUT/valgrind.log" &
PID=$!
for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$PORT/plaintext" >/dev/null 2>&1 && break
    sleep 0.2
done

total() {
    # The newest dump's summary line: total Ir since the last zeroing.
    local f
    f=$(ls -t "$OUT"/callgrind.out.* | head -1)
    awk '/^summary:/ {print $2}' "$f"
}

python3 "$ROOT/bench/load.py" 127.0.0.1 "$PORT" a 2000 >/dev/null
python3 "$ROOT/bench/load.py" 127.0.0.1 "$PORT" b 2000 >/dev/null
for mode in a b; do
    callgrind_control -z "$PID" >/dev/null
    done=$(python3 "$ROOT/bench/load.py" 127.0.0.1 "$PORT" "$mode" "$N")
    callgrind_control -d "$mode" "$PID" >/dev/null
    sleep 0.5
    ir=$(total)
    awk -v ir="$ir" -v n="$done" -v m="$mode" \
        'BEGIN { printf "(%s) %d requests, %d Ir, %.0f Ir/request\n", m, n, ir, ir / n }'
done
echo "dumps in $OUT (callgrind_annotate --inclusive=yes FILE)"
