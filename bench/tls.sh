#!/usr/bin/env bash
# HTTPS benchmark: peregrine vs hyper (tokio-rustls) vs nginx (OpenSSL), one worker each.
#
# One EC P-256 certificate (made by openssl at start) serves every server. Every client (wrk,
# openssl s_time / s_client) runs with an OPENSSL_CONF that allows only TLS 1.3, the suite
# SUITE and the group GROUP, so every server negotiates the same; s_client prints what each one
# chose, and a wrk run offering only a suite no server has must fail (proof wrk reads the file).
# Servers pinned to CPU 0, clients to CPU 1; peers alternated over ROUNDS rounds; medians.
# Server CPU = utime+stime of the server process (/proc/PID/stat) after - before, ÷ the
# requests or handshakes completed.
#
#   a       keep-alive: wrk -t1 -c64 GET /plaintext: CPU µs per request
#   b       full handshakes: STIME_CLIENTS x `openssl s_time -new -www /plaintext` (HTTP/1.0,
#           one request per connection, no session reuse; wrk is no good here: it keeps its
#           session across reconnects): CPU µs per handshake (+ its request)
#   resume  resumed handshakes: the same with `s_time -reuse` (session tickets, TLS 1.3 PSK
#           with (EC)DHE): CPU µs per resumed handshake. s_time marks each connection `r`
#           (resumed) or `*` (full): both counts are printed and checked.
#   bulk    a 1 MiB file, wrk -t1 -c16: req/s = MiB/s, CPU µs per MiB. peregrine runs
#           `peregrine serve DIR` here (its plaintext example serves no files).
#
# Peers: peregrine (examples/plaintext.rs and `peregrine serve`), hyper (examples/hyper_tls.rs),
# nginx (one worker, no master, session cache + tickets, open_file_cache, access_log off;
# sendfile is on but unused under TLS: without kTLS nginx reads the file into its
# output_buffers and SSL_writes it). A peer named NAME-ring is NAME built with the ring provider
# (`--no-default-features --features ring`); plain names use the default, aws-lc-rs.
# peregrine-base runs the binaries `plaintext` and `peregrine` found in BASE_BIN (built from
# another commit): a before/after comparison of a change, under the same alternation.
#
# usage: bench/tls.sh                      (DURATION=10 ROUNDS=3 by default)
#        DURATION=3 ROUNDS=1 bench/tls.sh  (a quick trial)
#        PEERS="peregrine peregrine-ring nginx" SHAPES="a b bulk" bench/tls.sh   (providers)
#        BASE_BIN=/tmp/old PEERS="peregrine peregrine-base" bench/tls.sh       (before/after)
# Env: PEERS="peregrine hyper nginx"  SHAPES="a b resume bulk"  STIME_CLIENTS=2  WARMUP=1
#      SUITE=TLS_AES_128_GCM_SHA256  GROUP=X25519  PORT_BASE=18500
# Everything runs on 127.0.0.1; every run is bounded in time; servers are stopped by PID.
set -euo pipefail

DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
WARMUP=${WARMUP:-1}
PEERS=${PEERS:-"peregrine hyper nginx"}
SHAPES=${SHAPES:-"a b resume bulk"}
STIME_CLIENTS=${STIME_CLIENTS:-2}
SUITE=${SUITE:-TLS_AES_128_GCM_SHA256}
GROUP=${GROUP:-X25519}
PORT_BASE=${PORT_BASE:-18500}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d /tmp/peregrine-tls-bench.XXXXXX)
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

if ! command -v wrk >/dev/null || ! command -v nginx >/dev/null || ! command -v openssl >/dev/null \
    || ! command -v curl >/dev/null; then
    apt-get update && apt-get install -y wrk nginx openssl curl
fi

# Builds, one per provider the peers need, copied aside (both write the same file names).
providers() {
    local p
    for p in $PEERS; do
        case $p in nginx | *-base) ;; *-ring) echo ring ;; *) echo aws-lc-rs ;; esac
    done | sort -u
}
for prov in $(providers); do
    feat=()
    [ "$prov" = ring ] && feat=(--no-default-features --features ring)
    (cd "$ROOT" && cargo build --release -q -p peregrine --example plaintext --example hyper_tls \
        "${feat[@]}" && cargo build --release -q -p peregrine-cli "${feat[@]}")
    mkdir -p "$WORK/bin-$prov"
    cp "$ROOT/target/release/examples/plaintext" "$ROOT/target/release/examples/hyper_tls" \
        "$ROOT/target/release/peregrine" "$WORK/bin-$prov/"
