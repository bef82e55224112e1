#!/usr/bin/env bash
# HTTP/2 benchmark: peregrine vs nghttpd (nghttp2's server), hyper's HTTP/2 server and nginx,
# one worker each, with h2load (nghttp2-client).
#
# Server pinned to CPU 0, h2load (one thread, -t1) to CPU 1; peers alternated over ROUNDS
# rounds; medians reported. Every response is the same 13-byte `Hello, World!` body: nghttpd
# and nginx serve a 13-byte file, peregrine its plaintext example's /plaintext, hyper
# examples/hyper_h2.rs. Shapes (h2c, prior knowledge, DURATION s each):
#   c16m32   16 connections, 32 streams in flight on each
#   c64m1    64 connections, one stream at a time (latency-bound)
#   c1m1     one connection, one stream at a time (latency-bound)
#   file     a 1 MiB static file, 4 connections x 4 streams, over h2c and over TLS (ALPN h2):
#            `peregrine serve` against nginx (throughput)
# Reports req/s, the server's CPU time per request (utime+stime from /proc/PID/stat before
# and after, ticks -> µs via CLK_TCK, ÷ requests completed), p50 latency (from h2load's
# per-request log), MB/s for the file shapes; one `summary h2-<shape>: ...` line per peer per
# shape (ratio = peregrine's CPU per request ÷ the peer's), a markdown table, the goals.
#
# usage: bench/h2.sh                    (DURATION=10 ROUNDS=3)
#        DURATION=5 ROUNDS=3 PEERS="peregrine nghttpd" SHAPES="c16m32 c1m1" bench/h2.sh
# Everything runs on 127.0.0.1; every server is stopped by PID at exit; each h2load run is
# bounded by `timeout`.
set -euo pipefail

DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
PEERS=${PEERS:-"peregrine nghttpd hyper nginx"}
SHAPES=${SHAPES:-"c16m32 c64m1 c1m1 file-h2c file-tls"}
BASE_PORT=${BASE_PORT:-18720}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/peregrine-h2-bench.XXXXXX)
TICK=$(getconf CLK_TCK)
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
command -v h2load >/dev/null || need+=(nghttp2-client)
command -v nghttpd >/dev/null || need+=(nghttp2-server)
command -v nginx >/dev/null || need+=(nginx)
command -v openssl >/dev/null || need+=(openssl)
command -v curl >/dev/null || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
    apt-get update && apt-get install -y "${need[@]}"
fi

(cd "$ROOT" && cargo build --release -q -p peregrine --example plaintext --example hyper_h2 \
    && cargo build --release -q -p peregrine-cli)
BIN="$ROOT/target/release"

# The servers: name -> port. `*-files` serve $WORK/www (the file shapes), `*-tls` over TLS.
i=0
for s in peregrine nghttpd hyper nginx peregrine-files nginx-files peregrine-tls nginx-tls; do
    PORT[$s]=$((BASE_PORT + i))
    i=$((i + 1))
done

mkdir -p "$WORK/www"
printf 'Hello, World!' >"$WORK/www/plaintext"
head -c $((1 << 20)) /dev/urandom >"$WORK/www/1m.bin"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null

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
    # nginx's best here over HTTP/2, measured: sendfile on makes each small response wait for
    # a delayed ACK (23 req/s at -c1 -m1) and halves the 1 MiB file's throughput; the open
    # file cache saves an open and fstat per request.
    sendfile off;
    open_file_cache max=1000 inactive=60s;
    open_file_cache_valid 60s;
    keepalive_requests 100000000;
    keepalive_timeout 75s;
    client_body_temp_path $WORK/body;
    proxy_temp_path $WORK/proxy;
    fastcgi_temp_path $WORK/fastcgi;
    uwsgi_temp_path $WORK/uwsgi;
    scgi_temp_path $WORK/scgi;
    default_type text/plain;
    root $WORK/www;
    server { listen 127.0.0.1:${PORT[nginx]} http2; }
    server { listen 127.0.0.1:${PORT[nginx-files]} http2; }
    server {
        listen 127.0.0.1:${PORT[nginx-tls]} ssl http2;
        ssl_certificate $WORK/cert.pem;
        ssl_certificate_key $WORK/key.pem;
    }
}
EOF

ulimit -n 20000

