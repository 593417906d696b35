'use strict';
/*
 * A consumer's smoke test of the packed rx-informer, written as a user writes it: plain CommonJS,
 * the package installed from its tarball beside rxjs and @kubernetes/client-node, with the loopback
 * server from the packed rx-informer-apiserver.
 * compat/run.sh copies it into a temporary consumer project and runs it under each supported
 * Node / client-node pair. Exits 0 when every check passed; otherwise non-zero, naming the check.
 */
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const { firstValueFrom } = require('rxjs');

const CLIENT_NODE = /[\\/]node_modules[\\/]@kubernetes[\\/]client-node[\\/]/;
const STEP_TIMEOUT_MS = 10_000;
const WHOLE_RUN_TIMEOUT_MS = 45_000;

// An async main that stalls with nothing left on the event loop would end the process with
// status 0; so the run counts as failed until the last check sets it back.
process.exitCode = 1;
let currentStep = 'start';
const watchdog = setTimeout(() => fail(new Error(`still running after ${WHOLE_RUN_TIMEOUT_MS} ms`)), WHOLE_RUN_TIMEOUT_MS);

function fail(error) {
  console.error(`smoke: FAILED at "${currentStep}": ${error && error.stack ? error.stack : error}`);
  process.exit(1);
}

function step(name) {
  currentStep = name;
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

function sameList(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  check(a === e, `${what}: expected ${e}, got ${a}`);
}

/** Resolves with `probe()`'s first truthy value, polling every 20 ms; rejects after `ms`. */
function eventually(probe, what, ms = STEP_TIMEOUT_MS) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const tick = () => {
      let value;
      try {
        value = probe();
      } catch (error) {
        return reject(error);
      }
      if (value) return resolve(value);
      if (Date.now() - started > ms) return reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
      setTimeout(tick, 20);
    };
    tick();
  });
}

function installedVersion(name) {
  const file = path.join(process.cwd(), 'node_modules', ...name.split('/'), 'package.json');
  return JSON.parse(fs.readFileSync(file, 'utf8')).version;
}

function loadedClientNodeFiles() {
  return Object.keys(require.cache).filter((file) => CLIENT_NODE.test(file));
}

function pod(namespace, name, labels = {}) {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { namespace, name, labels }, spec: { containers: [{ name: 'main', image: 'busybox' }] } };
}

const names = (objects) => objects.map((object) => object.metadata.name).sort();