done

# The certificate: EC P-256, for localhost and 127.0.0.1.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout "$WORK/key.pem" -out "$WORK/cert.pem" 2>/dev/null
CERT=$WORK/cert.pem KEY=$WORK/key.pem

# The clients' OpenSSL settings: TLS 1.3 only, one suite, one group (see the header).
client_conf() {
    cat <<EOF
openssl_conf = default_conf
[default_conf]
ssl_conf = ssl_sect
[ssl_sect]
system_default = system_default_sect
[system_default_sect]
MinProtocol = TLSv1.3
Ciphersuites = $1
Groups = $GROUP
EOF
}
client_conf "$SUITE" >"$WORK/client.cnf"
# No server offers this suite: a client that honours the file cannot connect.
client_conf TLS_AES_128_CCM_8_SHA256 >"$WORK/impossible.cnf"
client() { OPENSSL_CONF=$WORK/client.cnf taskset -c 1 "$@"; }

WWW=$WORK/www
mkdir -p "$WWW" "$WORK/nginx/tmp" "$WORK/res"
head -c 1048576 /dev/urandom >"$WWW/large.bin"

i=0
for peer in $PEERS; do
    PORT[$peer]=$((PORT_BASE + i))
    case $peer in peregrine*) PORT[$peer.files]=$((PORT_BASE + 50 + i)) ;; esac
    i=$((i + 1))
done

if [[ " $PEERS " == *" nginx "* ]]; then
    cat >"$WORK/nginx/nginx.conf" <<EOF
# One process does the work (no master), so its PID is the one measured.
user root;
worker_processes 1;
master_process off;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 100000000;
    keepalive_timeout 75s;
    # Under TLS (no kTLS here) nginx does not sendfile: it reads the file into output_buffers
    # and SSL_writes them in ssl_buffer_size (16k) records.
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    open_file_cache max=1000 inactive=60s;
    open_file_cache_valid 60s;
    ssl_certificate $CERT;
    ssl_certificate_key $KEY;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:SSL:10m;
    ssl_session_timeout 1h;
    ssl_session_tickets on;
    client_body_temp_path $WORK/nginx/tmp;
    proxy_temp_path $WORK/nginx/tmp;
    fastcgi_temp_path $WORK/nginx/tmp;
    uwsgi_temp_path $WORK/nginx/tmp;
    scgi_temp_path $WORK/nginx/tmp;
    types { application/octet-stream bin; }
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:${PORT[nginx]} ssl;
        root $WWW;
        location /plaintext {
            default_type text/plain;
            return 200 "Hello, World!";
        }
    }
}
EOF
fi

# start INSTANCE: a peer's server (PEER) or peregrine's file server (PEER.files).
start() {
    local inst=$1 peer=${1%.files} port=${PORT[$1]} bin path
    case $peer in
        *-ring) bin=$WORK/bin-ring ;;
        *-base) bin=${BASE_BIN:?peregrine-base needs BASE_BIN} ;;
        *) bin=$WORK/bin-aws-lc-rs ;;
    esac
    case $inst in
        peregrine*.files)
            taskset -c 0 "$bin/peregrine" serve "$WWW" --addr "127.0.0.1:$port" --workers 1 \
                --quiet --tls-cert "$CERT" --tls-key "$KEY" >/dev/null 2>&1 &
            path=/large.bin ;;
        peregrine*)
            taskset -c 0 "$bin/plaintext" --addr "127.0.0.1:$port" --workers 1 \
                --tls-cert "$CERT" --tls-key "$KEY" 2>/dev/null &
            path=/plaintext ;;
        hyper*)
            taskset -c 0 "$bin/hyper_tls" --addr "127.0.0.1:$port" --tls-cert "$CERT" \
                --tls-key "$KEY" --dir "$WWW" 2>/dev/null &
            path=/plaintext ;;
        nginx)
            taskset -c 0 nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" \
                -e "$WORK/nginx/error.log" &
            path=/plaintext ;;
    esac
    PID[$inst]=$!
    for _ in $(seq 50); do
        curl -sfk "https://127.0.0.1:$port$path" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "$inst did not start" >&2
    exit 1
}

