#!/usr/bin/env bash
# axum benchmark: the same axum Router (examples/shared/axum_router.rs) served by peregrine
# (examples/axum_app, one worker) and by `axum::serve` (examples/axum_serve: hyper on a
# current-thread runtime, as axum ships it), beside peregrine's own handler path
# (examples/plaintext, one worker) for /plaintext.
#
# Server pinned to CPU 0, the load generator to CPU 1; servers alternated over ROUNDS rounds;
# medians of the server's CPU time per request (utime+stime from /proc/PID/stat before and
# after ÷ requests completed). Shapes, DURATION s each:
#   a        wrk -t1 -c64, no pipelining
#   b        wrk -t1 -c256, 16 pipelined per write (bench/pipeline.lua)
#   h2       h2load -t1 -c16 -m32 over h2c (prior knowledge)
# for PATHS (/plaintext and /json); then the idle memory per kept-alive connection with
# IDLE_CONNS connections (bench/idle_conns.py). Prints one `summary axum-<shape><path>: ...`
# line per shape and path with the ratios the issue sets goals on, and a markdown table.
#
# usage: bench/axum.sh                  (DURATION=8 ROUNDS=3 IDLE_CONNS=10000)
#        DURATION=3 ROUNDS=1 SHAPES="a b" bench/axum.sh
# Everything runs on 127.0.0.1; every server is stopped by PID at exit; every run is bounded
# by `timeout`.
set -euo pipefail

DURATION=${DURATION:-8}
ROUNDS=${ROUNDS:-3}
IDLE_CONNS=${IDLE_CONNS:-10000}
SHAPES=${SHAPES:-"a b h2"}
PATHS=${PATHS:-"/plaintext /json"}
PEERS="axum_app axum_serve handler"
declare -A PORT=([axum_app]=18530 [axum_serve]=18531 [handler]=18532)

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/peregrine-axum.XXXXXX)
TICK=$(getconf CLK_TCK)
declare -A PID

