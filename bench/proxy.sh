#!/usr/bin/env bash
# Reverse proxy benchmark (issue 30): `peregrine proxy` vs HAProxy vs nginx in front of the
# same backend (examples/hyper_plaintext.rs), and the kernel floor of a proxy
# (bench/floor_relay.c: per request two reads and two writes, a kept upstream connection per
# client connection, nothing else).
#
# Proxy pinned to CPU 0, one thread/worker each; the backend and the load generator share CPU 1.
# Peers alternated over ROUNDS rounds, each run DURATION s:
#   (h1)  wrk -t1 -c64 --latency, HTTP/1.1 keep-alive in front and behind
#   (h2c) h2load -c64 -m1, h2c by prior knowledge in front, HTTP/1.1 behind (not the floor)
# Reported: req/s; the proxy's CPU time per request (utime+stime of its PID from /proc before
# and after, ticks -> µs via CLK_TCK, ÷ requests completed); wrk's p50 and p99 latency, and the
# backend's own ("direct", no proxy) to subtract; new TCP connections the proxy opened
# upstream (/proc/net/snmp ActiveOpens over the run minus the load generator's 64: the whole
# machine's count, so other processes' connects would show too) and the reuse that implies;
# then the proxy's VmRSS growth per idle client connection (IDLE_CONNS kept-alive connections,
# one request each, bench/idle_conns.py).
#
# usage: bench/proxy.sh                 (DURATION=5 ROUNDS=3 IDLE_CONNS=2000 by default;
#                                        BUILD=0 runs the release binaries already built)
#        PEERS="peregrine haproxy" DURATION=3 ROUNDS=1 bench/proxy.sh
#        IDLE_CONNS=0 H2C=0 bench/proxy.sh   (HTTP/1.1 only, no idle-memory step)
# Everything runs on 127.0.0.1; every process is stopped by PID at exit.
set -euo pipefail

DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
IDLE_CONNS=${IDLE_CONNS:-2000}
PEERS=${PEERS:-"peregrine haproxy nginx floor"}
H2C=${H2C:-1}
PORT_backend=18500
PORT_direct=18500
PORT_peregrine=18501
PORT_haproxy=18502
PORT_nginx=18503
PORT_floor=18504

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/peregrine-bench-proxy.XXXXXX)
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

for tool in wrk h2load haproxy nginx; do
    command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install wrk nghttp2-client haproxy nginx)" >&2; exit 1; }
done

if [ "${BUILD:-1}" = 1 ]; then
    (cd "$ROOT" && cargo build --release -q -p peregrine-cli && \
        cargo build --release -q -p peregrine --example hyper_plaintext)
fi
PEREGRINE="$ROOT/target/release/peregrine"
HYPER="$ROOT/target/release/examples/hyper_plaintext"
cc -O2 -o "$WORK/floor_relay" "$ROOT/bench/floor_relay.c"

cat >"$WORK/haproxy.cfg" <<EOF
# Debian's 2.6, one thread, keep-alive both sides, no logging (peregrine runs with --quiet).
global
    nbthread 1
    maxconn 9000
defaults
    mode http
    option http-keep-alive
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-keep-alive 60s
frontend web
    bind 127.0.0.1:$PORT_haproxy proto h1
    bind 127.0.0.1:$((PORT_haproxy + 10)) proto h2
    default_backend app
backend app
    http-reuse always
    server hyper 127.0.0.1:$PORT_backend
EOF

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
    upstream app {
        server 127.0.0.1:$PORT_backend;
        keepalive 64;
        keepalive_requests 100000000;
    }
    server {
        listen 127.0.0.1:$PORT_nginx;
        listen 127.0.0.1:$((PORT_nginx + 10)) http2;
        location / {
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering on;
        }
    }
}
EOF

ulimit -n 20000

wait_for() {
    for _ in $(seq 100); do
        curl -sf "http://127.0.0.1:$1/plaintext" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "nothing answers on port $1" >&2
    exit 1
}

start() {
    local peer=$1 port_var="PORT_$1"
    local port=${!port_var}
    case $peer in
        backend) taskset -c 1 "$HYPER" --addr "127.0.0.1:$port" 2>/dev/null & ;;
        peregrine) taskset -c 0 "$PEREGRINE" proxy --addr "127.0.0.1:$port" --workers 1 --quiet \
            --to "http://127.0.0.1:$PORT_backend" & ;;
        haproxy) taskset -c 0 haproxy -f "$WORK/haproxy.cfg" -db 2>"$WORK/haproxy.log" & ;;
        nginx) taskset -c 0 nginx -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log" & ;;
        floor) taskset -c 0 "$WORK/floor_relay" "$port" "$PORT_backend" & ;;
    esac
    PID[$peer]=$!
    wait_for "$port"
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
active_opens() { awk '/^Tcp:/ && $6 ~ /^[0-9]+$/ {print $6}' /proc/net/snmp; }
# wrk's latency percentile line ("50%  1.23ms") in µs.
wrk_pct() {
    echo "$1" | awk -v p="$2" '$1 == p {
        v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
        m = (u == "us") ? 1 : (u == "ms") ? 1000 : (u == "s") ? 1000000 : 0; print v * m }'
}

