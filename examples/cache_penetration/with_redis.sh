#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Runs a command beside a redis-server with the CF module: the server
# starts on a free 127.0.0.1 port, in a folder of its own, without
# persistence; every @PORT@ in the command becomes its port; the server
# stops whatever the command's outcome, and the command's status is the
# script's. For the cache-penetration example's shared gate.
#
# usage: with_redis.sh MODULE COMMAND [ARG...]
#   REDIS_SERVER   the server binary (default: redis-server)
#   REDIS_PRELOAD  libraries the server preloads (a sanitizer build's
#                  runtime, for its instrumented module)
set -euo pipefail

module=$(readlink -f "${1:?usage: with_redis.sh MODULE COMMAND [ARG...]}")
shift
server=${REDIS_SERVER:-redis-server}
folder=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
preload=()
if [ -n "${REDIS_PRELOAD:-}" ]; then
  # The server's own allocations at exit are not the module's.
  preload=(env "LD_PRELOAD=$REDIS_PRELOAD"
    "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
fi
${preload[@]+"${preload[@]}"} "$server" --port "$port" --bind 127.0.0.1 \
  --dir "$folder" --save "" --appendonly no --loadmodule "$module" \
  --logfile "$folder/server.log" &
server_pid=$!
stop() {
  redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  rm -rf "$folder"
}
trap stop EXIT
for _ in $(seq 1 200); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$folder/server.log" >&2; exit 1; }
  sleep 0.05
done
redis-cli -p "$port" ping >/dev/null || { echo "with_redis: no server on $port" >&2; exit 1; }
args=()
for arg in "$@"; do args+=("${arg//@PORT@/$port}"); done
"${args[@]}"