# The instance that serves SHAPE for PEER.
inst_of() {
    case $1:$2 in peregrine*:bulk) echo "$1.files" ;; *) echo "$1" ;; esac
}

for peer in $PEERS; do
    start "$peer"
    [[ $peer == peregrine* && " $SHAPES " == *" bulk "* ]] && start "$peer.files"
done

echo "# TLS: $(openssl version), wrk $(wrk -v 2>&1 | awk 'NR == 1 {print $2}'), $(nginx -v 2>&1 | sed 's/.*: //')," \
    "peregrine $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "# negotiated (openssl s_client with the clients' settings):"
for inst in "${!PID[@]}"; do
    out=$(client timeout 10 openssl s_client -connect "127.0.0.1:${PORT[$inst]}" \
        -servername localhost -alpn http/1.1 </dev/null 2>&1 || true)
    echo "#   $inst: $(echo "$out" | awk '
        /^New, / { sub(/^New, /, ""); sub(/,$/, "", $1); v = $1; c = $NF }
        /Server Temp Key/ { sub(/.*Server Temp Key: /, ""); g = $0 }
        /Peer signature type/ { s = $NF }
        /ALPN protocol/ { a = $NF }
        END { printf "%s %s, group %s, signature %s, ALPN %s", v, c, g, s, a }')"
    echo "$out" | grep -q "Cipher is $SUITE" || { echo "$inst did not negotiate $SUITE" >&2; exit 1; }
done
# wrk honours OPENSSL_CONF: offered only a suite nobody has, it completes nothing.
first=${PEERS%% *}
bad=$(OPENSSL_CONF=$WORK/impossible.cnf taskset -c 1 timeout 10 wrk -t1 -c1 -d1s \
    "https://127.0.0.1:${PORT[$first]}/plaintext" 2>&1 | awk '/requests in/ {print $1}')
[ "${bad:-0}" = 0 ] || { echo "wrk ignores OPENSSL_CONF ($bad requests)" >&2; exit 1; }
echo "#   wrk offered only TLS_AES_128_CCM_8_SHA256 completes 0 requests: it uses the settings"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# measure SHAPE PORT SECONDS -> "count rate [resumed full]" on stdout
measure() {
    local shape=$1 port=$2 secs=$3 out
    case $shape in
        a | bulk)
            local conns=64 path=/plaintext
            [ "$shape" = bulk ] && conns=16 path=/large.bin
            out=$(client timeout $((secs + 20)) wrk -t1 -c$conns -d"${secs}s" \
                "https://127.0.0.1:$port$path")
            if echo "$out" | grep -q "Non-2xx\|Socket errors"; then
                echo "$shape on $port: $(echo "$out" | grep "Non-2xx\|Socket errors")" >&2
            fi
            echo "$out" | awk '/requests in/ {n = $1} /Requests\/sec/ {r = $2}
                END {printf "%d %s\n", n, r}' ;;
        b | resume)
            local k mode=-new pids=()
            [ "$shape" = resume ] && mode=-reuse
            for k in $(seq "$STIME_CLIENTS"); do
                client timeout $((secs + 20)) openssl s_time -connect "127.0.0.1:$port" \
                    $mode -time "$secs" -www /plaintext >"$WORK/stime.$k" 2>&1 &
                pids+=($!)
            done
            wait "${pids[@]}" || true
            # Per connection s_time prints `r` (resumed) or `*` (full), then its totals.
            cat "$WORK"/stime.* | awk -v secs="$secs" '
                /connections in .* real seconds/ { n += $1; b = $(NF - 4) }
                /^[r*]+$/ { r += gsub(/r/, ""); f += gsub(/\*/, "") }
                END { if (n == 0 || b == 0) exit 1; printf "%d %.1f %d %d\n", n, n / secs, r, f }' \
                || { echo "s_time failed on $port:" >&2; cat "$WORK"/stime.* >&2; exit 1; }
            rm -f "$WORK"/stime.* ;;
    esac
}

