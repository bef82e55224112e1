#!/usr/bin/env bash
# Static files: `peregrine serve` against nginx (Debian) serving the same directory.
#
# Files: a 612-byte HTML file (h2o's classic static benchmark) and a 1 MiB file.
# nginx: one worker, sendfile on, tcp_nopush on, open_file_cache (valid 60s), access_log off,
#        keepalive_requests raised. peregrine: one worker, --quiet, default open-file cache
#        (--file-cache-ms 1000).
# Pinned as in bench/servers.sh: servers on CPU 0, wrk (1 thread) on CPU 1; the peers are
# alternated over ROUNDS rounds; medians are reported. Server CPU time per request is
# (utime+stime from /proc/PID/stat, after - before) / requests completed.
#
# Usage: bench/static.sh
# Env:   DURATION=10 (s per run)  ROUNDS=3  CONNS=64  PORT_PEREGRINE=18081  PORT_NGINX=18082
#        WARMUP=2 (s, once per server and file)  PEREGRINE=<binary>  PEREGRINE_PREBUILT=1 (skip
#        the release build)
# Every run is bounded in time, targets 127.0.0.1 only, and stops its servers by PID.
set -euo pipefail

DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-64}
WARMUP=${WARMUP:-2}
PORT_P=${PORT_PEREGRINE:-18081}
PORT_N=${PORT_NGINX:-18082}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PEREGRINE=${PEREGRINE:-$ROOT/target/release/peregrine}

if ! command -v wrk >/dev/null || ! command -v nginx >/dev/null || ! command -v curl >/dev/null; then
    apt-get update && apt-get install -y wrk nginx curl
fi
NGINX=$(command -v nginx)
if [ -z "${PEREGRINE_PREBUILT:-}" ]; then
    (cd "$ROOT" && cargo build --release -q -p peregrine-cli)
fi

WORK=$(mktemp -d /tmp/peregrine-static-bench.XXXXXX)
WWW=$WORK/www
mkdir -p "$WWW" "$WORK/nginx/logs" "$WORK/nginx/tmp"
# 612 bytes of HTML, the size of h2o's (and nginx's old default) index.html.
prefix='<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome!</title>\n</head>\n<body>\n<h1>Welcome!</h1>\n<p>'
suffix='</p>\n</body>\n</html>\n'
plen=$(printf "$prefix" | wc -c); slen=$(printf "$suffix" | wc -c)
{ printf "$prefix"; head -c $((612 - plen - slen)) /dev/zero | tr '\0' 'x'; printf "$suffix"; } \
    > "$WWW/small.html"
head -c 1048576 /dev/urandom > "$WWW/large.bin"
[ "$(stat -c %s "$WWW/small.html")" = 612 ] || { echo "small.html is not 612 bytes" >&2; exit 1; }

cat > "$WORK/nginx/nginx.conf" <<EOF
# One process does the work (no master), so its PID is the one measured.
user root;
worker_processes 1;
master_process off;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 10000000;
    keepalive_timeout 60s;
    open_file_cache max=1000 inactive=60s;
    open_file_cache_valid 60s;
    client_body_temp_path $WORK/nginx/tmp;
    proxy_temp_path $WORK/nginx/tmp;
    fastcgi_temp_path $WORK/nginx/tmp;
    uwsgi_temp_path $WORK/nginx/tmp;
    scgi_temp_path $WORK/nginx/tmp;
    types { text/html html; application/octet-stream bin; }
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:$PORT_N;
        root $WWW;
    }
}
EOF

