#!/usr/bin/env bash
# Two SplitLab replicas on loopback behind nginx (sticky sessions, WebSocket, gzip).
#
#   deploy/run_replicas.sh              # foreground: Ctrl-C (or SIGTERM) stops all three processes
#   deploy/run_replicas.sh --background # start, print the PIDs and the stop command, return
#
# Environment (all optional):
#   PROXY_PORT=8080  APP_PORT_A=8501  APP_PORT_B=8502   ports on 127.0.0.1
#   PREFIX=<mktemp -d>     nginx pid, logs, temp files and the rendered nginx.conf
#   PYTHON=python3         interpreter that has streamlit installed
#   NGINX=nginx            nginx binary (Debian: apt-get install -y nginx; /usr/sbin/nginx)
#   STREAMLIT_SERVER_COOKIE_SECRET   shared by both replicas (random per run if unset)
# Needs no root and writes nothing outside PREFIX (nginx's own files included).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROXY_PORT="${PROXY_PORT:-8080}"
APP_PORT_A="${APP_PORT_A:-8501}"
APP_PORT_B="${APP_PORT_B:-8502}"
PYTHON="${PYTHON:-python3}"
NGINX="${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}"
PREFIX="${PREFIX:-$(mktemp -d -t splitlab-nginx.XXXXXX)}"
BACKGROUND=0
[[ "${1:-}" == "--background" ]] && BACKGROUND=1

if [[ ! -x "$NGINX" ]]; then
  echo "nginx not found ($NGINX): apt-get install -y nginx" >&2
  exit 2
fi
# Replicas must agree on the secret that signs XSRF cookies, or a request that fails over to
# the other replica is rejected.
export STREAMLIT_SERVER_COOKIE_SECRET="${STREAMLIT_SERVER_COOKIE_SECRET:-$("$PYTHON" -c 'import secrets; print(secrets.token_hex(32))')}"

mkdir -p "$PREFIX"
PIDS=()
stop() {
  trap - EXIT INT TERM
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}

start_replica() {  # $1 = name, $2 = port
  (cd "$ROOT" && exec "$PYTHON" -m streamlit run app.py --server.address 127.0.0.1 \
      --server.port "$2" --server.headless true) >"$PREFIX/streamlit-$1.log" 2>&1 &
  PIDS+=("$!")
}

wait_healthy() {  # $1 = url
  for _ in $(seq 1 300); do
    if "$PYTHON" -c "import sys, urllib.request; sys.exit(urllib.request.urlopen('$1', timeout=2).read() != b'ok')" 2>/dev/null; then
      return 0
    fi
    sleep 0.3
  done
  echo "not healthy after 90 s: $1 (logs in $PREFIX)" >&2
  return 1
}

trap stop EXIT                   # any failure below stops what was started
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
start_replica a "$APP_PORT_A"
start_replica b "$APP_PORT_B"

PREFIX="$PREFIX" LISTEN="127.0.0.1:$PROXY_PORT" APP_A="127.0.0.1:$APP_PORT_A" \
  APP_B="127.0.0.1:$APP_PORT_B" sh "$ROOT"/deploy/render_nginx.sh "$ROOT"/deploy/nginx.conf \
  >"$PREFIX/nginx.conf"
"$NGINX" -t -q -p "$PREFIX" -e "$PREFIX/error.log" -c "$PREFIX/nginx.conf"
"$NGINX" -p "$PREFIX" -e "$PREFIX/error.log" -c "$PREFIX/nginx.conf" -g "daemon off;" &
PIDS+=("$!")

wait_healthy "http://127.0.0.1:$APP_PORT_A/_stcore/health"
wait_healthy "http://127.0.0.1:$APP_PORT_B/_stcore/health"
wait_healthy "http://127.0.0.1:$PROXY_PORT/_stcore/health"
echo "SplitLab on http://127.0.0.1:$PROXY_PORT/ (replicas :$APP_PORT_A and :$APP_PORT_B; logs in $PREFIX)"

if [[ $BACKGROUND == 1 ]]; then
  trap - EXIT INT TERM
  printf '%s\n' "${PIDS[@]}" >"$PREFIX/pids"
  echo "stop with: kill ${PIDS[*]}"
  exit 0
fi
# Foreground: stay until a child exits or we are told to stop; the EXIT trap stops the rest.
wait -n "${PIDS[@]}"
echo "a SplitLab process exited; stopping the others" >&2
