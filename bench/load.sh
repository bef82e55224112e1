#!/usr/bin/env bash
# Load generators compared: `peregrine load` against wrk (HTTP/1.1) and h2load (h2c), each with
# one thread, against the same fast servers: this project's plaintext example and nginx, one
# worker each.
#
# Server pinned to CPU 0, generator to CPU 1; generators alternated over ROUNDS rounds;
# medians reported. What is compared is the *generator's* CPU time per completed request:
# utime+stime of the generator process (its rusage, read when it exits) ÷ requests completed,
# and the req/s it reached. Shapes (DURATION s each):
#   h1-c64     HTTP/1.1, 64 connections, one request at a time each (peregrine vs wrk)
#   h2-c64m1   h2c, 64 connections x 1 stream (peregrine vs h2load)
#   h2-c16m32  h2c, 16 connections x 32 streams (peregrine vs h2load)
# One `summary load-<shape>-<server>: ...` line per shape and server (ratio = peregrine's CPU
# per request ÷ the peer's), then a markdown table and the goals (issue 15).
# Every shape also runs `floor` (FLOOR=0 to skip): a minimal C epoll client, the kernel floor
# for any generator of that protocol: bench/floor_client.c on HTTP/1.1 (one send + one recv per
# request), bench/floor_h2_client.c on h2c (one recv, a walk over frame headers, one send of
# pre-encoded HEADERS frames per readable event); its `summary floor-<shape>-<server>: ...` line
# gives floor ÷ wrk or ÷ h2load, the least ratio reachable.
#
# usage: bench/load.sh                         (DURATION=5 ROUNDS=3)
#        DURATION=5 ROUNDS=3 SERVERS="plaintext" SHAPES="h1-c64" bench/load.sh
# Set LOCK=/path/to/lockfile to hold that lock (flock) around each timed run.
# Everything runs on 127.0.0.1; servers are stopped by PID at exit; runs are bounded.
set -euo pipefail

DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-3}
SERVERS=${SERVERS:-"plaintext nginx"}
SHAPES=${SHAPES:-"h1-c64 h2-c64m1 h2-c16m32"}
BASE_PORT=${BASE_PORT:-18760}
LOCK=${LOCK:-}
FLOOR=${FLOOR:-1}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/peregrine-load-bench.XXXXXX)
declare -A PID PORT

cleanup() {
    for p in "${PID[@]:-}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null || true
    done
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v h2load >/dev/null || need+=(nghttp2-client)
command -v nginx >/dev/null || need+=(nginx)
command -v curl >/dev/null || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
    apt-get update && apt-get install -y "${need[@]}"
fi

(cd "$ROOT" && cargo build --release -q -p peregrine --example plaintext \
    && cargo build --release -q -p peregrine-cli)
BIN="$ROOT/target/release"
cc -O2 -o "$WORK/floor_client" "$ROOT/bench/floor_client.c"
cc -O2 -o "$WORK/floor_h2_client" "$ROOT/bench/floor_h2_client.c"

PORT[plaintext]=$BASE_PORT
PORT[nginx]=$((BASE_PORT + 1))
PORT[nginx-h2]=$((BASE_PORT + 2))

mkdir -p "$WORK/www"
printf 'Hello, World!' >"$WORK/www/plaintext"
cat >"$WORK/nginx.conf" <<EOF
worker_processes 1;
master_process off;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
worker_rlimit_nofile 20000;
events { worker_connections 16384; }
http {
    access_log off;
    open_file_cache max=1000 inactive=60s;
    open_file_cache_valid 60s;
    keepalive_requests 100000000;
    http2_max_requests 100000000;
    keepalive_timeout 75s;
    client_body_temp_path $WORK/body;
    proxy_temp_path $WORK/proxy;
    fastcgi_temp_path $WORK/fastcgi;
    uwsgi_temp_path $WORK/uwsgi;
    scgi_temp_path $WORK/scgi;
    default_type text/plain;
    root $WORK/www;
    server { listen 127.0.0.1:${PORT[nginx]}; }
    server { listen 127.0.0.1:${PORT[nginx-h2]} http2; }
}
EOF

ulimit -n 20000

start() {
    local s=$1
    case $s in
        plaintext) taskset -c 0 "$BIN/examples/plaintext" --addr "127.0.0.1:${PORT[plaintext]}" \
            --workers 1 2>/dev/null & ;;
        nginx) taskset -c 0 nginx -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log" 2>/dev/null & ;;
    esac
    PID[$s]=$!
    for _ in $(seq 50); do
        curl -sf "http://127.0.0.1:${PORT[$s]}/plaintext" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "$s did not start" >&2
    exit 1
}