start() {
    local s=$1 port=${PORT[$1]}
    case $s in
        peregrine) taskset -c 0 "$BIN/examples/plaintext" --addr "127.0.0.1:$port" --workers 1 2>/dev/null & ;;
        nghttpd) (cd "$WORK" && exec taskset -c 0 nghttpd --no-tls -n1 -d "$WORK/www" "$port" >/dev/null 2>&1) & ;;
        hyper) taskset -c 0 "$BIN/examples/hyper_h2" --addr "127.0.0.1:$port" 2>/dev/null & ;;
        nginx) taskset -c 0 nginx -c "$WORK/nginx.conf" -e "$WORK/nginx-error.log" & ;;
        peregrine-files) taskset -c 0 "$BIN/peregrine" serve "$WORK/www" --addr "127.0.0.1:$port" \
            --workers 1 --quiet --drain-grace 0 & ;;
        peregrine-tls) taskset -c 0 "$BIN/peregrine" serve "$WORK/www" --addr "127.0.0.1:$port" \
            --workers 1 --quiet --drain-grace 0 --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem" & ;;
        # nginx serves its three ports from one process.
        nginx-files | nginx-tls) PID[$s]=${PID[nginx]}; return 0 ;;
    esac
    PID[$s]=$!
    local scheme=http opt=--http2-prior-knowledge
    case $s in *-tls) scheme=https opt="--http2 -k" ;; esac
    for _ in $(seq 50); do
        # shellcheck disable=SC2086
        curl -sf $opt "$scheme://127.0.0.1:$port/plaintext" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "$s did not start" >&2
    exit 1
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# The server measured for PEER in SHAPE.
server_of() {
    case $2 in
        file-h2c) echo "$1-files" ;;
        file-tls) echo "$1-tls" ;;
        *) echo "$1" ;;
    esac
}

# run PEER SHAPE -> appends "req_per_s cpu_us_per_req p50_ms mb_per_s" to $WORK/PEER.SHAPE
run() {
    local peer=$1 shape=$2 server scheme=http path=/plaintext args
    server=$(server_of "$peer" "$shape")
    case $shape in
        c16m32) args="-c16 -m32" ;;
        c64m1) args="-c64 -m1" ;;
        c1m1) args="-c1 -m1" ;;
        file-h2c) args="-c4 -m4"; path=/1m.bin ;;
        file-tls) args="-c4 -m4"; path=/1m.bin; scheme=https ;;
    esac
    local url="$scheme://127.0.0.1:${PORT[$server]}$path" pid=${PID[$server]} out t0 t1 hist
    # h2load's per-request log (start, status, µs) goes through a FIFO into a histogram: no
    # file of millions of lines.
    rm -f "$WORK/log" "$WORK/p50"
    mkfifo "$WORK/log"
    awk -F'\t' '{ h[$3]++; n++; if ($3 > m) m = $3 }
        END { c = 0; for (i = 0; i <= m; i++) if (i in h) { c += h[i]; if (2 * c >= n) { print i / 1000; exit } } }' \
        "$WORK/log" >"$WORK/p50" &
    hist=$!
    t0=$(cpu_ticks "$pid")
    # shellcheck disable=SC2086
    out=$(timeout $((DURATION + 30)) taskset -c 1 h2load -t1 $args -D "$DURATION" \
        --log-file="$WORK/log" "$url")
    t1=$(cpu_ticks "$pid")
    # Unblocks the histogram if h2load never opened the log.
    timeout 1 sh -c ": >'$WORK/log'" 2>/dev/null || true
    wait "$hist"
    local proto done rps p50
    proto=$(echo "$out" | awk '/Application protocol:/ {print $3}')
    done=$(echo "$out" | awk '/^requests:/ {print $8}')
    rps=$(echo "$out" | awk '/^finished in/ {print $4}')
    if [ "$proto" != h2c ] && [ "$proto" != h2 ]; then
        echo "$peer ($shape): protocol '$proto'" >&2
        exit 1
    fi
    if echo "$out" | grep -q '^status codes:.* [1-9][0-9]* [345]xx'; then
        echo "$peer ($shape): $(echo "$out" | grep '^status codes')" >&2
    fi
    p50=$(cat "$WORK/p50")
    awk -v t=$((t1 - t0)) -v tick="$TICK" -v n="$done" -v rps="$rps" -v p50="$p50" -v shape="$shape" \
        'BEGIN { mb = (shape ~ /^file/) ? rps : 0; printf "%s %.3f %.3f %.1f\n", rps, t / tick * 1e6 / n, p50, mb }' \
        >>"$WORK/$peer.$shape"
    echo "  round $r $peer ($shape): $(tail -1 "$WORK/$peer.$shape") (req/s, CPU µs/req, p50 ms, MB/s)" >&2
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
col() { cut -d' ' -f"$1" "$2" | median; }

