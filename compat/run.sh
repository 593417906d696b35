#!/usr/bin/env bash
# The supported matrix, proved by real consumers (DEVELOPERS.md): packs rx-informer and the
# workspace package rx-informer-apiserver as `npm pack` does on a fresh clone (each prepack builds
# its dist/), checks each tarball (its shape, @arethetypeswrong/cli, publint; the links of the docs
# rx-informer ships), installs both into throw-away consumer projects outside the repo, and runs
#   - compat/loadEntries.cjs and .mjs: every entry point of both packages (scripts/entryPoints.js)
#     with require from a CommonJS project and with import from an ES module project, under
#     `node --trace-warnings` (no warning allowed), and the Lease rules through each build
#     (compat/leaseRules.cjs), on both Node legs;
#   - the testing guide's first example, verbatim from the shipped guide, under Jest (CommonJS,
#     ts-jest) and Vitest (an ES module project); the tutorial's project (tutorial/first-controller)
#     type-checked (nodenext) and tested under Vitest and Jest (its ES module mode);
#   - compat/smoke.js (plain CommonJS) on the system Node (20) with @kubernetes/client-node 1.x,
#     and on the repo's Node 22 (devDependency node@22) with client-node 2.x; both with prom-client
#     for rx-informer/prometheus, whose absence must leave the main entry working;
#   - rx-informer-apiserver's bin in each, and on Node 20 with client-node 2.x (it must say
#     which Node it needs);
#   - the `rx-informer` bin (types from a CRD) in each;
#   - the shipped README's quickstart in CommonJS and ES module consumers, under each TypeScript
#     setup the README documents (node16, nodenext, bundler), strict, skipLibCheck false:
#     type-checked, compiled (or bundled), and run against a loopback server;
#   - tsc on compat/smoke.ts (node20 and the classic node10 resolution), compat/exports.ts, and
#     compat/typesOnly.ts (CommonJS, module node16);
#   - a fresh clone without node_modules: `npm test -- <one spec>` and `npm start` install by themselves.
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

# --- 1. pack (prepack builds), shape, attw, publint, shipped docs -----------------------------------
# pack_package NAME WORKSPACE_FLAG...: packs one package into $WORK and checks its shape, attw and
# publint; prints the tarball's path on stdout (empty when it could not be packed).
pack_package() {
  local name="$1" log="$WORK/pack-$1"
  shift
  if ! (cd "$REPO" && npm pack --json --pack-destination "$WORK" "$@") >"$log.json" 2>"$log.log"; then
    indent <"$log.log" >&2
    fail "$name: npm pack failed (output above)" >&2
    return 0
  fi
  local tarball
  if tarball="$("$NODE22" "$COMPAT/checkPack.js" "$REPO" "$name" "$log.json" "$WORK" 2>"$log.shape")"; then
    cat "$log.shape" >&2
    pass "$name: packed ($(basename "$tarball")) with both builds, LICENSE and README; shape checked" >&2
  else
    cat "$log.shape" >&2
    fail "$name: the tarball's shape (see above)" >&2
    return 0
  fi
  mkdir -p "$WORK/unpacked-$name" && tar -xzf "$tarball" -C "$WORK/unpacked-$name"
  if (cd "$REPO" && "$NODE22" node_modules/@arethetypeswrong/cli/dist/index.js --format table-flipped "$tarball") >"$log.attw" 2>&1; then
    indent <"$log.attw" >&2
    pass "$name: @arethetypeswrong/cli finds no problem (node10, node16 from CJS and ESM, bundler)" >&2
  else
    indent <"$log.attw" >&2
    fail "$name: @arethetypeswrong/cli (output above)" >&2
  fi
  if (cd "$WORK/unpacked-$name/package" && "$NODE22" "$REPO/node_modules/publint/src/cli.js" --strict .) >"$log.publint" 2>&1 &&
    ! grep -qiE '^(errors|warnings|suggestions):' "$log.publint"; then
    indent <"$log.publint" >&2
    pass "$name: publint --strict finds no error, warning or suggestion" >&2
  else
    indent <"$log.publint" >&2
    fail "$name: publint (output above)" >&2
  fi
  echo "$tarball"
}
section "npm pack of both packages (each prepack builds its dist/ from nothing) and the tarballs' shape"
rm -rf "$REPO/dist" "$REPO/apiserver/dist"
# pass/fail run in this shell (not a subshell) so that they count: the tarball path goes through a file.
pack_package rx-informer >"$WORK/tarball-root"
pack_package rx-informer-apiserver --workspace rx-informer-apiserver >"$WORK/tarball-apiserver"
TARBALL="$(cat "$WORK/tarball-root")"
APISERVER_TARBALL="$(cat "$WORK/tarball-apiserver")"
if [ -z "$TARBALL" ] || [ -z "$APISERVER_TARBALL" ]; then
  finish
  exit 1
