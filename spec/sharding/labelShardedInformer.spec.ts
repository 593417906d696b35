import { firstValueFrom } from 'rxjs';
import { silentLogger } from '../../lib/base/logger';
import { configMaps, leases, type ConfigMap } from '../../lib/resources/builtins';
import { CONTROLLER_RING_LABEL, drainLabelOf, shardLabelOf } from '../../lib/sharding/labelShard';
import { labelShardedInformer } from '../../lib/sharding/labelShardedInformer';
import { shardedInformer } from '../../lib/sharding/shardedInformer';
import type { Snapshot } from '../../lib/store/snapshot';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { eventually, firstSatisfying, within } from '../support/eventually';

/** `label` mode against the loopback server over HTTP, with the test as timebertt's sharder. */

const RING = { name: 'example', namespace: 'default' } as const;
const SHARD = shardLabelOf(RING.name);
const DRAIN = drainLabelOf(RING.name);
const TIMINGS = { leaseDuration: 2_000, renewDeadline: 1_500, retryPeriod: 300 };
/** How long a shard may take to acquire its Lease and sync: under these specs' 30 s timeout. */
const SYNC_MS = 20_000;

let server: ApiServer;
beforeEach(async () => {
  server = await startApiServer();
  for (let i = 0; i < 12; i++) {
    const shard = i % 3 === 2 ? undefined : `example-${i % 3}`;
    server.store.create(configMaps, { metadata: { name: `cm-${i}`, namespace: 'default', ...(shard === undefined ? {} : { labels: { [SHARD]: shard } }) } });
  }
});
afterEach(() => server.close());

const names = (snapshot: Snapshot<ConfigMap>): string[] => [...snapshot.values()].map((cm) => cm.metadata.name).sort();
const assignedTo = (shard: string): string[] =>
  server.store
    .list(configMaps)
    .filter((cm) => cm.metadata.labels?.[SHARD] === shard)
    .map((cm) => cm.metadata.name)
    .sort();

it('caches the objects the sharder assigned to it, holds its shard Lease, and acknowledges a drain by removing both labels', async () => {
  const shard = labelShardedInformer(server.kubeConfig, configMaps, { ring: RING, identity: 'example-0', logger: silentLogger, ...TIMINGS });
  let latest: Snapshot<ConfigMap> | undefined;
  const running = shard.informer$.subscribe((snapshot) => (latest = snapshot));
  try {
    const synced = await firstSatisfying(shard.informer$, (snapshot) => expect({ synced: snapshot.synced, empty: snapshot.size === 0 }).toEqual({ synced: true, empty: false }), { timeoutMs: SYNC_MS });
    expect(names(synced)).toEqual(assignedTo('example-0'));
    const lease = server.store.get(leases, RING.namespace, 'example-0');
    expect(lease?.spec?.holderIdentity).toBe('example-0');
    expect(lease?.metadata.labels?.[CONTROLLER_RING_LABEL]).toBe(RING.name);

    // The sharder moves cm-0 off this live shard: drain label first.
    const cm0 = server.store.get(configMaps, 'default', 'cm-0')!;
    expect(shard.owns(cm0)).toBe(true);
    server.store.update(configMaps, { ...cm0, metadata: { ...cm0.metadata, resourceVersion: undefined, labels: { ...cm0.metadata.labels, [DRAIN]: 'true' } } });
    await firstSatisfying(shard.informer$, (snapshot) => expect(names(snapshot)).not.toContain('cm-0'));
    await eventually(() => expect(server.store.get(configMaps, 'default', 'cm-0')!.metadata.labels?.[SHARD]).toBeUndefined(), { timeoutMs: 2_000, intervalMs: 20 });
    const acknowledged = server.store.get(configMaps, 'default', 'cm-0')!;
    expect(acknowledged.metadata.labels?.[SHARD]).toBeUndefined();
    expect(acknowledged.metadata.labels?.[DRAIN]).toBeUndefined();
    expect(shard.owns(acknowledged)).toBe(false);

    // The sharder assigns an unassigned object here: it arrives.
    const cm2 = server.store.get(configMaps, 'default', 'cm-2')!;
    server.store.update(configMaps, { ...cm2, metadata: { ...cm2.metadata, resourceVersion: undefined, labels: { [SHARD]: 'example-0' } } });
    const withNew = await firstSatisfying(shard.informer$, (snapshot) => expect(names(snapshot)).toContain('cm-2'));
    expect(names(withNew)).toEqual(assignedTo('example-0'));
    expect(latest).toBeDefined();
    expect(names(latest!)).toEqual(names(withNew)); // the running subscriber holds the same cache
  } finally {
    running.unsubscribe();
  }
}, 30_000);