PIDS=()
cleanup() {
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    sleep 0.3
    for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

taskset -c 0 "$PEREGRINE" serve "$WWW" --addr "127.0.0.1:$PORT_P" --workers 1 --quiet \
    > "$WORK/peregrine.out" 2>&1 &
PIDS+=($!)
P_PID=$!
taskset -c 0 "$NGINX" -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" &
PIDS+=($!)
N_PID=$!
sleep 1
kill -0 "$N_PID" 2>/dev/null || { cat "$WORK/nginx/logs/error.log" >&2; exit 1; }
grep -q Serving "$WORK/peregrine.out" || { cat "$WORK/peregrine.out" >&2; exit 1; }

# Same bytes from both?
for f in small.html large.bin; do
    a=$(curl -s "http://127.0.0.1:$PORT_P/$f" | md5sum)
    b=$(curl -s "http://127.0.0.1:$PORT_N/$f" | md5sum)
    [ "$a" = "$b" ] || { echo "servers disagree on $f" >&2; exit 1; }
done

TCK=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run NAME PID PORT FILE SECONDS -> prints "req_per_s mb_per_s cpu_us_per_req"
# MB/s is wrk's Transfer/sec (response heads and bodies) in units of 10^6 bytes.
run() {
    local pid=$2 port=$3 file=$4 secs=$5
    local before after out
    before=$(cpu_ticks "$pid")
    out=$(taskset -c 1 timeout $((secs + 30)) wrk -t1 -c"$CONNS" -d"${secs}s" \
        "http://127.0.0.1:$port/$file")
    after=$(cpu_ticks "$pid")
    if echo "$out" | grep -q -e "Non-2xx" -e "Socket errors"; then
        echo "errors from $1:" >&2; echo "$out" >&2; exit 1
    fi
    echo "$out" | awk -v c=$((after - before)) -v t="$TCK" '
        /requests in/ { n = $1 }
        /Requests\/sec/ { r = $2 }
        /Transfer\/sec/ {
            v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[A-Za-z]+$/, "", v)
            m = (u == "GB") ? 1073741824 : (u == "MB") ? 1048576 : (u == "KB") ? 1024 : 1
            b = v * m }
        END { printf "%.0f %.1f %.2f\n", r, b / 1e6, (c / t) / n * 1e6 }'
}

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo "# static files: peregrine $(git rev-parse --short HEAD 2>/dev/null || echo '?') vs $("$NGINX" -v 2>&1 | sed 's/.*: //')"
echo "# wrk -t1 -c$CONNS -d${DURATION}s, servers on CPU 0 (1 worker), wrk on CPU 1, $ROUNDS rounds"
for f in small.html large.bin; do
    run warm "$P_PID" "$PORT_P" "$f" "$WARMUP" >/dev/null
    run warm "$N_PID" "$PORT_N" "$f" "$WARMUP" >/dev/null
done

RESULTS=$WORK/results
: > "$RESULTS"
printf '%-10s %-10s %5s %10s %9s %11s\n' file server round req/s MB/s cpu_us/req
for round in $(seq 1 "$ROUNDS"); do
    for f in small.html large.bin; do
        for s in peregrine nginx; do
            if [ "$s" = peregrine ]; then pid=$P_PID port=$PORT_P; else pid=$N_PID port=$PORT_N; fi
            read -r rps mbs cpu < <(run "$s" "$pid" "$port" "$f" "$DURATION")
            printf '%-10s %-10s %5s %10s %9s %11s\n' "$f" "$s" "$round" "$rps" "$mbs" "$cpu"
            echo "$f $s $rps $mbs $cpu" >> "$RESULTS"
        done
    done
done

echo
echo "# medians"
printf '%-10s %-10s %10s %9s %11s\n' file server req/s MB/s cpu_us/req
for f in small.html large.bin; do
    for s in peregrine nginx; do
        rps=$(awk -v f="$f" -v s="$s" '$1 == f && $2 == s {print $3}' "$RESULTS" | median)
        mbs=$(awk -v f="$f" -v s="$s" '$1 == f && $2 == s {print $4}' "$RESULTS" | median)
        cpu=$(awk -v f="$f" -v s="$s" '$1 == f && $2 == s {print $5}' "$RESULTS" | median)
        printf '%-10s %-10s %10s %9s %11s\n' "$f" "$s" "$rps" "$mbs" "$cpu"
        echo "$f $s $rps $mbs $cpu" >> "$RESULTS.med"
    done
    awk -v f="$f" '$1 == f && $2 == "peregrine" {pr = $3; pc = $5} $1 == f && $2 == "nginx" {nr = $3; nc = $5}
        END {printf "summary static %s peregrine/nginx req/s %.2fx, nginx/peregrine cpu per request %.2fx\n", f, pr / nr, nc / pc}' \
        "$RESULTS.med"
done