async function main() {
  console.log(
    `smoke: node ${process.version}, @kubernetes/client-node ${installedVersion('@kubernetes/client-node')}, ` +
      `rxjs ${installedVersion('rxjs')}, rx-informer ${installedVersion('rx-informer')}, rx-informer-apiserver ${installedVersion('rx-informer-apiserver')}`,
  );

  step("require('rx-informer') does not load @kubernetes/client-node");
  // Every require from any module goes through Module._load: record requests for client-node,
  // whatever the loader later does with them (client-node 2.x is an ES module).
  const requested = [];
  const promClientRequested = [];
  const originalLoad = Module._load;
  Module._load = function load(request, ...rest) {
    if (/^@kubernetes\/client-node(\/|$)/.test(request)) requested.push(request);
    if (/^prom-client(\/|$)/.test(request)) promClientRequested.push(request);
    return originalLoad.call(this, request, ...rest);
  };
  let rx;
  try {
    rx = require('rx-informer');
  } finally {
    Module._load = originalLoad;
  }
  sameList(requested, [], "modules requested while loading 'rx-informer'");
  sameList(loadedClientNodeFiles(), [], "client-node files in require.cache after require('rx-informer')");
  // prom-client is an optional peer for rx-informer/prometheus only.
  sameList(promClientRequested, [], "prom-client requested while loading 'rx-informer'");
  for (const name of ['informer', 'informerFactory', 'waitForSync', 'pods', 'handle', 'NAMESPACE_INDEX', 'StatusError', 'defineResource']) {
    check(rx[name] !== undefined, `'rx-informer' exports no ${name}`);
  }

  step('the exports map: ESM import, package.json, private paths');
  const esm = await import('rx-informer');
  const missingInEsm = Object.keys(rx).filter((name) => !(name in esm));
  sameList(missingInEsm, [], "named exports of 'rx-informer' missing under ESM import");
  check(require('rx-informer/package.json').name === 'rx-informer', "require('rx-informer/package.json') does not give the package's manifest");
  let privateError;
  try {
    require('rx-informer/dist/informer');
  } catch (error) {
    privateError = error;
  }
  check(privateError && privateError.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED', `a path outside the exports map loaded (or failed oddly: ${privateError && privateError.code})`);

  step('every entry point of the exports map, with require and with import: the same names, none empty');
  const manifest = require('rx-informer/package.json');
  for (const subpath of Object.keys(manifest.exports).filter((key) => key !== './package.json')) {
    const specifier = subpath === '.' ? 'rx-informer' : `rx-informer/${subpath.slice(2)}`;
    // prom-client is the consumer's: present in this consumer project, so the prometheus entry loads.
    const required = require(specifier);
    const imported = await import(specifier);
    check(Object.keys(required).length > 0, `'${specifier}' exports nothing under require`);
    sameList(Object.keys(required).filter((name) => !(name in imported)), [], `named exports of '${specifier}' missing under ESM import`);
  }

  step("require('rx-informer-apiserver') and its ESM import: the same names");
  const testing = require('rx-informer-apiserver');
  check(typeof testing.startApiServer === 'function', "'rx-informer-apiserver' exports no startApiServer");
  const testingEsm = await import('rx-informer-apiserver');
  sameList(Object.keys(testing).filter((name) => !(name in testingEsm)), [], "named exports of 'rx-informer-apiserver' missing under ESM import");
  check(typeof require('rx-informer/testing').skewedScheduler === 'function', "'rx-informer/testing' exports no skewedScheduler");
  check(rx.NAMESPACE_INDEX === 'namespace', `NAMESPACE_INDEX is ${rx.NAMESPACE_INDEX}`);

  step("require('rx-informer/prometheus') and its ESM import, with the consumer's prom-client");
  const prometheus = require('rx-informer/prometheus');
  check(typeof prometheus.registerInformerMetrics === 'function', "'rx-informer/prometheus' exports no registerInformerMetrics");
  check(typeof prometheus.registerWorkqueueMetrics === 'function', "'rx-informer/prometheus' exports no registerWorkqueueMetrics");
  const prometheusEsm = await import('rx-informer/prometheus');
  sameList(Object.keys(prometheus).filter((name) => !(name in prometheusEsm)), [], "named exports of 'rx-informer/prometheus' missing under ESM import");

  await overTlsWithToken(rx, testing);
  await overPlainHttp(rx, testing, prometheus);
  step('every socket and timer released');

  clearTimeout(watchdog);
  // Nothing may be left running: if a socket or timer outlives its unsubscribe, this unref'd timer
  // is what still fires (it alone does not keep the process alive) and names the leftovers.
  setTimeout(() => {
    const left = process.getActiveResourcesInfo().filter((kind) => kind !== 'TTYWrap');
    console.error(`smoke: FAILED: the process did not exit after closing everything; still active: ${left.join(', ')}`);
    process.exit(1);
  }, 3_000).unref();
  process.exitCode = 0;
  process.on('exit', (code) => {
    if (code === 0) console.log('smoke: ok');
  });
}

/** The full flow over HTTPS with a bearer token: the user's client-node applies CA and credentials. */
async function overTlsWithToken(rx, testing) {
  step('startApiServer({ tls, token })');
  const server = await testing.startApiServer({ tls: true, token: 'compat-token' });
  const running = [];
  try {
    server.store.create(rx.pods, pod('team-a', 'a-1', { app: 'web' }));
    server.store.create(rx.pods, pod('team-a', 'a-2', { app: 'web' }));
    server.store.create(rx.pods, pod('team-b', 'b-1', { app: 'db' }));

    step("server.kubeConfig (built with the consumer's client-node)");
    const kubeConfig = server.kubeConfig;
    check(kubeConfig.getCurrentContext() === 'loopback', `the loopback kubeconfig's context is ${kubeConfig.getCurrentContext()}`);

    step("the consumer's own client-node talks to the loopback server (CoreV1Api.createNamespacedPod)");
    const clientNode = require('@kubernetes/client-node');
    const core = kubeConfig.makeApiClient(clientNode.CoreV1Api);
    await core.createNamespacedPod({ namespace: 'team-b', body: pod('team-b', 'b-2', { app: 'db' }) });
    check(server.store.get(rx.pods, 'team-b', 'b-2') !== undefined, 'the pod created through CoreV1Api is not in the server store');

    step('informer + waitForSync');
    const podInformer = rx.informer(kubeConfig, rx.pods);
    running.push(podInformer.informer$.subscribe({ error: (error) => fail(error) }));
    const [synced] = await rx.waitForSync([podInformer], { timeout: STEP_TIMEOUT_MS });
    check(synced.synced === true, 'the snapshot waitForSync gave is not synced');
    check(synced.size === 4, `the synced snapshot holds ${synced.size} pods, expected 4`);
    sameList(names(synced.byIndex(rx.NAMESPACE_INDEX, 'team-a')), ['a-1', 'a-2'], 'byIndex(namespace, team-a)');
    sameList(names(synced.byIndex(rx.NAMESPACE_INDEX, 'team-b')), ['b-1', 'b-2'], 'byIndex(namespace, team-b)');
    sameList(names(synced.list({ labelSelector: 'app=web' })), ['a-1', 'a-2'], "list({ labelSelector: 'app=web' })");

    step('handle(): initial adds, then an update, a delete and an add from the watch');
    const seen = [];
    let handlerSynced = false;
    running.push(
      podInformer
        .handle({
          onAdd: (object, info) => seen.push(`add ${info.key}${info.isInInitialList ? ' (initial)' : ''}`),
          onUpdate: (oldObject, object, info) => seen.push(`update ${info.key} ${oldObject.metadata.labels.app}->${object.metadata.labels.app}`),
          onDelete: (object, info) => seen.push(`delete ${info.key}`),
          onError: (error) => fail(error),
        })
        .subscribe({ next: (event) => (handlerSynced ||= event.type === 'synced'), error: (error) => fail(error) }),
    );
    await eventually(() => handlerSynced, "the handler's synced event");
    sameList(
      [...seen].sort(),
      ['add team-a/a-1 (initial)', 'add team-a/a-2 (initial)', 'add team-b/b-1 (initial)', 'add team-b/b-2 (initial)'],
      'initial handler calls',
    );

    seen.length = 0;
    const a1 = server.store.get(rx.pods, 'team-a', 'a-1');
    server.store.update(rx.pods, { ...a1, metadata: { ...a1.metadata, labels: { app: 'api' } } });
    server.store.delete(rx.pods, 'team-b', 'b-1');
    server.store.create(rx.pods, pod('team-c', 'c-1', { app: 'web' }));
    await eventually(() => seen.length >= 3, `three handler calls after the changes (have: ${JSON.stringify(seen)})`);
    sameList(seen, ['update team-a/a-1 web->api', 'delete team-b/b-1', 'add team-c/c-1'], 'handler calls for the watched changes');

    // informer$ replays the latest snapshot to a late subscriber while the informer runs.
    const latest = await firstValueFrom(podInformer.informer$);
    sameList(names(latest.byIndex(rx.NAMESPACE_INDEX, 'team-b')), ['b-2'], 'byIndex(namespace, team-b) after the delete');
    sameList(names(latest.list({ labelSelector: 'app=web' })), ['a-2', 'c-1'], "list({ labelSelector: 'app=web' }) after the changes");
  } finally {
    // No step() here: a failure above must stay named after the step that failed.
    for (const subscription of running) subscription.unsubscribe();
    await server.close();
  }
}

/** Plain HTTP, as kubectl proxy serves it: client-node refuses http without skipTLSVerify, the library honours it. */
async function overPlainHttp(rx, testing, prometheus) {
  step('startApiServer() over plain http');
  const server = await testing.startApiServer();
  let running;
  try {
    server.store.create(rx.configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default', name: 'settings' }, data: { mode: 'fast' } });
    step('a namespaced configmap informer over http');
    const configMapInformer = rx.informer(server.kubeConfig, rx.configMaps, { namespace: 'default' });
    // The informer's metrics in the consumer's own prom-client registry.
    const { Registry } = require('prom-client');
    const registry = new Registry();
    const recording = prometheus.registerInformerMetrics(registry, configMapInformer);
    running = configMapInformer.informer$.subscribe({ error: (error) => fail(error) });
    running.add(recording);
    const [synced] = await rx.waitForSync([configMapInformer], { timeout: STEP_TIMEOUT_MS });
    check(synced.get('default/settings')?.data?.mode === 'fast', 'the configmap is not in the synced snapshot');
    step('the informer metrics, scraped from a prom-client registry');
    const scraped = await registry.metrics();
    check(/^reflector_lists_total\{name="configmaps@default"\} 1$/m.test(scraped), `reflector_lists_total is not 1 after the sync:\n${scraped}`);
    check(/^reflector_items_per_list_sum\{name="configmaps@default"\} 1$/m.test(scraped), `reflector_items_per_list does not show the one configmap:\n${scraped}`);
  } finally {
    if (running) running.unsubscribe();
    await server.close();
  }
}

main().catch(fail);
