/**
 * Peer d: kubernetes-fluent-client's `Watch` (the watcher Pepr controllers run), feeding an
 * in-memory Map keyed by namespace/name, as a controller built on it keeps one. Version 3.11.11,
 * pinned (it needs Node ≥ 22.19; on older Node npm would pick 3.11.6, whose `Watch` differs).
 * The package is an ES module only; the bench's CommonJS build loads it with `require()`, which
 * Node 22 supports for ES modules without top-level await.
 *
 * What its sources (dist/fluent/watch.js, dist/fluent/utils.js) do, and what that means here:
 * - it reads the kubeconfig itself (`KubeConfig.loadFromDefault()` on every list page and every
 *   watch), so this client writes one for the loopback server (plain HTTP, a bearer token the
 *   server does not require) and points KUBECONFIG at it;
 * - it lists without `limit` (the whole collection in one response, read with undici's
 *   `response.json()`, so one string: a list past V8's longest string fails), then watches from
 *   the list's resourceVersion, calling the callback once per event line (awaited);
 * - it keeps its own Map by uid beside ours (so d holds two maps of the same objects, as a Pepr
 *   controller does);
 * - a list error is only an event (`list_error`): `start()` resolves anyway, with whatever was
 *   listed, so this client checks the count and fails the sync when the list did not arrive;
 * - when the watch ends cleanly it lists again at once (all items; new or newer ones reach the
 *   callback) and re-watches: the benchmark's relist. A 410 in the watch stream instead waits for
 *   its resync timer (`resyncDelaySec`, default 5 s).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GenericKind, K8s, WatchEvent } from 'kubernetes-fluent-client';
import type { KubeObject } from '../../lib/base/object';
import { benchResourceOf, type ClientConfig } from '../protocol';
import { runClient, type ClientUnderTest, type UpdateHandler } from './harness';

/** Writes a kubeconfig for the loopback server and points KUBECONFIG at it (the watcher reads it itself). */
function useLoopbackKubeConfig(serverUrl: string): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-fluent-'));
  const file = path.join(dir, 'kubeconfig.json');
  const kubeConfig = {
    apiVersion: 'v1',
    kind: 'Config',
    // client-node 1.x (the one fluent-client bundles) refuses plain HTTP unless TLS verification is off.
    clusters: [{ name: 'bench', cluster: { server: serverUrl, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'bench', user: { token: 'bench' } }],
    contexts: [{ name: 'bench', context: { cluster: 'bench', user: 'bench' } }],
    'current-context': 'bench',
  };
  fs.writeFileSync(file, JSON.stringify(kubeConfig));
  process.env['KUBECONFIG'] = file;
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
}

function keyOf(object: KubeObject): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}

function fluentWatch(config: ClientConfig, handlers: readonly UpdateHandler[]): ClientUnderTest {
  useLoopbackKubeConfig(config.serverUrl);
  const resource = benchResourceOf(config.objects);
  const cache = new Map<string, KubeObject>();
  const kindOverride = { group: resource.group, version: resource.version, kind: resource.kind, plural: resource.plural };
  // The package does not export its WatchPhase enum; its values are the watch event types.
  const watcher = K8s(GenericKind, { kindOverride }).Watch((update, phase) => {
    const object = update as unknown as KubeObject;
    if (String(phase) === 'DELETED') {
      cache.delete(keyOf(object));
      return;
    }
    cache.set(keyOf(object), object);
    for (const handler of handlers) handler(object);
  });
  let listError: unknown;
  watcher.events.on(WatchEvent.LIST_ERROR, (error: unknown) => {
    listError = error;
    process.stderr.write(`fluent-client list error: ${String(error)}\n`);
  });
  return {
    async start() {
      await watcher.start();
      if (cache.size < config.pods) {
        const reason = listError instanceof Error ? listError.message : String(listError ?? 'no error event');
        throw new Error(`kubernetes-fluent-client synced ${cache.size} of ${config.pods} objects: ${reason}`);
      }
    },
    async stop() {
      watcher.close();
      cache.clear();
    },
  };
}

void runClient(fluentWatch);
