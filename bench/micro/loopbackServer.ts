/**
 * Micro-benchmark of the loopback API server's own cost, so the full benchmark measures clients,
 * not the server. Runs in one process (the server) and forks a thin HTTP client that does no JSON
 * parsing (it cuts the continue token out of each page's head and counts watch lines), so wall
 * time is the server's:
 *
 *   node -r ts-node/register/transpile-only bench/micro/loopbackServer.ts [pods=100000] [events=100000]
 *
 * Phases: create N realistic pods (managedFields, ~4.4 KB) through the store; list them in
 * 500-item pages twice (cold: first serialization; warm: cached JSON); apply N pod updates with one
 * watcher open and time until the client has read every event; the same updates with no watcher
 * but each serialized once, to split the store's and JSON.stringify's cost from the cost of
 * delivering and writing events.
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as http from 'node:http';
import { pods as podResource, type Pod } from '../../lib/resources/builtins';
import { makePod, seededRandom } from '../../apiserver/src/churn';
import type { ClusterStoreImpl } from '../../apiserver/src/clusterStore';
import { jsonOf, type StoreEvent } from '../../apiserver/src/history';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';

interface ClientReport {
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly bytes: number;
  readonly count: number;
}

type ClientMessage = { readonly kind: 'ready' } | ({ readonly kind: 'done' } & ClientReport);

const PAGE = 500;

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

// ---------------------------------------------------------------- client (forked) side

async function clientList(base: string): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const started = performance.now();
  const cpu = process.cpuUsage();
  let bytes = 0;
  let count = 0;
  let token: string | undefined;
  do {
    const query = `limit=${PAGE}${token === undefined ? '' : `&continue=${encodeURIComponent(token)}`}`;
    const head = await new Promise<string>((resolve, reject) => {
      http
        .get(`${base}/api/v1/pods?${query}`, { agent }, (response) => {
          let first = '';
          response.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            if (first.length < 512) first += chunk.subarray(0, 512).toString('latin1');
          });
          response.on('end', () => (response.statusCode === 200 ? resolve(first) : reject(new Error(`status ${response.statusCode}: ${first}`))));
          response.on('error', reject);
        })
        .on('error', reject);
    });
    count++;
    token = /"continue":"([^"]+)"/.exec(head)?.[1];
  } while (token !== undefined);
  agent.destroy();
  report({ wallMs: performance.now() - started, cpuMs: cpuMsSince(cpu), bytes, count });
}

function clientWatch(base: string, rv: string, events: number): void {
  let bytes = 0;
  let lines = 0;
  let started = 0;
  let cpu: NodeJS.CpuUsage | undefined;
  const request = http.get(`${base}/api/v1/pods?watch=true&resourceVersion=${rv}&allowWatchBookmarks=false`, (response) => {
    process.send!({ kind: 'ready' } satisfies ClientMessage);
    response.on('data', (chunk: Buffer) => {
      if (cpu === undefined) {
        started = performance.now();
        cpu = process.cpuUsage();
      }
      bytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
      if (lines >= events) {
        report({ wallMs: performance.now() - started, cpuMs: cpuMsSince(cpu), bytes, count: lines });
        request.destroy();
      }
    });
  });
  request.on('error', () => undefined);
}

function report(result: ClientReport): void {
  process.send!({ kind: 'done', ...result } satisfies ClientMessage, () => process.exit(0));
}

// ---------------------------------------------------------------- server side

function startClient(args: readonly string[]): { child: ChildProcess; ready: Promise<void>; done: Promise<ClientReport> } {
  const child = fork(__filename, ['--client', ...args], { execArgv: ['-r', 'ts-node/register/transpile-only'] });
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const done = new Promise<ClientReport>((resolve, reject) => {
    child.on('message', (message: ClientMessage) => {
      if (message.kind === 'ready') onReady();
      else resolve(message);
    });
    child.on('exit', (code) => reject(new Error(`client exited with ${code}`)));
  });
  return { child, ready, done };
}

function line(name: string, values: Record<string, string | number>): void {
  const text = Object.entries(values)
    .map(([key, value]) => `${key} ${typeof value === 'number' ? value.toFixed(value < 10 ? 2 : 0) : value}`)
    .join(', ');
  process.stdout.write(`${name.padEnd(24)} ${text}\n`);
}

function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Applies one status-style update per pod, round robin, in batches that let the server write between them. */
async function applyUpdates(server: ApiServer, targets: readonly Pod[], events: number, tag: string): Promise<number> {
  let storeCpu = 0;
  for (let i = 0; i < events; ) {
    const cpu = process.cpuUsage();
    const end = Math.min(events, i + 256);
    for (; i < end; i++) {
      const current = targets[i % targets.length]!;
      const next: Pod = {
        ...current,
        metadata: { ...current.metadata, resourceVersion: undefined, annotations: { ...current.metadata.annotations, 'bench/seq': `${tag}-${i}` } },
      };
      server.store.update(podResource, next);
    }
    storeCpu += cpuMsSince(cpu);
    await yieldToLoop();
  }
  return storeCpu;
}

