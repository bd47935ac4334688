#!/usr/bin/env bash
# The production artefact as an operator gets it (docs/deploy/README.md): `npm pack` in this checkout,
# `npm install --omit=dev` of the tarball into an empty folder outside it, no TypeScript tooling
# installed, then `enrichbridge start` on an empty data folder and the curl line its first start prints,
# answered, and `enrichbridge worker` started and stopped beside it. Prints the time from the start to
# that first answer. Run by .ci/run after the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

started=$SECONDS
tarball="$(npm pack --silent --pack-destination "$work" | tail -n 1)"
echo "== package: packed $tarball ($(du -h "$work/$tarball" | cut -f1)) in $((SECONDS - started)) s"

mkdir "$work/app"
cd "$work/app"
npm init -y >/dev/null
# npm 12 runs a dependency's install script only where allowScripts says so (docs/deploy/README.md).
npm pkg set allowScripts.better-sqlite3=true --json
started=$SECONDS
# --prefer-offline: what `npm ci` already fetched is taken from npm's cache (the registry is still asked for the rest).
npm install --omit=dev --no-audit --no-fund --prefer-offline --loglevel=error "$work/$tarball"
echo "== package: npm install --omit=dev took $((SECONDS - started)) s"

for tool in typescript tsx esbuild vitest @types/node; do
  if [ -e "node_modules/$tool" ]; then
    echo "package check failed: the production install holds $tool" >&2
    exit 1
  fi
done
if [ -n "$(find node_modules/enrichbridge -name '*.ts' -not -name '*.d.ts' -print -quit)" ]; then
  echo "package check failed: the package holds TypeScript sources" >&2
  exit 1
fi

# A free port on loopback, and none of the test run's services: a first start on an empty data folder.
port="$(node -e "const s=require('node:net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
mkdir -m 700 "$work/data"
log="$work/server.log"
t0="$(date +%s%N)"
env -u DATABASE_URL -u REDIS_URL -u NODE_ENV -u TEST_DATABASE_URL -u TEST_REDIS_URL \
  PORT="$port" HOST=127.0.0.1 DATA_DIR="$work/data" LOG_LEVEL=warn \
  node_modules/.bin/enrichbridge start >"$log" 2>&1 &
server_pid=$!

curl_line=""
for _ in $(seq 1 300); do
  curl_line="$(grep -m 1 -E '^ +curl -s -X POST ' "$log" || true)"
  [ -n "$curl_line" ] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "package check failed: enrichbridge start exited:" >&2
    cat "$log" >&2
    exit 1
  fi
  sleep 0.02
done
if [ -z "$curl_line" ]; then
  echo "package check failed: no curl line within 6 s:" >&2
  cat "$log" >&2
  exit 1
fi
answer="$(eval "$curl_line")"
t1="$(date +%s%N)"
if ! grep -q '"household_matched":true' <<<"$answer"; then
  echo "package check failed: the printed curl line was answered with: $answer" >&2
  exit 1
fi
echo "== package: enrichbridge start to the first sandbox answer: $(((t1 - t0) / 1000000)) ms on $(node --version)"

# The workers apart from the server, as docs/deploy's second unit runs them: started, then stopped by SIGTERM.
worker_log="$work/worker.log"
env -u DATABASE_URL -u REDIS_URL -u NODE_ENV -u TEST_DATABASE_URL -u TEST_REDIS_URL \
  DATA_DIR="$work/data" LOG_LEVEL=info node_modules/.bin/enrichbridge worker >"$worker_log" 2>&1 &
worker_pid=$!
for _ in $(seq 1 500); do
  grep -q '"msg":"worker started"' "$worker_log" && break
  if ! kill -0 "$worker_pid" 2>/dev/null; then break; fi
  sleep 0.02
done
if ! grep -q '"msg":"worker started"' "$worker_log"; then
  kill "$worker_pid" 2>/dev/null || true
  echo "package check failed: enrichbridge worker did not start within 10 s:" >&2
  cat "$worker_log" >&2
  exit 1
fi
kill -TERM "$worker_pid"
worker_status=0
wait "$worker_pid" || worker_status=$?
if [ "$worker_status" -ne 0 ] || ! grep -q '"msg":"worker stopped"' "$worker_log"; then
  echo "package check failed: enrichbridge worker did not stop cleanly on SIGTERM (exit $worker_status):" >&2
  cat "$worker_log" >&2
  exit 1
fi
echo "== package: enrichbridge worker started and stopped on SIGTERM"
