#!/usr/bin/env bash
# The supported matrix, proved by a real consumer (DEVELOPERS.md): builds and packs rx-informer,
# installs the tarball into throw-away consumer projects outside the repo, and runs
#   - compat/smoke.js (plain CommonJS) on the system Node (20) with @kubernetes/client-node 1.x,
#     and on the repo's Node 22 (devDependency node@22) with client-node 2.x;
#   - the `rx-informer-apiserver` bin in each;
#   - tsc on compat/smoke.ts against the packed .d.ts: moduleResolution node16 (the exports map)
#     with each client-node major, and the classic node10 resolution.
# Ends with "compat: N passed, N failed"; exits non-zero when anything failed.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
COMPAT="$REPO/compat"
RXJS_RANGE='^7.8.0'
STARTED=$SECONDS

passed=0
failed=0
declare -a failures=()
pass() { passed=$((passed + 1)); echo "compat: PASS  $1"; }
fail() { failed=$((failed + 1)); failures+=("$1"); echo "compat: FAIL  $1"; }
finish() {
  section "compat done"
  for failure in "${failures[@]+"${failures[@]}"}"; do echo "   failed: $failure"; done
  echo "compat: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
indent() { sed 's/^/    /'; }
section() { echo "== [$((SECONDS - STARTED)) s] $*"; }
# installed_version DIR PACKAGE: the version of PACKAGE in DIR's node_modules ('?' if absent).
installed_version() { "$NODE22" -p "try { require('$1/node_modules/$2/package.json').version } catch { '?' }"; }

# The consumers hold ~200 MB in ~15 000 files: on a RAM-backed /dev/shm (when exec is allowed there
# and 1 GB is free) installing and deleting them takes a second, not tens of seconds on a busy
# disk. An explicit TMPDIR wins.
temp_parent() {
  if [ -n "${TMPDIR:-}" ]; then
    echo "$TMPDIR"
  elif [ -d /dev/shm ] && [ -w /dev/shm ] && ! grep -qE '^[^ ]+ /dev/shm [^ ]+ ([^ ]*,)?noexec' /proc/mounts 2>/dev/null &&
    [ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')" -gt 1048576 ] 2>/dev/null; then
    echo /dev/shm
  else
    echo /tmp
  fi
}
WORK="$(mktemp -d "$(temp_parent)/rx-informer-compat.XXXXXX")"
declare -a JOBS=()
# Background jobs still running on an early exit: each job's own processes, then the job.
cleanup() {
  for pid in "${JOBS[@]+"${JOBS[@]}"}"; do
    if command -v pkill >/dev/null; then pkill -TERM -P "$pid" 2>/dev/null || true; fi
    kill "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

# A consumer has none of npm's per-script variables (npm_config_local_prefix would point nested npm
# commands back at this repo) and no NODE_PATH: it resolves from its own node_modules only.
# An npm_config_cache set by the caller is kept.
declare -a CONSUMER_ENV=(env -u NODE_PATH -u INIT_CWD)
while IFS= read -r name; do
  case "$name" in npm_config_cache) ;; npm_*) CONSUMER_ENV+=(-u "$name") ;; esac
done < <(compgen -e)

# The system Node: the first `node` on a PATH without any node_modules/.bin (npm scripts put the
# repo's Node 22 there first).
SYSTEM_PATH="$(
  IFS=:
  kept=()
  for dir in $PATH; do case "$dir" in */node_modules/.bin | */node_modules/.bin/) ;; *) kept+=("$dir") ;; esac; done
  echo "${kept[*]}"
)"
SYSTEM_NODE="$(PATH="$SYSTEM_PATH" command -v node || true)"
NODE22="$REPO/node_modules/.bin/node"

version_of() { "$1" -p 'process.versions.node'; }
major_of() { echo "${1%%.*}"; }
minor_of() { local rest="${1#*.}"; echo "${rest%%.*}"; }

section "compat: repo $REPO, work dir $WORK"
if [ ! -x "$NODE22" ]; then
  fail "setup: $NODE22 is missing (run npm ci first: the node@22 devDependency provides it)"
  finish
  exit 1