# cputime.py OUT CMD...: runs CMD, then writes its CPU seconds (utime+stime from its rusage,
# read when it exits), then utime and stime apart, to OUT.
cat >"$WORK/cputime.py" <<'EOF'
import os, subprocess, sys
out, argv = sys.argv[1], sys.argv[2:]
p = subprocess.Popen(argv)
_, status, ru = os.wait4(p.pid, 0)
with open(out, "w") as f:
    f.write("%.6f %.6f %.6f\n" % (ru.ru_utime + ru.ru_stime, ru.ru_utime, ru.ru_stime))
sys.exit(os.waitstatus_to_exitcode(status))
EOF

# measured CMD...: CMD on CPU 1, bounded in time, under $LOCK if set; its CPU time in $WORK/cpu.
measured() {
    local cmd=(timeout $((DURATION + 30)) python3 "$WORK/cputime.py" "$WORK/cpu" taskset -c 1 "$@")
    if [ -n "$LOCK" ]; then flock "$LOCK" "${cmd[@]}"; else "${cmd[@]}"; fi
}

# run GEN SHAPE SERVER -> appends "req_per_s cpu_us_per_req user_us_per_req sys_us_per_req"
# to $WORK/GEN.SHAPE.SERVER
run() {
    local gen=$1 shape=$2 server=$3 port=${PORT[$3]} conns streams done
    case $shape in
        h1-c64) conns=64 streams=1 ;;
        h2-c64m1) conns=64 streams=1 ;;
        h2-c16m32) conns=16 streams=32 ;;
    esac
    case $shape in h2-*) [ "$server" = nginx ] && port=${PORT[nginx-h2]} ;; esac
    local url="http://127.0.0.1:$port/plaintext"
    case $gen in
        peregrine)
            local proto=--http1
            case $shape in h2-*) proto=--http2-prior-knowledge ;; esac
            measured "$BIN/peregrine" load "$url" $proto -t1 -c$conns -m$streams \
                -d"${DURATION}s" --no-progress --json "$WORK/out.json" >"$WORK/out.txt"
            done=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); \
                assert d['errors_total']==0, d['errors']; print(d['requests'])" "$WORK/out.json")
            ;;
        wrk)
            measured wrk -t1 -c$conns -d"${DURATION}s" "$url" >"$WORK/out.txt"
            done=$(awk '/requests in/ {print $1}' "$WORK/out.txt")
            if grep -q 'Non-2xx\|Socket errors' "$WORK/out.txt"; then
                echo "wrk ($shape, $server): $(grep 'Non-2xx\|Socket errors' "$WORK/out.txt")" >&2
            fi
            ;;
        h2load)
            measured h2load -t1 -c$conns -m$streams -D"$DURATION" "$url" >"$WORK/out.txt"
            if ! grep -q 'Application protocol: h2c' "$WORK/out.txt"; then
                echo "h2load ($shape, $server): not h2c" >&2
                exit 1
            fi
            done=$(awk '/^requests:/ {print $8}' "$WORK/out.txt")
            ;;
        floor)
            case $shape in
                h1-*) measured "$WORK/floor_client" "$port" "$conns" "$DURATION" /plaintext \
                    >"$WORK/out.txt" ;;
                h2-*) measured "$WORK/floor_h2_client" "$port" "$conns" "$streams" "$DURATION" \
                    /plaintext >"$WORK/out.txt" ;;
            esac
            done=$(awk '$1 == "requests" {print $2}' "$WORK/out.txt")
            ;;
    esac
    awk -v n="$done" -v d="$DURATION" '{ printf "%.0f %.3f %.3f %.3f\n", n / d,
        $1 * 1e6 / n, $2 * 1e6 / n, $3 * 1e6 / n }' "$WORK/cpu" >>"$WORK/$gen.$shape.$server"
    echo "  round $r $gen $shape $server: $(tail -1 "$WORK/$gen.$shape.$server")" \
        "(req/s, CPU µs/req, of which user, sys)" >&2
}