# run PEER SHAPE -> appends "rate cpu_us load" to $WORK/PEER.SHAPE
run() {
    local peer=$1 shape=$2 inst load t0 t1 res
    inst=$(inst_of "$peer" "$shape")
    load=$(load1)
    t0=$(cpu_ticks "${PID[$inst]}")
    res=$(measure "$shape" "${PORT[$inst]}" "$DURATION")
    t1=$(cpu_ticks "${PID[$inst]}")
    read -r n rate resumed full <<<"$res"
    if [ "$shape" = b ] && [ "${resumed:-0}" != 0 ]; then
        echo "$peer: $resumed of the -new handshakes resumed" >&2; exit 1
    fi
    if [ "$shape" = resume ] && [ "${full:-0}" -gt "$STIME_CLIENTS" ]; then
        echo "$peer: $full of the -reuse handshakes were full" >&2; exit 1
    fi
    awk -v t=$((t1 - t0)) -v tick="$TICK" -v n="$n" -v rate="$rate" -v l="$load" \
        'BEGIN { printf "%s %.2f %s\n", rate, t / tick * 1e6 / n, l }' >>"$WORK/res/$peer.$shape"
    local extra=""
    [ -n "${full:-}" ] && extra=", $full full + $resumed resumed handshakes"
    echo "  round $r $peer ($shape): $(tail -1 "$WORK/res/$peer.$shape") (rate/s, CPU µs, load)$extra" >&2
}

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

if [ "$WARMUP" != 0 ]; then
    for peer in $PEERS; do
        for shape in $SHAPES; do
            inst=$(inst_of "$peer" "$shape")
            measure "$shape" "${PORT[$inst]}" "$WARMUP" >/dev/null
        done
    done
fi

for r in $(seq "$ROUNDS"); do
    for shape in $SHAPES; do
        for peer in $PEERS; do run "$peer" "$shape"; done
    done
done

unit() { case $1 in a) echo "req" ;; b | resume) echo "handshake" ;; bulk) echo "MiB" ;; esac; }
echo
echo "HTTPS ($SUITE, $GROUP, EC P-256 certificate), one worker, server on CPU 0, clients on CPU 1,"
echo "${DURATION}s per run, medians of $ROUNDS rounds; load average (1 min) seen: $(cat "$WORK"/res/* \
    | awk '{print $3}' | sort -g | sed -n '1p;$p' | paste -sd- -)"
echo "a: wrk -t1 -c64 keep-alive; b: $STIME_CLIENTS x s_time -new (full handshake per request);"
echo "resume: $STIME_CLIENTS x s_time -reuse (resumed); bulk: wrk -t1 -c16 a 1 MiB file (req/s = MiB/s)"
echo
header="| server |" rule="|---|"
for shape in $SHAPES; do
    header+=" $shape /s | $shape CPU µs/$(unit "$shape") |"
    rule+="---:|---:|"
done
echo "$header"
echo "$rule"
for peer in $PEERS; do
    line="| $peer |"
    for shape in $SHAPES; do
        rate=$(cut -d' ' -f1 "$WORK/res/$peer.$shape" | median)
        cpu=$(cut -d' ' -f2 "$WORK/res/$peer.$shape" | median)
        echo "$cpu" >"$WORK/res/$peer.$shape.med"
        line+=" $(printf '%.0f' "$rate") | $(printf '%.2f' "$cpu") |"
    done
    echo "$line"
done
echo
# Each peer against the first peregrine in PEERS (ratio < 1: peregrine uses less CPU). "req" is
# the shape's unit: a request, a handshake (with its one request), a 1 MiB response.
base=""
for peer in $PEERS; do [[ $peer == peregrine* ]] && { base=$peer; break; }; done
if [ -n "$base" ]; then
    for shape in $SHAPES; do
        for peer in $PEERS; do
            [ "$peer" = "$base" ] && continue
            awk -v s="$shape" -v b="$base" -v p="$peer" -v x="$(cat "$WORK/res/$base.$shape.med")" \
                -v y="$(cat "$WORK/res/$peer.$shape.med")" 'BEGIN {
                printf "summary tls-%s: %s %.2f us/req, %s %.2f us/req, ratio %.2fx\n",
                    s, b, x, p, y, x / y }'
        done
    done
fi