fi
N22_VERSION="$(version_of "$NODE22")"
# Node 22 for the consumer: a bin dir holding only `node`, so the consumer sees no repo tooling.
mkdir -p "$WORK/node22-bin"
ln -s "$("$NODE22" -p 'process.execPath')" "$WORK/node22-bin/node"
NODE22_PATH="$WORK/node22-bin:$SYSTEM_PATH"

# --- 1. build, pack, shape -------------------------------------------------------------------------
section "build (npm run build) and pack"
if ! (cd "$REPO" && npm run build --silent) >"$WORK/build.log" 2>&1; then
  indent <"$WORK/build.log"
  fail "package: npm run build failed (output above)"
  finish
  exit 1
fi
if ! (cd "$REPO" && npm pack --json --pack-destination "$WORK") >"$WORK/pack.json" 2>"$WORK/pack.log"; then
  indent <"$WORK/pack.log"
  fail "package: npm pack failed (output above)"
  finish
  exit 1
fi
if TARBALL="$("$NODE22" "$COMPAT/checkPack.js" "$REPO" "$WORK/pack.json" "$WORK" 2>"$WORK/shape.log")"; then
  cat "$WORK/shape.log"
  pass "package: built, packed ($(basename "$TARBALL")), shape checked"
else
  cat "$WORK/shape.log"
  fail "package: the tarball's shape (see above)"
  finish
  exit 1
fi

# --- 2. consumer projects, installed in parallel -------------------------------------------------------
# consumer DIR PATH CLIENT_NODE_RANGE: a project with the tarball, rxjs and that client-node, its
# npm run by the Node on PATH (as the consumer's own npm would be).
consumer() {
  local dir="$1" path="$2" range="$3"
  mkdir -p "$dir"
  echo '{ "name": "rx-informer-compat-consumer", "version": "0.0.0", "private": true }' >"$dir/package.json"
  cp "$COMPAT/smoke.js" "$COMPAT/smoke.ts" "$COMPAT/exports.ts" "$COMPAT/tsconfig.node16.json" "$COMPAT/tsconfig.node10.json" "$dir/"
  local limit=()
  command -v timeout >/dev/null && limit=(timeout 600)
  (cd "$dir" && PATH="$path" "${CONSUMER_ENV[@]}" "${limit[@]+"${limit[@]}"}" npm install --no-audit --no-fund --prefer-offline --loglevel=error \
    "$TARBALL" "rxjs@$RXJS_RANGE" "@kubernetes/client-node@$range")
}

CN1="$WORK/consumer-node20-client-node1"
CN2="$WORK/consumer-node22-client-node2"
section "installing consumers (tarball + rxjs@$RXJS_RANGE + @kubernetes/client-node ^1 / ^2)"
consumer "$CN1" "$SYSTEM_PATH" '^1' >"$WORK/install1.log" 2>&1 &
INSTALL1=$!
JOBS+=("$INSTALL1")
consumer "$CN2" "$NODE22_PATH" '^2' >"$WORK/install2.log" 2>&1 &
INSTALL2=$!
JOBS+=("$INSTALL2")
CN1_OK=true
CN2_OK=true
wait "$INSTALL1" || CN1_OK=false
wait "$INSTALL2" || CN2_OK=false
JOBS=()
CN1_VERSION="$(installed_version "$CN1" @kubernetes/client-node)"
CN2_VERSION="$(installed_version "$CN2" @kubernetes/client-node)"

# --- 3. type checks in the background, runtime checks in the foreground ------------------------------
TSC=("$NODE22" "$REPO/node_modules/typescript/bin/tsc")
TSC_VERSION="$("${TSC[@]}" --version | sed 's/^Version //')"
# typecheck NAME DIR CONFIG: runs tsc in the background; results are collected below.
declare -a TYPECHECKS=()
typecheck() {
  local name="$1" dir="$2" config="$3" log="$WORK/tsc-${#TYPECHECKS[@]}.log"
  (cd "$dir" && PATH="$NODE22_PATH" "${CONSUMER_ENV[@]}" "${TSC[@]}" -p "$config") >"$log" 2>&1 &
  JOBS+=("$!")
  TYPECHECKS+=("$!|$name|$log")
}