peer_of() { case $1 in h1-*) echo wrk ;; *) echo h2load ;; esac; }

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
col() { cut -d' ' -f"$1" "$2" | median; }

for s in $SERVERS; do start "$s"; done

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq "$ROUNDS"); do
    for shape in $SHAPES; do
        for server in $SERVERS; do
            run peregrine "$shape" "$server"
            run "$(peer_of "$shape")" "$shape" "$server"
            if [ "$FLOOR" = 1 ]; then run floor "$shape" "$server"; fi
        done
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

echo
echo "Generators, one thread on CPU 1; servers one worker on CPU 0; ${DURATION}s per run, medians of $ROUNDS rounds"
echo "($(wrk --version 2>&1 | head -1 | awk '{print $1, $2}'), h2load $(h2load --version | awk '{print $2}'), $(nginx -v 2>&1 | sed 's/.*: //'))"
echo
for shape in $SHAPES; do
    peer=$(peer_of "$shape")
    for server in $SERVERS; do
        p="$WORK/peregrine.$shape.$server" o="$WORK/$peer.$shape.$server"
        [ -f "$p" ] && [ -f "$o" ] || continue
        awk -v s="$shape" -v sv="$server" -v n="$peer" -v pc="$(col 2 "$p")" -v oc="$(col 2 "$o")" \
            -v pr="$(col 1 "$p")" -v or="$(col 1 "$o")" 'BEGIN {
            printf "summary load-%s-%s: peregrine %.3f us/req %.0f req/s, %s %.3f us/req %.0f req/s, ratio %.2fx\n",
                s, sv, pc, pr, n, oc, or, pc / oc }'
        f="$WORK/floor.$shape.$server"
        [ -f "$f" ] && [ -f "$o" ] || continue
        awk -v s="$shape" -v sv="$server" -v n="$peer" -v fc="$(col 2 "$f")" -v oc="$(col 2 "$o")" \
            -v pc="$(col 2 "$p")" -v fr="$(col 1 "$f")" 'BEGIN {
            printf "summary floor-%s-%s: floor %.3f us/req %.0f req/s, floor/%s %.2fx, floor/peregrine %.2fx\n",
                s, sv, fc, fr, n, fc / oc, fc / pc }'
    done
done
echo
echo "| shape | server | generator | req/s | generator CPU µs/req | user | sys |"
echo "|---|---|---|---:|---:|---:|---:|"
for shape in $SHAPES; do
    for server in $SERVERS; do
        for gen in peregrine "$(peer_of "$shape")" floor; do
            f="$WORK/$gen.$shape.$server"
            [ -f "$f" ] || continue
            printf "| %s | %s | %s | %.0f | %.3f | %.3f | %.3f |\n" "$shape" "$server" "$gen" \
                "$(col 1 "$f")" "$(col 2 "$f")" "$(col 3 "$f")" "$(col 4 "$f")"
        done
    done
done
echo
for shape in $SHAPES; do
    peer=$(peer_of "$shape") goal=0.8
    [ "$peer" = h2load ] && goal=0.75
    for server in $SERVERS; do
        p="$WORK/peregrine.$shape.$server" o="$WORK/$peer.$shape.$server"
        [ -f "$p" ] && [ -f "$o" ] || continue
        awk -v s="$shape" -v sv="$server" -v n="$peer" -v g="$goal" \
            -v pc="$(col 2 "$p")" -v oc="$(col 2 "$o")" 'BEGIN {
            printf "goal %s (%s) vs %s: CPU/req %.2fx (<= %.2fx): %s\n", s, sv, n, pc / oc, g,
                (pc / oc <= g) ? "met" : "not met" }'
    done
done