fi
mkdir -p "$WORK/unpacked" && tar -xzf "$TARBALL" -C "$WORK/unpacked"
if "$NODE22" "$COMPAT/checkDocs.js" "$WORK/unpacked/package" "$REPO" 2>"$WORK/docs.log"; then
  cat "$WORK/docs.log"
  pass "package: the shipped README and docs link only to shipped files; the quickstart is the repository README's"
else
  cat "$WORK/docs.log"
  fail "package: the shipped docs (see above)"
fi

# --- 2. consumer projects, installed in parallel -------------------------------------------------------
# consumer DIR PATH CLIENT_NODE_RANGE [PACKAGE...]: a project with both tarballs, rxjs, that
# client-node and any other packages, its npm run by the Node on PATH (as the consumer's own npm
# would be). DIR is a CommonJS project; DIR/esm an ES module one ("type": "module") that resolves
# from DIR/node_modules.
consumer() {
  local dir="$1" path="$2" range="$3"
  shift 3
  mkdir -p "$dir/esm"
  echo '{ "name": "rx-informer-compat-consumer", "version": "0.0.0", "private": true }' >"$dir/package.json"
  echo '{ "name": "rx-informer-compat-consumer-esm", "version": "0.0.0", "private": true, "type": "module" }' >"$dir/esm/package.json"
  cp "$COMPAT/smoke.js" "$COMPAT/smoke.ts" "$COMPAT/exports.ts" "$COMPAT/typesOnly.ts" "$COMPAT/runQuickstart.js" \
    "$COMPAT/loadEntries.cjs" "$COMPAT/leaseRules.cjs" "$COMPAT/guideProjects.js" \
    "$COMPAT/tsconfig.node16.json" "$COMPAT/tsconfig.node10.json" "$COMPAT/tsconfig.typesOnly.json" "$dir/"
  cp "$COMPAT/loadEntries.mjs" "$dir/esm/"
  local limit=()
  command -v timeout >/dev/null && limit=(timeout 600)
  (cd "$dir" && PATH="$path" "${CONSUMER_ENV[@]}" "${limit[@]+"${limit[@]}"}" npm install --no-audit --no-fund --prefer-offline --loglevel=error \
    "$TARBALL" "$APISERVER_TARBALL" "rxjs@$RXJS_RANGE" "@kubernetes/client-node@$range" "$@")
}

CN1="$WORK/consumer-node20-client-node1"
CN2="$WORK/consumer-node22-client-node2"
# The testing guide's first example as a user's test, under Jest and Vitest (Node 22: Vitest needs >= 22.12),
# and the tutorial's project (prom-client for its /metrics).
CG="$WORK/consumer-testing-guide"
section "installing consumers (both tarballs + rxjs@$RXJS_RANGE + @kubernetes/client-node ^1 / ^2; Jest and Vitest for the testing guide)"
PROM_CLIENT='prom-client@^15'
consumer "$CN1" "$SYSTEM_PATH" '^1' "$PROM_CLIENT" >"$WORK/install1.log" 2>&1 &
INSTALL1=$!
JOBS+=("$INSTALL1")
# The TypeScript consumers live in CN2 and check with skipLibCheck false: client-node's own
# declarations then need @types/ws (see the README's TypeScript setup).
consumer "$CN2" "$NODE22_PATH" '^2' '@types/node@^22' '@types/ws@^8' "$PROM_CLIENT" >"$WORK/install2.log" 2>&1 &
INSTALL2=$!
JOBS+=("$INSTALL2")
CN1_OK=true
CN2_OK=true
wait "$INSTALL1" || CN1_OK=false
wait "$INSTALL2" || CN2_OK=false
JOBS=()
# After the other two: three installs at once would crowd two cores.
CG_OK=true
consumer "$CG" "$NODE22_PATH" '^2' 'jest@^29' 'ts-jest@^29' 'typescript@~5.9' '@types/jest@^29' '@types/node@^22' 'vitest@^5' "$PROM_CLIENT" >"$WORK/install-guide.log" 2>&1 &
INSTALLG=$!
JOBS+=("$INSTALLG")
CN1_VERSION="$(installed_version "$CN1" @kubernetes/client-node)"
CN2_VERSION="$(installed_version "$CN2" @kubernetes/client-node)"