# runtime LABEL DIR PATH: smoke.js and the bin under the Node on PATH.
runtime() {
  local label="$1" dir="$2" path="$3" limit=()
  command -v timeout >/dev/null && limit=(timeout 120)
  if (cd "$dir" && PATH="$path" "${CONSUMER_ENV[@]}" "${limit[@]+"${limit[@]}"}" node smoke.js) >"$dir/smoke.log" 2>&1; then
    indent <"$dir/smoke.log"
    pass "$label: smoke.js"
  else
    indent <"$dir/smoke.log"
    fail "$label: smoke.js (output above)"
  fi
  if (cd "$dir" && PATH="$path" "${CONSUMER_ENV[@]}" "${limit[@]+"${limit[@]}"}" node_modules/.bin/rx-informer-apiserver --pods 3 --duration 1) >"$dir/bin.log" 2>&1 &&
    grep -q 'listening on http://127.0.0.1:' "$dir/bin.log"; then
    pass "$label: the rx-informer-apiserver bin starts and stops"
  else
    indent <"$dir/bin.log"
    fail "$label: the rx-informer-apiserver bin (output above)"
  fi
}

if $CN2_OK; then
  typecheck "types, moduleResolution node16, with client-node $CN2_VERSION (tsc $TSC_VERSION)" "$CN2" tsconfig.node16.json
  typecheck "types, classic moduleResolution node10, with client-node $CN2_VERSION (tsc $TSC_VERSION)" "$CN2" tsconfig.node10.json
fi
if $CN1_OK; then
  typecheck "types, moduleResolution node16, with client-node $CN1_VERSION (tsc $TSC_VERSION)" "$CN1" tsconfig.node16.json
fi

section "Node 20 leg: the system node with @kubernetes/client-node 1.x"
if [ -z "$SYSTEM_NODE" ]; then
  fail "node 20 leg: no system node on PATH without node_modules/.bin"
elif ! $CN1_OK; then
  indent <"$WORK/install1.log"
  fail "node 20 leg: npm install of the consumer failed (output above)"
else
  SYS_VERSION="$(version_of "$SYSTEM_NODE")"
  echo "   system node: $SYSTEM_NODE v$SYS_VERSION"
  if [ "$(major_of "$SYS_VERSION")" -lt 20 ]; then
    fail "node 20 leg: the system node v$SYS_VERSION is older than engines.node >= 20"
  else
    if [ "$(major_of "$SYS_VERSION")" -ge 22 ]; then
      echo "   note: the system node is v$SYS_VERSION (>= 22): this leg runs client-node 1.x on it, so Node 20 itself is not covered on this machine"
    fi
    runtime "node $SYS_VERSION + client-node $CN1_VERSION" "$CN1" "$SYSTEM_PATH"
  fi
fi

section "Node 22 leg: the repo's node (devDependency node@22) with @kubernetes/client-node 2.x"
if [ "$(major_of "$N22_VERSION")" -lt 22 ] || { [ "$(major_of "$N22_VERSION")" -eq 22 ] && [ "$(minor_of "$N22_VERSION")" -lt 19 ]; }; then
  fail "node 22 leg: $NODE22 is v$N22_VERSION; client-node 2.x needs >= 22.19"
elif ! $CN2_OK; then
  indent <"$WORK/install2.log"
  fail "node 22 leg: npm install of the consumer failed (output above)"
else
  runtime "node $N22_VERSION + client-node $CN2_VERSION" "$CN2" "$NODE22_PATH"
fi

section "TypeScript consumers (tsc --noEmit on compat/smoke.ts against the packed .d.ts)"
for entry in "${TYPECHECKS[@]+"${TYPECHECKS[@]}"}"; do
  IFS='|' read -r pid name log <<<"$entry"
  if wait "$pid"; then
    pass "$name"
  else
    indent <"$log"
    fail "$name (output above)"
  fi
done
JOBS=()

finish
