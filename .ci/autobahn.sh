#!/usr/bin/env bash
# The Autobahn|Testsuite's 517 cases (kosoku, a runner of Autobahn's own case files, from PyPI)
# against peregrine's WebSocket server (examples/ws_echo) and with its client driving the
# fuzzing server (examples/ws_autobahn_client). Every case must be OK, or INFORMATIONAL (cases
# 7.1.6, 7.13.1, 7.13.2 report what the peer did and have no verdict); nothing FAILED, NON-STRICT
# or UNIMPLEMENTED, compression cases (12.x, 13.x) included. Loopback only.
#
# usage: .ci/autobahn.sh BIN_DIR   (where ws_echo and ws_autobahn_client were built)
set -euo pipefail
bin=$1
if ! command -v kosoku >/dev/null 2>&1; then
  python3 -m pip install -q kosoku
fi
out=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$out"' EXIT

# Every case OK or INFORMATIONAL, both behaviours; prints the others and fails on any.
check() {
  python3 - "$1" "$2" <<'PY'
import json, sys
from collections import Counter
index, what = sys.argv[1], sys.argv[2]
cases = [c for agent in json.load(open(index)).values() for c in agent.items()]
seen = Counter((v["behavior"], v["behaviorClose"]) for _, v in cases)
bad = [(k, v["behavior"], v["behaviorClose"]) for k, v in cases
       if v["behavior"] not in ("OK", "INFORMATIONAL") or v["behaviorClose"] not in ("OK", "INFORMATIONAL")]
print(f"autobahn {what}: {len(cases)} cases: " + ", ".join(f"{b}/{c} {n}" for (b, c), n in sorted(seen.items())))
for k, b, c in sorted(bad):
    print(f"  {k}: {b}/{c}")
if len(cases) != 517 or bad:
    sys.exit(1)
PY
}

# The server: kosoku drives ws_echo, two cases at a time.
"$bin/ws_echo" --addr 127.0.0.1:19002 --workers 1 2>/dev/null &
pids+=($!)
for _ in $(seq 50); do
  (exec 3<>/dev/tcp/127.0.0.1/19002) 2>/dev/null && break
  sleep 0.1
done
timeout 900 kosoku -p 2 -o "$out/server" 127.0.0.1:19002 >"$out/server.log" 2>&1 || true
check "$out/server/index.json" server

# The client: ws_autobahn_client drives kosoku's fuzzing server.
kosoku -m fuzzingserver -o "$out/client" 127.0.0.1:19001 >"$out/client.log" 2>&1 &
pids+=($!)
for _ in $(seq 50); do
  (exec 3<>/dev/tcp/127.0.0.1/19001) 2>/dev/null && break
  sleep 0.1
done
timeout 900 "$bin/ws_autobahn_client" ws://127.0.0.1:19001 peregrine
for _ in $(seq 50); do
  [ -f "$out/client/index.json" ] && break
  sleep 0.2
done
check "$out/client/index.json" client