# --- 3. type checks in the background, runtime checks in the foreground ------------------------------
TSC=("$NODE22" "$REPO/node_modules/typescript/bin/tsc")
TSC_VERSION="$("${TSC[@]}" --version | sed 's/^Version //')"
# typecheck NAME DIR CONFIG: runs tsc in the background, at most two at a time (two cores);
# results are collected below.
declare -a TYPECHECKS=()
TYPECHECK_COUNT=0
typecheck() {
  local name="$1" dir="$2" config="$3" log="$WORK/tsc-$((TYPECHECK_COUNT += 1)).log"
  while [ "$(jobs -rp | wc -l)" -ge 2 ]; do sleep 0.2; done
  (
    cd "$dir" && PATH="$NODE22_PATH" "${CONSUMER_ENV[@]}" "${TSC[@]}" -p "$config"
    echo $? >"$log.rc"
  ) >"$log" 2>&1 &
  JOBS+=("$!")
  TYPECHECKS+=("$!|$name|$log")
}
# collect_typechecks: waits for every typecheck started so far and reports each.
collect_typechecks() {
  for entry in "${TYPECHECKS[@]+"${TYPECHECKS[@]}"}"; do
    IFS='|' read -r pid name log <<<"$entry"
    wait "$pid" 2>/dev/null || true
    if [ "$(cat "$log.rc" 2>/dev/null)" = 0 ]; then
      pass "$name"
    else
      indent <"$log"
      fail "$name (output above)"
    fi
  done
  TYPECHECKS=()
  JOBS=()
}

# The specifiers of every entry point of both packages (scripts/entryPoints.js).
mapfile -t SPECIFIERS < <("$NODE22" -e "const e = require('$REPO/scripts/entryPoints.js'); for (const x of e.ALL_ENTRY_POINTS) console.log(e.specifierOf(x))")

# checks LABEL LOG: one pass or fail per `ok NAME` / `FAIL NAME: why` line of LOG; a line of any
# other kind (a warning Node printed to stderr) fails too.
checks() {
  local label="$1" log="$2" line seen=0
  while IFS= read -r line; do
    case "$line" in
      'ok '*) pass "$label: ${line#ok }"; seen=$((seen + 1)) ;;
      'FAIL '*) fail "$label: ${line#FAIL }"; seen=$((seen + 1)) ;;
      *) fail "$label: unexpected output (a warning?): $line" ;;
    esac
  done <"$log"
  [ "$seen" -gt 0 ] || fail "$label: no check ran"
}

