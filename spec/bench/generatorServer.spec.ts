import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Subscription } from 'rxjs';
import { silentLogger } from '../../lib/base/logger';
import type { KubeObject } from '../../lib/base/object';
import { shardSelectorOf } from '../../lib/sharding/buckets';
import { bucketsOf } from '../../lib/sharding/placement';
import { objectBucket } from '../../lib/sharding/shardListerWatcher';
import type { ShardFilterMode } from '../../lib/sharding/shardedInformer';
import type { Snapshot } from '../../lib/store/snapshot';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { generatedNamespace, generatedUid, podGenerator, type PodGenerator } from '../../bench/million/generatorServer';
import { replicaShard } from '../../bench/shardReplica';
import { eventually } from '../support/eventually';

/**
 * The million-pod generating server answers a sharded informer's `shardSelector` exactly: the
 * shards' lists are disjoint and their union is the whole list, over HTTP and through real
 * replicas (whose Leases live on a loopback API server), at 1,000 pods.
 */

const PODS = 1_000;
const BUCKETS = 64;
const UID = 'object.metadata.uid';

interface PodList {
  readonly metadata: { readonly resourceVersion: string; readonly shardInfo?: { readonly selector: string } };
  readonly items: readonly KubeObject[];
}

describe('the generating server with shard selectors', () => {
  let generator: PodGenerator;
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    generator = podGenerator();
    generator.setup(PODS);
    server = http.createServer(generator.handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    generator.closeWatches();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const get = async (query: string, accept = 'application/json'): Promise<{ status: number; body: unknown }> => {
    const response = await fetch(`${url}/api/v1/pods${query}`, { headers: { accept } });
    return { status: response.status, body: await response.json() };
  };
  const list = async (selector?: string): Promise<PodList> => (await get(selector === undefined ? '' : `?shardSelector=${encodeURIComponent(selector)}`)).body as PodList;
  const names = (items: readonly KubeObject[]): string[] => items.map((item) => item.metadata.name!);

  it('lists every pod without a selector, each with the uid and namespace it is filtered by', async () => {
    const whole = await list();
    expect(whole.items).toHaveLength(PODS);
    expect(whole.metadata.shardInfo).toBeUndefined();
    expect(new Set(names(whole.items)).size).toBe(PODS);
    expect(new Set(whole.items.map((pod) => pod.metadata.uid)).size).toBe(PODS);
    whole.items.forEach((pod, index) => {
      expect(pod.metadata.uid).toBe(generatedUid(index));
      expect(pod.metadata.namespace).toBe(generatedNamespace(index));
    });
  });

  it.each([2, 4])('splits the pods among %i members: disjoint lists whose union is the whole, each pod in a bucket of its member, each selector echoed', async (replicas) => {
    const whole = names((await list()).items).sort();
    const members = Array.from({ length: replicas }, (_, i) => `replica-${i}`);
    const shares = await Promise.all(
      members.map(async (member) => {
        const buckets = bucketsOf(member, members, BUCKETS);
        const selector = shardSelectorOf(buckets, BUCKETS, UID);
        const share = await list(selector);
        expect(share.metadata.shardInfo).toEqual({ selector });
        // The client's own hash (lib/sharding) agrees with the server's matcher on every pod.
        for (const pod of share.items) expect(buckets).toContain(objectBucket(pod, 'uid', BUCKETS));
        return names(share.items);
      }),
    );
    for (const share of shares) expect(share.length).toBeGreaterThan(0);
    const union = shares.flat().sort();
    expect(union).toEqual(whole);
    expect(new Set(union).size).toBe(union.length);
  });

  it('splits by namespace too, and a metadata-only list the same way', async () => {
    const selector = shardSelectorOf([0, 1, 2, 3, 4, 5, 6, 7], 16, 'object.metadata.namespace');
    const { body } = await get(`?shardSelector=${encodeURIComponent(selector)}`, 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json');
    const share = body as PodList;
    expect(share.metadata.shardInfo).toEqual({ selector });
    const expected = (await list()).items.filter((pod) => objectBucket(pod, 'namespace', 16) < 8);
    expect(names(share.items)).toEqual(names(expected));
    expect(share.items.every((item) => item.kind === 'PartialObjectMetadata')).toBe(true);
  });

  it('refuses a selector the API server refuses, with its 500', async () => {
    const { status, body } = await get(`?shardSelector=${encodeURIComponent("shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')")}`);
    expect(status).toBe(500);
    expect((body as { message: string }).message).toBe('invalid shard selector: unsupported field path "object.metadata.name"; supported: object.metadata.uid, object.metadata.namespace');
  });

  describe('through sharded replicas', () => {
    let leaseServer: ApiServer;
    beforeAll(async () => {
      leaseServer = await startApiServer();
    });
    afterAll(() => leaseServer.close());

    it.each([2, 4])('%i replicas in server mode cache disjoint shares whose union is every pod, filtered by the server', async (replicas) => {
      const members = Array.from({ length: replicas }, (_, i) => `replica-${i}`);
      const ring = { name: `generated-${replicas}`, namespace: 'default' };
      const latest = new Map<string, Snapshot<KubeObject>>();
      const filtering = new Map<string, ShardFilterMode[]>();
      const shards = members.map((identity) =>
        replicaShard({ podsUrl: url, leasesUrl: leaseServer.url, identity, ring, buckets: BUCKETS, mode: 'server', cache: 'lean', logger: silentLogger, timings: { leaseDuration: 2_000, renewDeadline: 1_500, retryPeriod: 400 } }),
      );
      const running: Subscription[] = [];
      shards.forEach((shard, i) => {
        const identity = members[i]!;
        running.push(shard.filtering$.subscribe((m) => filtering.set(identity, [...(filtering.get(identity) ?? []), m])));
        running.push(shard.informer$.subscribe((snapshot) => latest.set(identity, snapshot)));
      });
      try {
        const whole = names((await list()).items).sort();
        await eventually(
          () => {
            shards.forEach((shard, i) => {
              const identity = members[i]!;
              expect(shard.owned()).toEqual(bucketsOf(identity, members, BUCKETS));
              expect(latest.get(identity)?.synced).toBe(true);
              for (const pod of latest.get(identity)!.values()) expect(shard.owns(pod)).toBe(true);
            });
            const union = members.flatMap((identity) => [...latest.get(identity)!.values()].map((pod) => pod.metadata.name!)).sort();
            expect(union).toEqual(whole);
          },
          { timeoutMs: 15_000, intervalMs: 100 },
        );
        // The server echoed every selector: no replica fell back to filtering itself.
        for (const identity of members) expect(filtering.get(identity)).toEqual(['server']);
        // dropManagedFields ran.
        for (const identity of members) for (const pod of latest.get(identity)!.values()) expect(pod.metadata.managedFields).toBeUndefined();
      } finally {
        for (const subscription of running) subscription.unsubscribe();
      }
    }, 30_000);
  });
});
