#!/usr/bin/env bash
# A local Ray cluster, two Live Memory gateways on it, and the smoke test (deploy/ray/README.md).
#
#   deploy/ray/run-local.sh /path/to/repo            # uses ANTHROPIC_API_KEY (or LIVE_MEMORY_*)
#
# Needs `pip install 'live-memory[ray]'` (the `ray` and `live-memory` commands on PATH, or
# PYTHON pointing at the interpreter that has them). Everything it starts is stopped on exit.
set -euo pipefail
repo="$(cd "${1:?usage: run-local.sh REPO}" && pwd)"
python="${PYTHON:-python3}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d /tmp/lm-ray-XXXXXX)"
port="${RAY_PORT:-6380}"
export LIVE_MEMORY_DATA_DIR="${LIVE_MEMORY_DATA_DIR:-$work/data}"   # shared by both gateways
export LIVE_MEMORY_BACKEND=ray LIVE_MEMORY_RAY_ADDRESS="127.0.0.1:$port"
export LIVE_MEMORY_RAY_NAMESPACE="${LIVE_MEMORY_RAY_NAMESPACE:-live-memory}"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# 1. The head node; it holds the checkout's parent directory (docs/SCALING.md, placement).
resources="$("$python" "$here/checkout_resources.py" "$(dirname "$repo")")"
"$python" -m ray.scripts.scripts start --head --block --port="$port" --node-ip-address=127.0.0.1 \
  --num-cpus=1 --include-dashboard=false --disable-usage-stats --temp-dir="$work/ray" \
  --resources="$resources" >"$work/ray.log" 2>&1 &
pids+=($!)
until grep -q "Ray runtime started" "$work/ray.log"; do
  kill -0 "${pids[0]}" || { cat "$work/ray.log"; exit 1; }
  sleep 0.5
done

# 2. Two gateways on the same cluster and data directory.
for p in 7711 7712; do
  "$python" -m live_memory.cli serve --port "$p" >"$work/gateway-$p.log" 2>&1 &
  pids+=($!)
done
for p in 7711 7712; do
  until curl -fsS "http://127.0.0.1:$p/health" >/dev/null 2>&1; do sleep 0.5; done
done

# 3. One memory behind both.
"$python" "$here/smoke.py" http://127.0.0.1:7711 http://127.0.0.1:7712 "$repo"
