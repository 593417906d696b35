import { leases, pods, type Pod } from '../../lib/resources/builtins';
import { bucketOf } from '../../lib/sharding/buckets';
import { fnv1a64 } from '../../lib/sharding/fnv1a64';
import { drainLabelOf, shardLabelOf } from '../../lib/sharding/labelShard';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { eventually } from '../support/eventually';
import { differs, met, overlapOf, startReplica, type ReplicaProcess } from './replicaProcesses';

/**
 * `label` mode across processes: three shards of a sharder's ring (`shardedInformer` with
 * `mode: 'label'`, each in its own process) against one loopback server over HTTP, and this test
 * as timebertt's sharder: it labels each pod with a live shard, moves pods off a live shard
 * through the drain label (the shard acknowledges by removing both labels), and when a shard's
 * Lease has not been renewed for a lease duration, takes the Lease over and reassigns the dead
 * shard's pods. One shard is killed (SIGKILL: no release) during churn; within the bound (a lease
 * duration, the sharder's poll and a watch event) every pod is again in exactly one cache, each
 * cache holds exactly the pods labelled for it, and the caches' union is the server's.
 */

const RING = 'e2e-label';
const SHARD = shardLabelOf(RING);
const DRAIN = drainLabelOf(RING);
const TIMINGS = { leaseDuration: 2_000, renewDeadline: 1_500, retryPeriod: 400 };
const SHARDS = ['shard-a', 'shard-b', 'shard-c'];
const SHARDER_POLL_MS = 100;
/** A lease duration until the sharder sees the death, its poll, the relabelling's watch events, and room for a loaded machine. */
const BOUND_MS = TIMINGS.leaseDuration + SHARDER_POLL_MS + 6_000;

let server: ApiServer;
const replicas: ReplicaProcess[] = [];
let sharder: ReturnType<typeof setInterval> | undefined;

const nameOf = (pod: Pod): string => `${pod.metadata.namespace}/${pod.metadata.name}`;
const serverNames = (): string[] => server.store.list(pods).map(nameOf).sort();
/** The sharder's placement: a hash of the pod's name over the shards it thinks live. */
const placeOn = (name: string, live: readonly string[]): string => live[bucketOf(fnv1a64(name), live.length)]!;

function label(pod: Pod, labels: Record<string, string | undefined>): void {
  const current = server.store.get(pods, pod.metadata.namespace, pod.metadata.name)!;
  const next: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...current.metadata.labels, ...labels })) if (value !== undefined) next[key] = value;
  server.store.update(pods, { ...current, metadata: { ...current.metadata, resourceVersion: undefined, labels: next } });
}

/** The pods labelled for `shard` and not being drained. */
const assignedTo = (shard: string): string[] =>
  server.store
    .list(pods)
    .filter((pod) => pod.metadata.labels?.[SHARD] === shard && pod.metadata.labels[DRAIN] === undefined)
    .map(nameOf)
    .sort();

/** Why the caches of `live` do not yet hold exactly what the sharder assigned them, together the server's pods. */
function notPartitioned(live: readonly ReplicaProcess[]): string | undefined {
  const seen = new Map<string, string>();
  const overlap = overlapOf(live, seen);
  if (overlap !== undefined) return overlap;
  for (const replica of live) {
    const wrong = differs(`${replica.id}'s cache`, replica.latest!.names, assignedTo(replica.id));
    if (wrong !== undefined) return wrong;
  }
  return differs('union', seen.keys(), serverNames());
}

beforeAll(async () => {
  server = await startApiServer({ bookmarkIntervalMs: 1_000 });
  for (let i = 0; i < 300; i++) {
    const name = `pod-${i}`;
    server.store.create(pods, { metadata: { name, namespace: `ns-${i % 5}`, labels: { [SHARD]: placeOn(`ns-${i % 5}/${name}`, SHARDS) } } });
  }
});

afterAll(async () => {
  if (sharder !== undefined) clearInterval(sharder);
  for (const replica of replicas) if (replica.child.exitCode === null) replica.child.kill('SIGKILL');
  await server.close();
});

