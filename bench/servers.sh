#!/usr/bin/env bash
# Plaintext benchmark: peregrine vs hyper vs may-minihttp vs nginx, one worker each, and the kernel
# floor (bench/floor_epoll.c: recv + canned send in a bare epoll loop; the least CPU any server can
# use).
#
# Server pinned to CPU 0, wrk (one thread) to CPU 1; peers alternated over ROUNDS rounds.
#   (a) 64 connections, no pipelining, DURATION s
#   (b) 256 connections, 16 requests pipelined per write (bench/pipeline.lua), DURATION s
# Reports req/s and the server's CPU time per request (utime+stime from /proc/PID/stat before
# and after, ticks -> µs via CLK_TCK, ÷ requests completed), medians over rounds, then the idle
# memory per connection with IDLE_CONNS kept-alive connections (VmRSS before/after).
#
# usage: bench/servers.sh            (DURATION=10 ROUNDS=3 IDLE_CONNS=10000 by default)
#        DURATION=3 ROUNDS=3 bench/servers.sh
# Everything runs on 127.0.0.1; every server is stopped by PID at exit.
set -euo pipefail

DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
IDLE_CONNS=${IDLE_CONNS:-10000}
PEERS=${PEERS:-"peregrine hyper minihttp nginx floor"}
PORT_peregrine=${PORT_PEREGRINE:-18480}
PORT_hyper=${PORT_HYPER:-18481}
PORT_nginx=${PORT_NGINX:-18482}
PORT_floor=${PORT_FLOOR:-18483}
PORT_minihttp=${PORT_MINIHTTP:-18484}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/peregrine-bench.XXXXXX)
TICK=$(getconf CLK_TCK)
# Peer `strict` (not in the default PEERS): examples/floor_strict.rs, the floor with the rules.
PORT_strict=${PORT_STRICT:-18489}
# Peer `fixed` (not in the default PEERS): the plaintext example with `--fixed`, `/plaintext` as
# a fixed answer (Server::fixed) instead of the handler.
PORT_fixed=${PORT_FIXED:-18488}
declare -A PID