async function main(): Promise<void> {
  const podCount = Number(process.argv[2] ?? 100_000);
  const events = Number(process.argv[3] ?? 100_000);
  const server = await startApiServer({ historyLimit: 10_000 });
  try {
    const random = seededRandom(1);
    const generated: Pod[] = [];
    let started = performance.now();
    for (let i = 0; i < podCount; i++) generated.push(makePod(random, `ns-${i % 10}`, `pod-${i}`));
    line('makePod (not server)', { ms: performance.now() - started, 'bytes/pod': JSON.stringify(generated[0]).length });

    started = performance.now();
    let cpu = process.cpuUsage();
    for (const pod of generated) server.store.create(podResource, pod);
    const createWall = performance.now() - started;
    line('create', { pods: podCount, 'wall ms': createWall, 'cpu ms': cpuMsSince(cpu), 'µs/pod': (createWall * 1000) / podCount, 'heap MB': process.memoryUsage().heapUsed / 1e6 });
    generated.length = 0;

    for (const label of ['list cold (500/page)', 'list warm (500/page)']) {
      const client = startClient(['list', server.url]);
      cpu = process.cpuUsage();
      const result = await client.done;
      line(label, { pages: result.count, MB: result.bytes / 1e6, 'client wall ms': result.wallMs, 'server cpu ms': cpuMsSince(cpu), 'client cpu ms': result.cpuMs });
    }

    const store = server.store as ClusterStoreImpl;
    const run = async (label: string, watched: boolean, serializer: ((event: StoreEvent) => void) | undefined): Promise<number> => {
      // Registered before the watch, so the JSON is in place when the watch reads it.
      const unsubscribe = serializer === undefined ? undefined : store.subscribe(podResource, serializer);
      const targets = server.store.list(podResource);
      // Every current version serialized, as after a list: each update can reuse its predecessor's text.
      for (const pod of targets) jsonOf(store.entry(podResource, pod.metadata.namespace, pod.metadata.name)!);
      const client = watched ? startClient(['watch', server.url, server.store.resourceVersion, String(events)]) : undefined;
      await client?.ready;
      const started = performance.now();
      const cpu = process.cpuUsage();
      const storeCpu = await applyUpdates(server, targets, events, label);
      const result = await client?.done;
      const wall = performance.now() - started;
      const serverCpu = cpuMsSince(cpu);
      unsubscribe?.();
      line(label, {
        'wall ms': wall,
        ...(result === undefined ? {} : { events: result.count, MB: result.bytes / 1e6, 'events/s': (events * 1000) / wall, 'client cpu ms': result.cpuMs }),
        'server cpu ms': serverCpu,
        'in store.update ms': storeCpu,
      });
      return serverCpu;
    };
    // Each update carries the JSON of the version it replaces (same size, unparsed by the client), as
    // the benchmark server's templates do: what the watch then costs is delivery and writing only.
    const preSerialized = (event: StoreEvent): void => {
      if (event.prev !== undefined) event.object.json = jsonOf(event.prev);
    };
    const storeOnly = await run('updates, no watcher', false, undefined);
    const stringified = await run('updates+stringify', false, (event) => void jsonOf(event.object));
    const watchedReal = await run('watch (stringify)', true, undefined);
    const watchedPre = await run('watch (pre-serialized)', true, preSerialized);
    const writeCpu = watchedPre - storeOnly;
    line('=> write capacity', { 'µs/event': (writeCpu * 1000) / events, 'events/s': writeCpu > 0 ? (events * 1000) / writeCpu : Infinity });
    line('=> stringify', { 'µs/event': ((stringified - storeOnly) * 1000) / events, 'via watch µs/event': ((watchedReal - watchedPre) * 1000) / events });
  } finally {
    await server.close();
  }
}

if (process.argv[2] === '--client') {
  const [mode, base, rv, events] = process.argv.slice(3);
  if (mode === 'list') void clientList(base!);
  else clientWatch(base!, rv!, Number(events));
} else {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
