#!/usr/bin/env bash
# Static files: `peregrine serve` against nginx (Debian) serving the same directory.
#
# Files: a 612-byte HTML file (h2o's classic static benchmark), a 1 MiB file, and a 48 KB
# JavaScript file asked for with `Accept-Encoding: gzip` (the compressed case).
# nginx: one worker, sendfile on, tcp_nopush on, open_file_cache (valid 60s), access_log off,
#        keepalive_requests raised; `gzip on` at its default level (1) for JavaScript, with
#        gzip_min_length 1024 (peregrine's minimum). peregrine: one worker, --quiet, default
#        open-file cache (--file-cache-ms 1000), default compression (gzip level 6 here, each
#        file compressed once and cached; nginx compresses every response).
# Pinned as in bench/servers.sh: servers on CPU 0, wrk (1 thread) on CPU 1; the peers are
# alternated over ROUNDS rounds; medians are reported. Server CPU time per request is
# (utime+stime from /proc/PID/stat, after - before) / requests completed.
#
# Usage: bench/static.sh
# Env:   DURATION=10 (s per run)  ROUNDS=3  CONNS=64  PORT_PEREGRINE=18081  PORT_NGINX=18082
#        WARMUP=2 (s, once per server and file)  PEREGRINE=<binary>  PEREGRINE_PREBUILT=1 (skip
#        the release build)  FILES="small.html large.bin app.js"
#        BASELINE=<another peregrine binary> (e.g. main's build: a third peer, "baseline", run
#        the same way, for before/after ratios in the same run)  PORT_BASELINE=18083
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
# ~80 KB of JavaScript-like text (compresses about 10:1).
awk 'BEGIN { srand(7); for (i = 0; i < 700; i++)
    printf "export function handler%d(req, res) { const v = req.query.p%d || %d; return res.json({ id: v, ok: true }); }\n", i, int(rand() * 1000), int(rand() * 100000) }' \
    > "$WWW/app.js"
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
    types { text/html html; application/octet-stream bin; text/javascript js; }
    gzip on;
    gzip_types text/javascript;
    gzip_min_length 1024;
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
SERVERS="peregrine nginx"
if [ -n "${BASELINE:-}" ]; then
    PORT_B=${PORT_BASELINE:-18083}
    taskset -c 0 "$BASELINE" serve "$WWW" --addr "127.0.0.1:$PORT_B" --workers 1 --quiet \
        > "$WORK/baseline.out" 2>&1 &
    PIDS+=($!)
    B_PID=$!
    SERVERS="peregrine nginx baseline"
fi
sleep 1
kill -0 "$N_PID" 2>/dev/null || { cat "$WORK/nginx/logs/error.log" >&2; exit 1; }
grep -q Serving "$WORK/peregrine.out" || { cat "$WORK/peregrine.out" >&2; exit 1; }

# Same bytes from both? (The compressed case: both gzip, and the same once decoded.)
for f in small.html large.bin app.js; do
    a=$(curl -s --compressed "http://127.0.0.1:$PORT_P/$f" | md5sum)
    b=$(curl -s --compressed "http://127.0.0.1:$PORT_N/$f" | md5sum)
    [ "$a" = "$b" ] || { echo "servers disagree on $f" >&2; exit 1; }
done
for port in "$PORT_P" "$PORT_N"; do
    curl -s -o /dev/null -D - -H 'Accept-Encoding: gzip' "http://127.0.0.1:$port/app.js" \
        | grep -qi '^content-encoding: gzip' || { echo "no gzip from port $port" >&2; exit 1; }
done
GZ_P=$(curl -s -H 'Accept-Encoding: gzip' "http://127.0.0.1:$PORT_P/app.js" | wc -c)
GZ_N=$(curl -s -H 'Accept-Encoding: gzip' "http://127.0.0.1:$PORT_N/app.js" | wc -c)