# run PEER SCENARIO -> appends "reqs_per_s cpu_us_per_req p50_us p99_us upstream_connects"
run() {
    local peer=$1 scenario=$2 port_var="PORT_$1" out t0 t1 o0 o1 reqs rps p50=0 p99=0
    local port=${!port_var} pid=${PID[$1]:-${PID[backend]}}
    t0=$(cpu_ticks "$pid")
    o0=$(active_opens)
    if [ "$scenario" = h1 ]; then
        out=$(timeout $((DURATION + 20)) taskset -c 1 wrk -t1 -c64 -d"${DURATION}s" --latency \
            "http://127.0.0.1:$port/plaintext")
        reqs=$(echo "$out" | awk '/requests in/ {print $1}')
        rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
        p50=$(wrk_pct "$out" 50%)
        p99=$(wrk_pct "$out" 99%)
        if echo "$out" | grep -q "Non-2xx\|Socket errors"; then
            echo "$peer ($scenario): $(echo "$out" | grep "Non-2xx\|Socket errors")" >&2
        fi
    else
        [ "$peer" = peregrine ] || port=$((port + 10))
        out=$(timeout $((DURATION + 20)) taskset -c 1 h2load -c64 -m1 -t1 -D "$DURATION" \
            "http://127.0.0.1:$port/plaintext")
        reqs=$(echo "$out" | awk '/^requests:/ {print $8}')
        rps=$(echo "$out" | awk '/^finished in/ {print $4}')
        if ! echo "$out" | grep -q " 0 failed, 0 errored"; then
            echo "$peer ($scenario): $(echo "$out" | grep '^requests:')" >&2
        fi
    fi
    o1=$(active_opens)
    t1=$(cpu_ticks "$pid")
    awk -v t=$((t1 - t0)) -v tick="$TICK" -v n="$reqs" -v rps="$rps" -v p50="$p50" -v p99="$p99" \
        -v opens=$((o1 - o0 - 64)) \
        'BEGIN { printf "%s %.3f %s %s %d %d\n", rps, t / tick * 1e6 / n, p50, p99, opens, n }' \
        >>"$WORK/$peer.$scenario"
    echo "  round $r $peer ($scenario): $(tail -1 "$WORK/$peer.$scenario") (req/s, CPU µs/req, p50 µs, p99 µs, upstream connects, requests)" >&2
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
col() { cut -d' ' -f"$2" "$WORK/$1" | median; }
sum() { cut -d' ' -f"$2" "$WORK/$1" | awk '{s += $1} END {print s}'; }

start backend
for peer in $PEERS; do start "$peer"; done

for r in $(seq "$ROUNDS"); do
    run direct h1
    for peer in $PEERS; do run "$peer" h1; done
    if [ "$H2C" = 1 ]; then
        for peer in $PEERS; do [ "$peer" = floor ] || run "$peer" h2c; done
    fi
done

declare -A IDLE
for peer in $PEERS; do
    # IDLE_CONNS=0 skips the idle-memory measurement.
    { [ "$peer" = floor ] || [ "$IDLE_CONNS" = 0 ]; } && { IDLE[$peer]="—"; continue; }
    port_var="PORT_$peer"
    res=$(taskset -c 1 python3 "$ROOT/bench/idle_conns.py" 127.0.0.1 "${!port_var}" "${PID[$peer]}" \
        "$IDLE_CONNS")
    IDLE[$peer]=$(echo "$res" | awk '{printf "%.2f", $3 / 1024}')
    echo "  idle $peer: RSS before/after (KB), bytes per connection, RSS once closed (KB): $res" >&2
done

echo
echo "Proxy on CPU 0 (one thread/worker); hyper backend and the load generator on CPU 1;"
echo "${DURATION}s per run, medians of $ROUNDS rounds, peers alternated; idle: $IDLE_CONNS connections"
echo
echo "| proxy | h1 req/s | h1 CPU µs/req | p50 µs | p99 µs | upstream connects / requests | h2c req/s | h2c CPU µs/req | idle KB/conn |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
printf "| direct (no proxy) | %.0f | — | %s | %s | — | — | — | — |\n" \
    "$(col direct.h1 1)" "$(col direct.h1 3)" "$(col direct.h1 4)"
for peer in $PEERS; do
    h2rps="—" h2cpu="—"
    if [ -f "$WORK/$peer.h2c" ]; then
        h2rps=$(printf "%.0f" "$(col "$peer.h2c" 1)")
        h2cpu=$(col "$peer.h2c" 2)
    fi
    printf "| %s | %.0f | %.3f | %s | %s | %s / %s | %s | %s | %s |\n" "$peer" \
        "$(col "$peer.h1" 1)" "$(col "$peer.h1" 2)" "$(col "$peer.h1" 3)" "$(col "$peer.h1" 4)" \
        "$(sum "$peer.h1" 5)" "$(sum "$peer.h1" 6)" "$h2rps" "$h2cpu" "${IDLE[$peer]}"
    col "$peer.h1" 2 >"$WORK/$peer.cpu"
    [ -f "$WORK/$peer.h2c" ] && col "$peer.h2c" 2 >"$WORK/$peer.cpu2"
done
echo
ratio() {
    [ -f "$WORK/$1.$3" ] && [ -f "$WORK/$2.$3" ] || return 0
    awk -v a="$(cat "$WORK/$1.$3")" -v b="$(cat "$WORK/$2.$3")" -v n1="$1" -v n2="$2" -v s="$4" \
        'BEGIN { printf "%s CPU per request, %s / %s: %.2fx\n", s, n1, n2, a / b }'
}
for other in haproxy nginx floor; do ratio peregrine "$other" cpu "HTTP/1.1"; done
for other in haproxy nginx; do ratio peregrine "$other" cpu2 "h2c"; done