# runtime LABEL DIR PATH: every entry point with require (CommonJS project) and with import (ES
# module project) under --trace-warnings, the Lease rules in both builds, smoke.js and the bin,
# under the Node on PATH.
runtime() {
  local label="$1" dir="$2" path="$3" limit=()
  command -v timeout >/dev/null && limit=(timeout 120)
  (cd "$dir" && PATH="$path" "${CONSUMER_ENV[@]}" "${limit[@]+"${limit[@]}"}" node --trace-warnings loadEntries.cjs "${SPECIFIERS[@]}") >"$dir/load-cjs.log" 2>&1 || true
  checks "$label, require from a CommonJS project" "$dir/load-cjs.log"
  (cd "$dir/esm" && PATH="$path" "${CONSUMER_ENV[@]}" "${limit[@]+"${limit[@]}"}" node --trace-warnings loadEntries.mjs "${SPECIFIERS[@]}") >"$dir/load-esm.log" 2>&1 || true
  checks "$label, import from an ES module project" "$dir/load-esm.log"
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
  # The rx-informer bin loads its YAML parser (the yaml dependency) only when given YAML.
  printf '%s\n' 'apiVersion: apiextensions.k8s.io/v1' 'kind: CustomResourceDefinition' 'metadata: { name: widgets.example.com }' \
    'spec: { group: example.com, names: { kind: Widget, plural: widgets }, scope: Namespaced, versions: [{ name: v1, served: true, storage: true, schema: { openAPIV3Schema: { type: object } } }] }' >"$dir/widgets.yaml"
  if (cd "$dir" && PATH="$path" "${CONSUMER_ENV[@]}" "${limit[@]+"${limit[@]}"}" node_modules/.bin/rx-informer crd widgets.yaml) >"$dir/crd.log" 2>&1 &&
    grep -q 'export const widgetsV1: Resource<WidgetV1>' "$dir/crd.log"; then
    pass "$label: the rx-informer bin generates types from a CRD"
  else
    indent <"$dir/crd.log"
    fail "$label: the rx-informer bin (output above)"
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

section "TypeScript consumers of compat/smoke.ts, exports.ts, typesOnly.ts (tsc --noEmit)"
if $CN2_OK; then
  typecheck "types, CommonJS, module node16 (types only: rx-informer's declarations), client-node $CN2_VERSION, skipLibCheck false" "$CN2" tsconfig.typesOnly.json
fi
collect_typechecks

# The shipped README's quickstart in CommonJS and ES module consumers, under each documented setup.
README_SHIPPED="$CN2/node_modules/rx-informer/README.md"
SETUPS=(node16 nodenext bundler)
section "the README quickstart: {CommonJS, ES module} x {${SETUPS[*]}}, strict, skipLibCheck false (tsc $TSC_VERSION, client-node $CN2_VERSION)"
declare -a QUICKSTARTS=()
if $CN2_OK; then
  for kind in cjs esm; do
    for setup in "${SETUPS[@]}"; do
      dir="$CN2/quickstart-$kind-$setup"
      if "$NODE22" "$COMPAT/consumerProject.js" "$README_SHIPPED" "$dir" "$kind" "$setup" 2>"$WORK/layout.log"; then
        echo "   $kind/$setup: $(tr -d '\n' <"$dir/tsconfig.json" | sed -E 's/ +/ /g; s/"(target|lib|types|strict|outDir|noEmit)"[^,}]*,? ?//g')"
        typecheck "quickstart, $kind, $setup: type-checks" "$dir" tsconfig.json
        QUICKSTARTS+=("$kind|$setup|$dir")
      else
        indent <"$WORK/layout.log"
        fail "quickstart, $kind, $setup: the README's tsconfig or quickstart block (output above)"
      fi
    done
  done
fi
collect_typechecks
ROLLDOWN=("$NODE22" "$REPO/node_modules/rolldown/bin/cli.mjs")
for entry in "${QUICKSTARTS[@]+"${QUICKSTARTS[@]}"}"; do
  IFS='|' read -r kind setup dir <<<"$entry"
  program="$dir/out/quickstart.js"
  if [ "$setup" = bundler ]; then
    # A bundler follows the exports map's import condition and bundles rx-informer in; the peers stay external.
    program="$dir/out/quickstart.$([ "$kind" = esm ] && echo mjs || echo cjs)"
    if ! "${ROLLDOWN[@]}" "$dir/quickstart.ts" --format "$kind" --platform node --external '@kubernetes/client-node,rxjs' --file "$program" >"$dir/bundle.log" 2>&1; then
      indent <"$dir/bundle.log"
      fail "quickstart, $kind, $setup: bundling with rolldown (output above)"
      continue
    fi
  fi
  if [ ! -f "$program" ]; then
    fail "quickstart, $kind, $setup: no compiled program at $program"
  elif (cd "$CN2" && PATH="$NODE22_PATH" "${CONSUMER_ENV[@]}" node runQuickstart.js "$program") >"$dir/run.log" 2>&1; then
    indent <"$dir/run.log"
    pass "quickstart, $kind, $setup: runs against a loopback server from rx-informer-apiserver and exits by itself"
  else
    indent <"$dir/run.log"
    fail "quickstart, $kind, $setup: run (output above)"
  fi
done

section "the testing guide's first example, verbatim from the shipped guide: Jest (CommonJS) and Vitest (ES module), from the packed tarballs"
wait "$INSTALLG" || CG_OK=false
JOBS=()
GUIDE_SHIPPED="$CG/node_modules/rx-informer/docs/guides/testing.md"
if ! $CG_OK; then
  tail -30 "$WORK/install-guide.log" | indent
  fail "testing guide: npm install of Jest and Vitest with both tarballs failed (output above)"
elif ! "$NODE22" "$COMPAT/guideProjects.js" "$GUIDE_SHIPPED" "$CG" "$REPO/tutorial/first-controller" 2>"$WORK/guide-layout.log"; then
  indent <"$WORK/guide-layout.log"
  fail "testing guide: its first example (output above)"
else
  # guide_run NAME DIR COMMAND...: runs a test runner with --trace-warnings in every Node process it starts.
  guide_run() {
    local name="$1" dir="$2" limit=()
    shift 2
    command -v timeout >/dev/null && limit=(timeout 300)
    # NO_COLOR: plain text to read the counts from (Vitest colours its summary otherwise).
    if (cd "$dir" && PATH="$NODE22_PATH" "${CONSUMER_ENV[@]}" NODE_OPTIONS=--trace-warnings CI=true NO_COLOR=1 "${limit[@]+"${limit[@]}"}" node "$@") >"$dir/run.log" 2>&1 &&
      grep -qE 'Tests:? +1 passed' "$dir/run.log" && ! grep -qE '^\(node:[0-9]+\)' "$dir/run.log"; then
      grep -E 'Tests' "$dir/run.log" | indent
      pass "testing guide, first example: passes under $name with no warning"
    else
      indent <"$dir/run.log"
      fail "testing guide, first example under $name (output above)"
    fi
  }
  guide_run "Jest $(installed_version "$CG" jest), CommonJS, ts-jest" "$CG/jest-cjs" ../node_modules/jest/bin/jest.js
  guide_run "Vitest $(installed_version "$CG" vitest), ES module project" "$CG/vitest-esm" ../node_modules/vitest/vitest.mjs run

  # The tutorial (docs/guides/first-controller.md) is tutorial/first-controller: an ES module
  # project, type-checked with its own tsconfig (nodenext) and tested under Vitest and Jest.
  TUTORIAL="$CG/first-controller"
  if (cd "$TUTORIAL" && PATH="$NODE22_PATH" "${CONSUMER_ENV[@]}" node ../node_modules/typescript/bin/tsc -p tsconfig.json) >"$TUTORIAL/tsc.log" 2>&1; then
    pass "tutorial project: type-checks under its own tsconfig (module nodenext, strict; tsc $(installed_version "$CG" typescript))"
  else
    indent <"$TUTORIAL/tsc.log"
    fail "tutorial project: tsc (output above)"
  fi
  limit=()
  command -v timeout >/dev/null && limit=(timeout 300)
  if (cd "$TUTORIAL" && PATH="$NODE22_PATH" "${CONSUMER_ENV[@]}" NODE_OPTIONS=--trace-warnings CI=true NO_COLOR=1 "${limit[@]+"${limit[@]}"}" node ../node_modules/vitest/vitest.mjs run) >"$TUTORIAL/run.log" 2>&1 &&
    grep -qE 'Tests +1 passed' "$TUTORIAL/run.log" && ! grep -qE '^\(node:[0-9]+\)' "$TUTORIAL/run.log"; then
    grep -E 'Tests' "$TUTORIAL/run.log" | indent
    pass "tutorial project: its test passes under Vitest $(installed_version "$CG" vitest) (ES module project) with no warning"
  else
    indent <"$TUTORIAL/run.log"
    fail "tutorial project under Vitest (output above)"
  fi
  # Jest in its ES module mode, as the project's test:jest script runs it: Node's one warning that
  # the mode is experimental is expected, any other warning fails.
  if (cd "$TUTORIAL" && PATH="$NODE22_PATH" "${CONSUMER_ENV[@]}" NODE_OPTIONS=--trace-warnings CI=true NO_COLOR=1 "${limit[@]+"${limit[@]}"}" node --experimental-vm-modules ../node_modules/jest/bin/jest.js) >"$TUTORIAL/jest.log" 2>&1 &&
    grep -qE 'Tests: +1 passed' "$TUTORIAL/jest.log" && ! grep -E '^\(node:[0-9]+\)' "$TUTORIAL/jest.log" | grep -qv 'ExperimentalWarning: VM Modules'; then
    grep -E 'Tests' "$TUTORIAL/jest.log" | indent
    pass "tutorial project: its test passes under Jest $(installed_version "$CG" jest) in its ES module mode (ts-jest, useESM) with no warning but the mode's own"
  else
    indent <"$TUTORIAL/jest.log"
    fail "tutorial project under Jest, ES module mode (output above)"
  fi
fi

section "the rx-informer-apiserver bin on the system Node with client-node 2.x (which needs Node >= 22.19)"
if [ -n "$SYSTEM_NODE" ] && $CN2_OK && [ "$(major_of "$(version_of "$SYSTEM_NODE")")" -lt 22 ]; then
  # --kubeconfig-out is what makes the server load client-node (to build the kubeconfig).
  if (cd "$CN2" && PATH="$SYSTEM_PATH" "${CONSUMER_ENV[@]}" node_modules/.bin/rx-informer-apiserver --pods 1 --duration 1 --kubeconfig-out "$WORK/bin20.kubeconfig") >"$WORK/bin20.log" 2>&1; then
    indent <"$WORK/bin20.log"
    fail "the bin ran on Node $(version_of "$SYSTEM_NODE") with client-node $CN2_VERSION: expected it to refuse"
  elif grep -q 'needs Node >= 22.19' "$WORK/bin20.log"; then
    indent <"$WORK/bin20.log"
    pass "the bin on Node $(version_of "$SYSTEM_NODE") with client-node $CN2_VERSION names the Node it needs and why"
  else
    indent <"$WORK/bin20.log"
    fail "the bin on Node $(version_of "$SYSTEM_NODE") with client-node $CN2_VERSION failed without naming the Node it needs"
  fi
else
  echo "   skipped: the system node is not older than 22 (or a consumer failed to install)"
fi

# --- 4. a fresh clone: the README's two commands are all the set-up -------------------------------------
section "fresh clone without node_modules: npm test -- <one spec>, then npm start (the pre scripts install)"
if [ "${COMPAT_FRESH_CLONE:-1}" = 0 ]; then
  echo "   skipped: COMPAT_FRESH_CLONE=0 (.ci/run sets it: CI is itself a fresh clone that starts with npm test)"
elif ! git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
  fail "fresh clone: $REPO is not a git repository"
else
  CLONE="$WORK/clone"
  git clone --quiet --no-hardlinks "$REPO" "$CLONE"
  # Every Node process records its version and script, so the log tells which Node ran jest and ts-node.
  printf '%s\n' "require('node:fs').appendFileSync(process.env.RX_INFORMER_NODE_LOG, process.version + ' ' + (process.argv[1] || '-') + '\\n');" >"$WORK/recordNode.js"
  FRESH_ENV=("${CONSUMER_ENV[@]}" "RX_INFORMER_NODE_LOG=$WORK/nodes.log" "NODE_OPTIONS=--require $WORK/recordNode.js")
  limit=()
  command -v timeout >/dev/null && limit=(timeout 900)
  if (cd "$CLONE" && PATH="$SYSTEM_PATH" "${FRESH_ENV[@]}" "${limit[@]+"${limit[@]}"}" npm test -- spec/store/keys.spec.ts) >"$WORK/fresh-test.log" 2>&1 &&
    grep -q 'installing the locked dependencies first' "$WORK/fresh-test.log" && grep -qE '^v22\.[0-9.]+ .*jest' "$WORK/nodes.log"; then
    grep -E 'rx-informer:|Tests:' "$WORK/fresh-test.log" | indent
    pass "fresh clone: npm test -- spec/store/keys.spec.ts installed the locked dependencies, then ran jest on $(grep -m1 -oE '^v22\.[0-9.]+ .*jest' "$WORK/nodes.log" | cut -d' ' -f1)"
  else
    tail -40 "$WORK/fresh-test.log" | indent
    fail "fresh clone: npm test (output above)"
  fi
  : >"$WORK/nodes.log"
  if (cd "$CLONE" && PATH="$SYSTEM_PATH" "${FRESH_ENV[@]}" "${limit[@]+"${limit[@]}"}" npm start -- --duration 3 --no-tty) >"$WORK/fresh-start.log" 2>&1 &&
    ! grep -q 'installing the locked dependencies first' "$WORK/fresh-start.log" && grep -qE '^v22\.[0-9.]+ .*ts-node' "$WORK/nodes.log"; then
    tail -3 "$WORK/fresh-start.log" | indent
    pass "fresh clone: npm start -- --duration 3 --no-tty ran the demo on $(grep -m1 -oE '^v22\.[0-9.]+ .*ts-node' "$WORK/nodes.log" | cut -d' ' -f1), installing nothing more"
  else
    tail -40 "$WORK/fresh-start.log" | indent
    echo "   node processes:" && indent <"$WORK/nodes.log"
    fail "fresh clone: npm start (output above)"
  fi
fi

finish