TCK=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run NAME PID PORT FILE SECONDS -> prints "req_per_s mb_per_s cpu_us_per_req"
# MB/s is wrk's Transfer/sec (response heads and bodies) in units of 10^6 bytes. app.js is
# asked for with Accept-Encoding: gzip.
run() {
    local pid=$2 port=$3 file=$4 secs=$5
    local before after out
    local hdr=()
    [ "$file" = app.js ] && hdr=(-H 'Accept-Encoding: gzip')
    before=$(cpu_ticks "$pid")
    out=$(taskset -c 1 timeout $((secs + 30)) wrk -t1 -c"$CONNS" -d"${secs}s" "${hdr[@]}" \
        "http://127.0.0.1:$port/$file")
    after=$(cpu_ticks "$pid")
    if echo "$out" | grep -q -e "Non-2xx" -e "Socket errors: connect [1-9]" \
        -e "read [1-9]" -e "write [1-9]"; then
        echo "errors from $1:" >&2; echo "$out" >&2; exit 1
    fi
    # Timeouts (wrk's 2 s) happen when the shared machine stalls a peer; the CPU time per
    # request stays meaningful, so they are reported, not fatal.
    if echo "$out" | grep -q "timeout [1-9]"; then
        echo "warning: $1 $file: $(echo "$out" | grep -o 'timeout [0-9]*') (machine overloaded?)" >&2
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
echo "# app.js: $(stat -c %s "$WWW/app.js") bytes, gzip $GZ_P bytes from peregrine (level 6), $GZ_N from nginx (level 1)"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
FILES=${FILES:-small.html large.bin app.js}
for f in $FILES; do
    run warm "$P_PID" "$PORT_P" "$f" "$WARMUP" >/dev/null
    run warm "$N_PID" "$PORT_N" "$f" "$WARMUP" >/dev/null
    [ -n "${BASELINE:-}" ] && run warm "$B_PID" "$PORT_B" "$f" "$WARMUP" >/dev/null
done

RESULTS=$WORK/results
: > "$RESULTS"
printf '%-10s %-10s %5s %10s %9s %11s\n' file server round req/s MB/s cpu_us/req
for round in $(seq 1 "$ROUNDS"); do
    for f in $FILES; do
        for s in $SERVERS; do
            case $s in
                peregrine) pid=$P_PID port=$PORT_P ;;
                nginx) pid=$N_PID port=$PORT_N ;;
                baseline) pid=$B_PID port=$PORT_B ;;
            esac
            read -r rps mbs cpu < <(run "$s" "$pid" "$port" "$f" "$DURATION")
            printf '%-10s %-10s %5s %10s %9s %11s\n' "$f" "$s" "$round" "$rps" "$mbs" "$cpu"
            echo "$f $s $rps $mbs $cpu" >> "$RESULTS"
        done
    done
done

echo
echo "# medians"
printf '%-10s %-10s %10s %9s %11s\n' file server req/s MB/s cpu_us/req
for f in $FILES; do
    for s in $SERVERS; do
        rps=$(awk -v f="$f" -v s="$s" '$1 == f && $2 == s {print $3}' "$RESULTS" | median)
        mbs=$(awk -v f="$f" -v s="$s" '$1 == f && $2 == s {print $4}' "$RESULTS" | median)
        cpu=$(awk -v f="$f" -v s="$s" '$1 == f && $2 == s {print $5}' "$RESULTS" | median)
        printf '%-10s %-10s %10s %9s %11s\n' "$f" "$s" "$rps" "$mbs" "$cpu"
        echo "$f $s $rps $mbs $cpu" >> "$RESULTS.med"
    done
    awk -v f="$f" '$1 == f && $2 == "peregrine" {pr = $3; pc = $5} $1 == f && $2 == "nginx" {nr = $3; nc = $5}
        END {printf "summary static %s peregrine/nginx req/s %.2fx, nginx/peregrine cpu per request %.2fx (responses per cpu-second %.0f vs %.0f)\n", f, pr / nr, nc / pc, 1e6 / pc, 1e6 / nc}' \
        "$RESULTS.med"
    if [ -n "${BASELINE:-}" ]; then
        awk -v f="$f" '$1 == f && $2 == "peregrine" {pr = $3; pc = $5} $1 == f && $2 == "baseline" {br = $3; bc = $5}
            END {printf "summary static %s peregrine/baseline req/s %.2fx, baseline/peregrine cpu per request %.2fx\n", f, pr / br, bc / pc}' \
            "$RESULTS.med"
    fi
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