it('is not synced before it has listed under its shard Lease: synced$ gives the objects assigned to it, though the Lease was held by another at first', async () => {
  // Someone else holds the shard's Lease until it expires: the shard waits, then takes it.
  server.store.create(leases, {
    metadata: { name: 'example-1', namespace: RING.namespace, labels: { [CONTROLLER_RING_LABEL]: RING.name } },
    spec: { holderIdentity: 'shardlease-controller', leaseDurationSeconds: 2, renewTime: new Date().toISOString(), acquireTime: new Date().toISOString(), leaseTransitions: 0 },
  });
  const shard = labelShardedInformer(server.kubeConfig, configMaps, { ring: RING, identity: 'example-1', logger: silentLogger, ...TIMINGS });
  const synced = await within(firstValueFrom(shard.synced$), SYNC_MS, 'the shard’s first synced snapshot');
  expect(names(synced)).toEqual(assignedTo('example-1'));
  expect(server.store.get(leases, RING.namespace, 'example-1')?.spec?.holderIdentity).toBe('example-1');
}, 30_000);

it('empties its cache when the sharder takes its Lease over (a shard it thought dead)', async () => {
  const shard = labelShardedInformer(server.kubeConfig, configMaps, { ring: RING, identity: 'example-1', logger: silentLogger, ...TIMINGS });
  const states: string[] = [];
  const watching = shard.lease$.subscribe((state) => states.push(state.state));
  const running = shard.informer$.subscribe();
  try {
    const synced = await firstSatisfying(shard.informer$, (snapshot) => expect({ synced: snapshot.synced, empty: snapshot.size === 0 }).toEqual({ synced: true, empty: false }), { timeoutMs: SYNC_MS });
    expect(names(synced)).toEqual(assignedTo('example-1'));
    const lease = server.store.get(leases, RING.namespace, 'example-1')!;
    server.store.update(leases, {
      ...lease,
      metadata: { ...lease.metadata, resourceVersion: undefined },
      spec: { ...lease.spec, holderIdentity: 'shardlease-controller', leaseDurationSeconds: 4, leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + 1 },
    });
    const emptied = await firstSatisfying(shard.informer$, (snapshot) => expect(names(snapshot)).toEqual([]));
    expect(emptied.synced).toBe(true);
    expect(states).toContain('lost');
  } finally {
    running.unsubscribe();
    watching.unsubscribe();
  }
}, 30_000);

it('is what shardedInformer gives with mode label: the objects assigned to the shard, behind its shard Lease', async () => {
  const shard = shardedInformer(server.kubeConfig, configMaps, { mode: 'label', ring: RING, identity: 'example-2', logger: silentLogger, ...TIMINGS });
  const states: string[] = [];
  const watching = shard.lease$.subscribe((state) => states.push(state.state));
  const cm1 = server.store.get(configMaps, 'default', 'cm-1')!;
  server.store.update(configMaps, { ...cm1, metadata: { ...cm1.metadata, resourceVersion: undefined, labels: { [SHARD]: 'example-2' } } });
  try {
    const synced = await firstSatisfying(shard.informer$, (snapshot) => expect({ synced: snapshot.synced, empty: snapshot.size === 0 }).toEqual({ synced: true, empty: false }), { timeoutMs: SYNC_MS });
    expect(names(synced)).toEqual(['cm-1']);
    expect(shard.owns(server.store.get(configMaps, 'default', 'cm-1')!)).toBe(true);
    expect(shard.owns(server.store.get(configMaps, 'default', 'cm-0')!)).toBe(false);
    expect(states).toContain('leading');
    expect(server.store.get(leases, RING.namespace, 'example-2')?.metadata.labels?.[CONTROLLER_RING_LABEL]).toBe(RING.name);
  } finally {
    watching.unsubscribe();
  }
}, 30_000);
