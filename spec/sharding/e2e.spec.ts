import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { pods } from '../../lib/resources/builtins';
import { bucketsOf } from '../../lib/sharding/placement';
import { startApiServer, type ApiServer } from '../../lib/testing/server';

/**
 * Three sharded informers in three processes against one loopback server over HTTP, with churn:
 * one is killed (SIGKILL: no release), and within the bound (two lease durations, a retry period
 * and a relist) every object is again in exactly one cache, and the caches' union is the server's.
 */

const REPO = path.resolve(__dirname, '../..');
const TIMINGS = { leaseDuration: 2_000, renewDeadline: 1_500, retryPeriod: 400 };
/** The bound of the guide (2 × leaseDuration + retryPeriod), plus a relist and room for a loaded machine. */
const BOUND_MS = 2 * TIMINGS.leaseDuration + TIMINGS.retryPeriod + 6_000;

interface Report {
  readonly id: string;
  readonly mode: string;
  readonly owned: number[];
  readonly synced: boolean;
  readonly names: string[];
  readonly handedIn: string[];
}

interface Replica {
  readonly id: string;
  readonly child: ChildProcess;
  latest: Report | undefined;
  stderr: string;
}

let server: ApiServer;
const replicas: Replica[] = [];

function start(id: string): Replica {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', path.join('spec', 'sharding', 'replicaProcess.ts')], {
    cwd: REPO,
    env: { ...process.env, SHARD_URL: server.url, SHARD_ID: id, SHARD_TIMINGS: JSON.stringify(TIMINGS) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const replica: Replica = { id, child, latest: undefined, stderr: '' };
  readline.createInterface({ input: child.stdout! }).on('line', (line) => {
    replica.latest = JSON.parse(line) as Report;
  });
  child.stderr!.on('data', (chunk: Buffer) => (replica.stderr += chunk.toString()));
  replicas.push(replica);
  return replica;
}

function serverNames(): string[] {
  return server.store
    .list(pods)
    .map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`)
    .sort();
}

/** Why the caches of `live` are not yet a partition of the server's objects, or undefined when they are. */
function notPartitioned(live: readonly Replica[]): string | undefined {
  const seen = new Map<string, string>();
  for (const replica of live) {
    if (replica.latest === undefined || !replica.latest.synced) return `${replica.id} not synced`;
    for (const name of replica.latest.names) {
      const other = seen.get(name);
      if (other !== undefined) return `${name} in ${other} and ${replica.id}`;
      seen.set(name, replica.id);
    }
  }
  const members = live.map((replica) => replica.id);
  for (const replica of live) {
    const placed = bucketsOf(replica.id, members, 32);
    if (replica.latest!.owned.join() !== placed.join()) return `${replica.id} owns ${replica.latest!.owned.join()}, placed ${placed.join()}`;
  }
  const union = [...seen.keys()].sort();
  const expected = serverNames();
  if (union.length !== expected.length || union.some((name, i) => name !== expected[i])) return `union ${union.length} != server ${expected.length}`;
  return undefined;
}

async function until(condition: () => string | undefined, timeoutMs: number): Promise<{ readonly elapsed: number; readonly last: string | undefined }> {
  const started = Date.now();
  let last = condition();
  while (last !== undefined && Date.now() - started < timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    last = condition();
  }
  return { elapsed: Date.now() - started, last };
}

beforeAll(async () => {
  server = await startApiServer({ bookmarkIntervalMs: 1_000 });
  for (let i = 0; i < 300; i++) server.store.create(pods, { metadata: { name: `pod-${i}`, namespace: `ns-${i % 5}` } });
});

afterAll(async () => {
  for (const replica of replicas) if (replica.child.exitCode === null) replica.child.kill('SIGKILL');
  await server.close();
});

it('three replica processes partition the pods; after one is killed the other two cover them within the bound', async () => {
  start('replica-a');
  start('replica-b');
  start('replica-c');
  const settled = await until(() => notPartitioned(replicas), 180_000);
  expect(settled.last).toBeUndefined();
  for (const replica of replicas) {
    expect(replica.latest!.mode).toBe('server');
    expect(replica.latest!.owned.length).toBeGreaterThan(0);
  }
  process.stderr.write(`settled after ${settled.elapsed} ms\n`);

  // Churn while a replica dies without releasing its Lease.
  let n = 0;
  const churn = setInterval(() => {
    server.store.create(pods, { metadata: { name: `churn-${n}`, namespace: `ns-${n % 5}` } });
    if (n >= 10) server.store.delete(pods, `ns-${(n - 10) % 5}`, `churn-${n - 10}`);
    n++;
  }, 20);
  const [, victim] = replicas as [Replica, Replica, Replica];
  const victimsObjects = victim.latest!.names;
  victim.child.kill('SIGKILL');
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  clearInterval(churn);

  const survivors = replicas.filter((replica) => replica !== victim);
  const recovered = await until(() => notPartitioned(survivors), BOUND_MS);
  expect(recovered.last).toBeUndefined();
  process.stderr.write(`recovered after ${recovered.elapsed} ms\n`);
  for (const replica of survivors) expect(replica.stderr).toBe('');
  // The survivors' handlers saw the victim's objects arrive marked with their buckets' acquisition.
  const handedIn = new Set(survivors.flatMap((replica) => replica.latest!.handedIn));
  const moved = victimsObjects.filter((name) => serverNames().includes(name));
  expect(moved.length).toBeGreaterThan(0);
  expect(moved.filter((name) => !handedIn.has(name))).toEqual([]);
}, 300_000);