cleanup() {
    for p in "${PID[@]:-}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

if ! command -v wrk >/dev/null || ! command -v h2load >/dev/null; then
    apt-get update && apt-get install -y wrk nghttp2-client
fi

(cd "$ROOT" && cargo build --release -q -p peregrine --features axum --example axum_app \
    --example axum_serve --example plaintext)
BIN="$ROOT/target/release/examples"
ulimit -n 20000

start() {
    local peer=$1 port=${PORT[$1]}
    case $peer in
        axum_app) taskset -c 0 "$BIN/axum_app" --addr "127.0.0.1:$port" --workers 1 2>/dev/null & ;;
        axum_serve) taskset -c 0 "$BIN/axum_serve" --addr "127.0.0.1:$port" 2>/dev/null & ;;
        handler) taskset -c 0 "$BIN/plaintext" --addr "127.0.0.1:$port" --workers 1 2>/dev/null & ;;
    esac
    PID[$peer]=$!
    for _ in $(seq 100); do
        curl -sf "http://127.0.0.1:$port/plaintext" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "$peer did not start" >&2
    exit 1
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run PEER SHAPE PATH -> appends "reqs_per_s cpu_us_per_req" to $WORK/PEER.SHAPE.NAME
run() {
    local peer=$1 shape=$2 path=$3 url out t0 t1 reqs rps
    url="http://127.0.0.1:${PORT[$peer]}$path"
    t0=$(cpu_ticks "${PID[$peer]}")
    case $shape in
        a) out=$(timeout $((DURATION + 20)) taskset -c 1 wrk -t1 -c64 -d"${DURATION}s" "$url")
           reqs=$(echo "$out" | awk '/requests in/ {print $1}')
           rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}') ;;
        b) out=$(timeout $((DURATION + 20)) taskset -c 1 wrk -t1 -c256 -d"${DURATION}s" \
               -s "$ROOT/bench/pipeline.lua" "$url")
           reqs=$(echo "$out" | awk '/requests in/ {print $1}')
           rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}') ;;
        h2) out=$(timeout $((DURATION + 30)) taskset -c 1 h2load -t1 -c16 -m32 -D "$DURATION" "$url")
            reqs=$(echo "$out" | awk '/^requests:/ {print $8}')
            rps=$(echo "$out" | awk '/^finished in/ {gsub(",", "", $4); print $4}') ;;
    esac
    t1=$(cpu_ticks "${PID[$peer]}")
    if echo "$out" | grep -q "Non-2xx\|Socket errors\|[1-9][0-9]* failed"; then
        echo "$peer ($shape $path): $(echo "$out" | grep "Non-2xx\|Socket errors\|failed")" >&2
    fi
    local name=${path//\//}
    awk -v t=$((t1 - t0)) -v tick="$TICK" -v n="$reqs" -v rps="$rps" \
        'BEGIN { printf "%s %.3f\n", rps, t / tick * 1e6 / n }' >>"$WORK/$peer.$shape.$name"
    echo "  round $r $peer ($shape $path): $(tail -1 "$WORK/$peer.$shape.$name") (req/s, CPU µs/req)" >&2
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

for peer in $PEERS; do start "$peer"; done

for r in $(seq "$ROUNDS"); do
    for shape in $SHAPES; do
        for path in $PATHS; do
            for peer in $PEERS; do
                # The handler example answers /plaintext only.
                [ "$peer" = handler ] && [ "$path" != /plaintext ] && continue
                run "$peer" "$shape" "$path"
            done
        done
    done
done

declare -A IDLE
for peer in axum_app axum_serve; do
    res=$(taskset -c 1 python3 "$ROOT/bench/idle_conns.py" 127.0.0.1 "${PORT[$peer]}" \
        "${PID[$peer]}" "$IDLE_CONNS")
    IDLE[$peer]=$(echo "$res" | awk '{printf "%.2f", $3 / 1024}')
    echo "  idle $peer: RSS before/after (KB), bytes per connection, RSS once closed (KB): $res" >&2
done

cpu() { cut -d' ' -f2 "$WORK/$1" | median; }
rps() { cut -d' ' -f1 "$WORK/$1" | median; }

echo
echo "axum Router, one worker, server on CPU 0, load on CPU 1, ${DURATION}s per run, medians of $ROUNDS rounds"
echo
echo "| shape | path | peregrine req/s | peregrine CPU µs/req | axum::serve req/s | axum::serve CPU µs/req | ratio | handler CPU µs/req |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
for shape in $SHAPES; do
    for path in $PATHS; do
        name=${path//\//}
        p=$(cpu "axum_app.$shape.$name")
        s=$(cpu "axum_serve.$shape.$name")
        h="-"
        [ -f "$WORK/handler.$shape.$name" ] && h=$(cpu "handler.$shape.$name")
        printf "| %s | %s | %.0f | %.3f | %.0f | %.3f | %.2fx | %s |\n" "$shape" "$path" \
            "$(rps "axum_app.$shape.$name")" "$p" "$(rps "axum_serve.$shape.$name")" "$s" \
            "$(awk -v p="$p" -v s="$s" 'BEGIN { print p / s }')" "$h"
        line="summary axum-$shape$path: peregrine/axum::serve CPU $(awk -v p="$p" -v s="$s" 'BEGIN { printf "%.2fx", p / s }')"
        if [ "$h" != "-" ]; then
            line="$line, peregrine axum/handler $(awk -v p="$p" -v h="$h" 'BEGIN { printf "%.2fx", p / h }')"
        fi
        echo "$line"
    done
done
echo "summary axum-idle: peregrine ${IDLE[axum_app]} KB/conn, axum::serve ${IDLE[axum_serve]} KB/conn ($(awk -v p="${IDLE[axum_app]}" -v s="${IDLE[axum_serve]}" 'BEGIN { printf "%.2fx", p / s }'))"