it('three label-mode shard processes hold what the sharder assigned; a drain is acknowledged; after one is killed, its pods reach the others within the bound', async () => {
  for (const id of SHARDS) replicas.push(startReplica(server.url, id, { SHARD_MODE: 'label', SHARD_TIMINGS: JSON.stringify(TIMINGS) }));
  const settled = await met(() => notPartitioned(replicas), 180_000);
  for (const replica of replicas) expect(replica.latest!.names.length).toBeGreaterThan(0);
  process.stderr.write(`label shards settled after ${settled} ms\n`);

  // The sharder moves ten pods off the live shard-a: drain first; shard-a acknowledges (both labels
  // gone) and drops them; only then does the sharder assign shard-c.
  const [a, b] = replicas as [ReplicaProcess, ReplicaProcess, ReplicaProcess];
  const moving = server.store.list(pods).filter((pod) => pod.metadata.labels?.[SHARD] === 'shard-a').slice(0, 10);
  for (const pod of moving) label(pod, { [DRAIN]: 'true' });
  const notAcknowledged = (): string[] => moving.filter((pod) => server.store.get(pods, pod.metadata.namespace, pod.metadata.name)!.metadata.labels?.[SHARD] !== undefined).map(nameOf);
  await eventually(() => expect(notAcknowledged()).toEqual([]), { timeoutMs: 10_000, intervalMs: 50 });
  for (const pod of moving) expect(server.store.get(pods, pod.metadata.namespace, pod.metadata.name)!.metadata.labels?.[DRAIN]).toBeUndefined();
  for (const pod of moving) label(pod, { [SHARD]: 'shard-c' });
  await met(() => notPartitioned(replicas), 10_000);
  expect(a.latest!.names).toEqual(expect.not.arrayContaining(moving.map(nameOf)));

  // The sharder: a shard whose Lease went unrenewed for a lease duration is dead; take its Lease
  // over (so it cannot resume unnoticed) and give its pods to the live shards.
  const live = new Set(SHARDS);
  sharder = setInterval(() => {
    for (const id of [...live]) {
      const lease = server.store.get(leases, 'default', id);
      const renewed = Date.parse(lease?.spec?.renewTime ?? '');
      if (lease === undefined || Date.now() - renewed <= TIMINGS.leaseDuration) continue;
      live.delete(id);
      server.store.update(leases, { ...lease, metadata: { ...lease.metadata, resourceVersion: undefined }, spec: { ...lease.spec, holderIdentity: 'shardlease-controller', leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + 1 } });
      for (const pod of server.store.list(pods)) if (pod.metadata.labels?.[SHARD] === id) label(pod, { [SHARD]: placeOn(nameOf(pod), [...live]) });
    }
  }, SHARDER_POLL_MS);

  // Churn, assigned to the shards the sharder thinks live, while shard-b dies without releasing its Lease.
  let n = 0;
  const churn = setInterval(() => {
    const name = `churn-${n}`;
    const namespace = `ns-${n % 5}`;
    server.store.create(pods, { metadata: { name, namespace, labels: { [SHARD]: placeOn(`${namespace}/${name}`, [...live]) } } });
    if (n >= 10) server.store.delete(pods, `ns-${(n - 10) % 5}`, `churn-${n - 10}`);
    n++;
  }, 20);
  const killedAt = Date.now();
  b.child.kill('SIGKILL');
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  clearInterval(churn);

  const survivors = replicas.filter((replica) => replica !== b);
  const recovered = await met(() => (live.has('shard-b') ? 'shard-b not yet judged dead' : notPartitioned(survivors)), BOUND_MS);
  expect(Date.now() - killedAt).toBeLessThanOrEqual(BOUND_MS + 1_000);
  expect(server.store.get(leases, 'default', 'shard-b')?.spec?.holderIdentity).toBe('shardlease-controller');
  process.stderr.write(`label shards recovered after ${recovered} ms\n`);
  for (const replica of survivors) expect(replica.stderr).toBe('');
}, 300_000);