cleanup() {
    for p in "${PID[@]:-}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

if ! command -v wrk >/dev/null || ! command -v nginx >/dev/null; then
    apt-get update && apt-get install -y wrk nginx
fi

(cd "$ROOT" && cargo build --release -q -p peregrine --example plaintext --example hyper_plaintext \
    --example may_minihttp_plaintext)
BIN="$ROOT/target/release/examples"
# The kernel floor (see bench/floor_epoll.c): not a server, the least CPU per request possible.
cc -O2 -o "$WORK/floor_epoll" "$ROOT/bench/floor_epoll.c"
if [[ " $PEERS " == *" strict "* ]]; then
    (cd "$ROOT" && cargo build --release -q -p peregrine --example floor_strict)
fi

cat >"$WORK/nginx.conf" <<EOF
# One process does the work (no master), so its PID is the one measured.
worker_processes 1;
master_process off;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
worker_rlimit_nofile 20000;
events { worker_connections 16384; }
http {
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 75s;
    client_body_temp_path $WORK/body;
    proxy_temp_path $WORK/proxy;
    fastcgi_temp_path $WORK/fastcgi;
    uwsgi_temp_path $WORK/uwsgi;
    scgi_temp_path $WORK/scgi;
    server {
        listen 127.0.0.1:$PORT_nginx;
        location /plaintext {
            default_type text/plain;
            return 200 "Hello, World!";
        }
    }
}
EOF

ulimit -n 20000

start() {
    local peer=$1 port_var="PORT_$1"
    local port=${!port_var}
    case $peer in
        peregrine) taskset -c 0 "$BIN/plaintext" --addr "127.0.0.1:$port" --workers 1 2>/dev/null & ;;
        hyper) taskset -c 0 "$BIN/hyper_plaintext" --addr "127.0.0.1:$port" 2>/dev/null & ;;
        minihttp) taskset -c 0 "$BIN/may_minihttp_plaintext" --addr "127.0.0.1:$port" 2>/dev/null & ;;
        nginx) taskset -c 0 nginx -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log" & ;;
        floor) taskset -c 0 "$WORK/floor_epoll" "$port" & ;;
        strict) taskset -c 0 "$BIN/floor_strict" --addr "127.0.0.1:$port" 2>/dev/null & ;;
        fixed) taskset -c 0 "$BIN/plaintext" --addr "127.0.0.1:$port" --workers 1 --fixed 2>/dev/null & ;;
    esac
    PID[$peer]=$!
    for _ in $(seq 50); do
        curl -sf "http://127.0.0.1:$port/plaintext" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "$peer did not start" >&2
    exit 1
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run PEER SCENARIO -> appends "reqs_per_s cpu_us_per_req" to $WORK/PEER.SCENARIO
run() {
    local peer=$1 scenario=$2 port_var="PORT_$1"
    local url="http://127.0.0.1:${!port_var}/plaintext" pid=${PID[$1]} out
    local t0 t1
    t0=$(cpu_ticks "$pid")
    if [ "$scenario" = a ]; then
        out=$(timeout $((DURATION + 20)) taskset -c 1 wrk -t1 -c64 -d"${DURATION}s" "$url")
    else
        out=$(timeout $((DURATION + 20)) taskset -c 1 wrk -t1 -c256 -d"${DURATION}s" \
            -s "$ROOT/bench/pipeline.lua" "$url")
    fi
    t1=$(cpu_ticks "$pid")
    local reqs rps
    reqs=$(echo "$out" | awk '/requests in/ {print $1}')
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    if echo "$out" | grep -q "Non-2xx\|Socket errors"; then
        echo "$peer ($scenario): $(echo "$out" | grep "Non-2xx\|Socket errors")" >&2
    fi
    awk -v t=$((t1 - t0)) -v tick="$TICK" -v n="$reqs" -v rps="$rps" \
        'BEGIN { printf "%s %.3f\n", rps, t / tick * 1e6 / n }' >>"$WORK/$peer.$scenario"
    echo "  round $r $peer ($scenario): $(tail -1 "$WORK/$peer.$scenario") (req/s, CPU µs/req)" >&2
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

for peer in $PEERS; do start "$peer"; done

for r in $(seq "$ROUNDS"); do
    for scenario in a b; do
        for peer in $PEERS; do run "$peer" "$scenario"; done
    done
done

declare -A IDLE
for peer in $PEERS; do
    port_var="PORT_$peer"
    res=$(taskset -c 1 python3 "$ROOT/bench/idle_conns.py" 127.0.0.1 "${!port_var}" "${PID[$peer]}" \
        "$IDLE_CONNS")
    IDLE[$peer]=$(echo "$res" | awk '{printf "%.2f", $3 / 1024}')
    echo "  idle $peer: RSS before/after (KB), bytes per connection, RSS once closed (KB): $res" >&2
done

echo
echo "Plaintext, one worker, server on CPU 0, wrk -t1 on CPU 1, ${DURATION}s per run, medians of $ROUNDS rounds"
echo "(a) 64 connections, no pipelining; (b) 256 connections, 16 pipelined; idle: $IDLE_CONNS connections"
echo
echo "| server | (a) req/s | (a) CPU µs/req | (b) req/s | (b) CPU µs/req | idle KB/conn |"
echo "|---|---:|---:|---:|---:|---:|"
for peer in $PEERS; do
    a_rps=$(cut -d' ' -f1 "$WORK/$peer.a" | median)
    a_cpu=$(cut -d' ' -f2 "$WORK/$peer.a" | median)
    b_rps=$(cut -d' ' -f1 "$WORK/$peer.b" | median)
    b_cpu=$(cut -d' ' -f2 "$WORK/$peer.b" | median)
    printf "| %s | %.0f | %.3f | %.0f | %.3f | %s |\n" "$peer" "$a_rps" "$a_cpu" "$b_rps" "$b_cpu" "${IDLE[$peer]}"
    echo "$a_cpu $b_cpu" >"$WORK/$peer.cpu"
done
if [ -f "$WORK/hyper.cpu" ] && [ -f "$WORK/peregrine.cpu" ]; then
    read -r pa pb <"$WORK/peregrine.cpu"
    read -r ha hb <"$WORK/hyper.cpu"
    echo
    awk -v pa="$pa" -v pb="$pb" -v ha="$ha" -v hb="$hb" 'BEGIN {
        printf "CPU per request, peregrine / hyper: (a) %.2fx (goal <= 0.7x), (b) %.2fx; (b) absolute %.3f µs (goal <= 0.35)\n",
            pa / ha, pb / hb, pb }'
fi
if [ -f "$WORK/floor.cpu" ] && [ -f "$WORK/peregrine.cpu" ]; then
    read -r pa pb <"$WORK/peregrine.cpu"
    read -r fa fb <"$WORK/floor.cpu"
    awk -v pa="$pa" -v pb="$pb" -v fa="$fa" -v fb="$fb" 'BEGIN {
        printf "Kernel floor (bare epoll loop): (a) %.3f µs, (b) %.3f µs; peregrine above it: (a) %.3f µs, (b) %.3f µs\n",
            fa, fb, pa - fa, pb - fb }'
    awk -v pa="$pa" -v pb="$pb" -v fa="$fa" -v fb="$fb" 'BEGIN {
        printf "CPU per request, peregrine / floor: (a) %.2fx, (b) %.2fx\n", pa / fa, pb / fb }'
fi
if [ -f "$WORK/minihttp.cpu" ] && [ -f "$WORK/peregrine.cpu" ]; then
    read -r pa pb <"$WORK/peregrine.cpu"
    read -r ma mb <"$WORK/minihttp.cpu"
    awk -v pa="$pa" -v pb="$pb" -v ma="$ma" -v mb="$mb" 'BEGIN {
        printf "CPU per request, peregrine / may-minihttp: (a) %.2fx, (b) %.2fx\n", pa / ma, pb / mb }'
fi
if [ -f "$WORK/floor.cpu" ] && [ -f "$WORK/fixed.cpu" ]; then
    read -r xa xb <"$WORK/fixed.cpu"
    read -r fa fb <"$WORK/floor.cpu"
    awk -v xa="$xa" -v xb="$xb" -v fa="$fa" -v fb="$fb" 'BEGIN {
        printf "CPU per request, peregrine with a fixed answer / floor: (a) %.2fx, (b) %.2fx (goal <= 1.10x)\n", xa / fa, xb / fb }'
fi