# Which peers each shape compares: the file shapes are peregrine serve against nginx.
peers_of() {
    case $1 in
        file-*) for p in $PEERS; do case $p in peregrine | nginx) echo "$p" ;; esac; done ;;
        *) for p in $PEERS; do echo "$p"; done ;;
    esac
}

servers=$(for shape in $SHAPES; do
    for peer in $(peers_of "$shape"); do server_of "$peer" "$shape"; done
done | sort -u)
# nginx first: its file and TLS servers are the same process.
if echo "$servers" | grep -q '^nginx'; then start nginx; fi
for s in $servers; do
    [ "$s" = nginx ] || start "$s"
done

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in $(seq "$ROUNDS"); do
    for shape in $SHAPES; do
        for peer in $(peers_of "$shape"); do run "$peer" "$shape"; done
    done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

echo
echo "HTTP/2, one worker, server on CPU 0, h2load -t1 on CPU 1, ${DURATION}s per run, medians of $ROUNDS rounds"
echo "(h2load $(h2load --version | awk '{print $2}'), $(nginx -v 2>&1 | sed 's/.*: //'), nghttpd $(nghttpd --version | awk '{print $2}'))"
echo
for shape in $SHAPES; do
    [ -f "$WORK/peregrine.$shape" ] || continue
    pc=$(col 2 "$WORK/peregrine.$shape")
    for peer in $(peers_of "$shape"); do
        [ "$peer" = peregrine ] && continue
        oc=$(col 2 "$WORK/$peer.$shape")
        awk -v s="$shape" -v p="$pc" -v o="$oc" -v n="$peer" \
            'BEGIN { printf "summary h2-%s: peregrine %.3f us/req, %s %.3f us/req, ratio %.2fx\n", s, p, n, o, p / o }'
    done
done
echo
echo "| shape | server | req/s | CPU µs/req | p50 ms | MB/s |"
echo "|---|---|---:|---:|---:|---:|"
for shape in $SHAPES; do
    for peer in $(peers_of "$shape"); do
        f="$WORK/$peer.$shape"
        [ -f "$f" ] || continue
        printf "| %s | %s | %.0f | %.3f | %.3f | %s |\n" "$shape" "$peer" "$(col 1 "$f")" "$(col 2 "$f")" \
            "$(col 3 "$f")" "$(case $shape in file-*) col 4 "$f" ;; *) echo - ;; esac)"
    done
done

# The goals (issue 13), where both sides ran.
goal() {
    local shape=$1 peer=$2
    [ -f "$WORK/peregrine.$shape" ] && [ -f "$WORK/$peer.$shape" ] || return 0
    awk -v s="$shape" -v n="$peer" \
        -v pr="$(col 1 "$WORK/peregrine.$shape")" -v or="$(col 1 "$WORK/$peer.$shape")" \
        -v pc="$(col 2 "$WORK/peregrine.$shape")" -v oc="$(col 2 "$WORK/$peer.$shape")" \
        -v pl="$(col 3 "$WORK/peregrine.$shape")" -v ol="$(col 3 "$WORK/$peer.$shape")" 'BEGIN {
        if (s == "c16m32")
            printf "goal %s vs %s: req/s %.2fx (>= 1.1x), CPU/req %.2fx (<= 0.9x)\n", s, n, pr / or, pc / oc
        else if (s ~ /^file/)
            printf "goal %s vs %s: throughput %.2fx (>= 1.0x)\n", s, n, pr / or
        else
            printf "goal %s vs %s: req/s %.2fx (>= 1.0x), p50 %.3f vs %.3f ms (<=)\n", s, n, pr / or, pl, ol
    }'
}
echo
for shape in c16m32 c64m1 c1m1; do goal "$shape" nghttpd; done
for shape in file-h2c file-tls; do goal "$shape" nginx; done
