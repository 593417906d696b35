import type { KubeObject } from '../../lib/base/object';
import type { Resource } from '../../lib/resources/resource';
import { namespaces, pods, type Pod } from '../../lib/resources/builtins';
import { createChurn, makePod, seededRandom, type ChurnStore } from '../../apiserver/src/churn';
import { createClusterStore } from '../../apiserver/src/clusterStore';

/** A minimal in-memory store with the ClusterStore's error behaviour (409 on taken names, 404 on missing). */
class MemoryStore implements ChurnStore {
  readonly log: string[] = [];
  private rv = 0;
  private readonly objects = new Map<string, KubeObject>();

  create<T extends KubeObject>(resource: Resource<T>, object: T): T {
    const key = this.key(resource, object.metadata.namespace, object.metadata.name);
    if (this.objects.has(key)) throw statusError(409);
    return this.put('create', key, object);
  }
  update<T extends KubeObject>(resource: Resource<T>, object: T): T {
    const key = this.key(resource, object.metadata.namespace, object.metadata.name);
    const current = this.objects.get(key);
    if (current === undefined) throw statusError(404);
    if (object.metadata.resourceVersion !== undefined && object.metadata.resourceVersion !== current.metadata.resourceVersion) throw statusError(409);
    return this.put('update', key, object);
  }
  delete<T extends KubeObject>(resource: Resource<T>, namespace: string | undefined, name: string): T {
    const key = this.key(resource, namespace, name);
    const current = this.objects.get(key);
    if (current === undefined) throw statusError(404);
    this.objects.delete(key);
    this.log.push(`delete ${key}`);
    return current as T;
  }
  get<T extends KubeObject>(resource: Resource<T>, namespace: string | undefined, name: string): T | undefined {
    return this.objects.get(this.key(resource, namespace, name)) as T | undefined;
  }
  list<T extends KubeObject>(resource: Resource<T>, namespace?: string): T[] {
    const prefix = namespace === undefined ? `${resource.plural}/` : `${resource.plural}/${namespace}/`;
    return [...this.objects].filter(([key]) => key.startsWith(prefix)).map(([, object]) => object as T);
  }

  private key(resource: Resource<KubeObject>, namespace: string | undefined, name: string): string {
    return resource.namespaced ? `${resource.plural}/${namespace ?? ''}/${name}` : `${resource.plural}/${name}`;
  }
  private put<T extends KubeObject>(verb: string, key: string, object: T): T {
    const stored = Object.freeze({ ...object, metadata: Object.freeze({ ...object.metadata, resourceVersion: String(++this.rv) }) });
    this.objects.set(key, stored);
    this.log.push(`${verb} ${key} ${JSON.stringify(object)}`);
    return stored;
  }
}

function statusError(code: number): Error & { status: { code: number } } {
  return Object.assign(new Error(`status ${code}`), { status: { code } });
}

const fixedClock = (): number => Date.UTC(2026, 5, 1);

function averageSize(managedFields: boolean): number {
  const random = seededRandom(99);
  let total = 0;
  for (let i = 0; i < 500; i++) total += JSON.stringify(makePod(random, `ns-${i % 7}`, `pod-${i}`, { managedFields })).length;
  return total / 500;
}

describe('seededRandom', () => {
  it('replays the same sequence for the same seed and a different one for another seed', () => {
    const draw = (seed: number): number[] => {
      const random = seededRandom(seed);
      return Array.from({ length: 50 }, () => random());
    };
    expect(draw(5)).toEqual(draw(5));
    expect(draw(5)).not.toEqual(draw(6));
  });

  it('stays in [0, 1) and spreads evenly over ten buckets', () => {
    const random = seededRandom(123);
    const buckets = new Array<number>(10).fill(0);
    let outside = 0;
    for (let i = 0; i < 100_000; i++) {
      const value = random();
      if (value < 0 || value >= 1) outside++;
      else buckets[Math.floor(value * 10)]! += 1;
    }
    expect(outside).toBe(0);
    for (const count of buckets) expect(Math.abs(count - 10_000)).toBeLessThan(500);
  });
});

describe('makePod', () => {
  it('is about 4.4 KB of JSON with managedFields and about 1.5 KB without', () => {
    const withFields = averageSize(true);
    const without = averageSize(false);
    expect(withFields).toBeGreaterThan(4000);
    expect(withFields).toBeLessThan(4700);
    expect(without).toBeGreaterThan(1350);
    expect(without).toBeLessThan(1600);
  });

  it('labels the pod with app, tier and pod-template-hash and owns it by its ReplicaSet', () => {
    const random = seededRandom(1);
    const a = makePod(random, 'shop', 'api-1', { app: 'api' });
    const b = makePod(random, 'shop', 'api-2', { app: 'api' });
    const other = makePod(random, 'other', 'api-3', { app: 'api' });
    expect(a.metadata.labels).toEqual({ app: 'api', tier: 'backend', 'pod-template-hash': expect.stringMatching(/^[a-z0-9]{10}$/) });
    const owner = a.metadata.ownerReferences?.[0];
    expect(owner).toMatchObject({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `api-${a.metadata.labels?.['pod-template-hash']}`, controller: true });
    expect(owner?.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/);
    // Pods of one ReplicaSet share its hash and uid; another namespace has another ReplicaSet.
    expect(b.metadata.ownerReferences?.[0]?.uid).toBe(owner?.uid);
    expect(b.metadata.labels?.['pod-template-hash']).toBe(a.metadata.labels?.['pod-template-hash']);
    expect(other.metadata.ownerReferences?.[0]?.uid).not.toBe(owner?.uid);
  });

  it('fills spec and status the way a scheduled pod has them', () => {
    const pod = makePod(seededRandom(2), 'ns-0', 'web-1', { app: 'web' });
    expect(pod.spec?.containers?.[0]).toMatchObject({ name: 'web', image: expect.stringContaining('web:'), resources: { requests: expect.any(Object), limits: expect.any(Object) } });
    expect(pod.spec).toMatchObject({ nodeName: expect.stringMatching(/^node-\d+$/), volumes: [expect.any(Object)], tolerations: [expect.any(Object)] });
    expect(pod.status?.phase).toMatch(/^(Running|Pending)$/);
    expect(pod.status?.podIP).toMatch(/^10\.244\.\d+\.\d+$/);
    expect(pod.status?.['conditions']).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'Ready' })]));
    expect(pod.status?.['containerStatuses']).toEqual([expect.objectContaining({ name: 'web', restartCount: 0 })]);
    expect(pod.metadata.managedFields?.map((entry) => (entry as { manager: string }).manager)).toEqual(['kube-controller-manager', 'kubelet']);
    expect(makePod(seededRandom(2), 'ns-0', 'web-1', { app: 'web', managedFields: false }).metadata.managedFields).toBeUndefined();
  });

  it('gives every object the fields the Kubernetes OpenAPI requires (what typed clients such as the Python client check), before and after updates', () => {
    // Required properties of the generated kinds' nested types, as in the OpenAPI the client
    // models are generated from (io.k8s.api.core.v1.*; checked against python3-kubernetes' models).
    const required: Readonly<Record<string, readonly string[]>> = {
      containerStatus: ['name', 'ready', 'restartCount', 'image', 'imageID'],
      condition: ['type', 'status'],
      container: ['name'],
      containerPort: ['containerPort'],
      volumeMount: ['name', 'mountPath'],
      volume: ['name'],
      ownerReference: ['apiVersion', 'kind', 'name', 'uid'],
      terminated: ['exitCode'],
    };
    const missing = (kind: string, value: unknown): string[] =>
      required[kind]!.filter((field) => (value as Record<string, unknown>)[field] === undefined || (value as Record<string, unknown>)[field] === null).map((field) => `${kind}.${field}`);
    const check = (pod: Pod): string[] => {
      const statuses = (pod.status?.['containerStatuses'] ?? []) as { state?: { terminated?: unknown }; lastState?: { terminated?: unknown } }[];
      const spec = (pod.spec ?? {}) as { containers?: { ports?: unknown[]; volumeMounts?: unknown[] }[]; volumes?: unknown[] };
      const containers = spec.containers ?? [];
      return [
        ...statuses.flatMap((s) => [
          ...missing('containerStatus', s),
          ...(s.state?.terminated === undefined ? [] : missing('terminated', s.state.terminated)),
          ...(s.lastState?.terminated === undefined ? [] : missing('terminated', s.lastState.terminated)),
        ]),
        ...((pod.status?.['conditions'] ?? []) as unknown[]).flatMap((c) => missing('condition', c)),
        ...containers.flatMap((c) => [
          ...missing('container', c),
          ...(c.ports ?? []).flatMap((p) => missing('containerPort', p)),
          ...(c.volumeMounts ?? []).flatMap((m) => missing('volumeMount', m)),
        ]),
        ...(spec.volumes ?? []).flatMap((v) => missing('volume', v)),
        ...(pod.metadata.ownerReferences ?? []).flatMap((o) => missing('ownerReference', o)),
      ];
    };
    const store = new MemoryStore();
    const churn = createChurn(store, { namespaces: 2, pods: 40, updatesPerSecond: 1, now: fixedClock });
    churn.populate();
    for (let i = 0; i < 300; i++) churn.step();
    const all = store.list(pods);
    expect(all.flatMap(check)).toEqual([]);
    const statuses = all.map((pod) => (pod.status?.['containerStatuses'] as { image: string; imageID: string }[])[0]!);
    // The image the container runs, and the digest it resolved to (what containerd reports).
    for (const [i, status] of statuses.entries()) {
      expect(status.image).toBe(all[i]!.spec?.containers?.[0]?.image);
      expect(status.imageID).toMatch(/^ghcr\.io\/shop\/[a-z]+@sha256:[0-9a-f]{64}$/);
    }
    for (const namespace of store.list(namespaces)) expect(namespace.status?.phase).toBe('Active');
  });

  it('leaves uid, resourceVersion and creationTimestamp for the store to set', () => {
    const { metadata } = makePod(seededRandom(3), 'ns-0', 'x');
    expect(metadata.uid).toBeUndefined();
    expect(metadata.resourceVersion).toBeUndefined();
    expect(metadata.creationTimestamp).toBeUndefined();
  });
});

describe('createChurn', () => {
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('populates the namespaces and spreads the initial pods over them, once', () => {
    const store = new MemoryStore();
    const churn = createChurn(store, { namespaces: 3, pods: 30 });
    churn.populate();
    churn.populate();
    expect(store.list(namespaces).map((ns) => ns.metadata.name).sort()).toEqual(['ns-0', 'ns-1', 'ns-2']);
    expect(store.list(pods)).toHaveLength(30);
    for (const ns of ['ns-0', 'ns-1', 'ns-2']) expect(store.list(pods, ns)).toHaveLength(10);
    expect(churn.stats).toEqual({ creates: 0, updates: 0, deletes: 0 });
  });

  it('replays exactly the same mutations for the same seed, and different ones for another seed', () => {
    const run = (seed: number): string[] => {
      const store = new MemoryStore();
      const churn = createChurn(store, { seed, namespaces: 4, pods: 40, now: fixedClock });
      churn.populate();
      for (let i = 0; i < 400; i++) churn.step();
      return store.log;
    };
    const first = run(7);
    expect(first.length).toBeGreaterThan(400);
    expect(run(7)).toEqual(first);
    expect(run(8)).not.toEqual(first);
  });

  it('mixes creates, updates and deletes in proportion to the configured rates', () => {
    const store = new MemoryStore();
    const churn = createChurn(store, { pods: 200, createsPerSecond: 10, updatesPerSecond: 80, deletesPerSecond: 10 });
    churn.populate();
    for (let i = 0; i < 5000; i++) churn.step();
    const { creates, updates, deletes } = churn.stats;
    expect(creates + updates + deletes).toBe(5000);
    expect(creates / 5000).toBeCloseTo(0.1, 1);
    expect(updates / 5000).toBeCloseTo(0.8, 1);
    expect(deletes / 5000).toBeCloseTo(0.1, 1);
    expect(store.list(pods)).toHaveLength(200 + creates - deletes);
  });

  it('only updates when only updates are configured', () => {
    const store = new MemoryStore();
    const churn = createChurn(store, { pods: 20, updatesPerSecond: 5 });
    churn.populate();
    for (let i = 0; i < 300; i++) churn.step();
    expect(churn.stats).toEqual({ creates: 0, updates: 300, deletes: 0 });
  });

  it('updates change status (phase, conditions, restarts) and sometimes labels, never the spec', () => {
    const store = new MemoryStore();
    const churn = createChurn(store, { namespaces: 1, pods: 1, updatesPerSecond: 1, now: fixedClock });
    churn.populate();
    const original = store.list(pods)[0] as Pod;
    const seen = { phases: new Set<string>(), restarts: 0, relabels: 0, readyFlips: 0 };
    let previous = original;
    for (let i = 0; i < 300; i++) {
      churn.step();
      const next = store.list(pods)[0] as Pod;
      expect(next.spec).toEqual(original.spec);
      expect(next.metadata.ownerReferences).toEqual(original.metadata.ownerReferences);
      seen.phases.add(next.status?.phase ?? '');
      const restarts = (pod: Pod): number => (pod.status?.['containerStatuses'] as { restartCount: number }[])[0]!.restartCount;
      const ready = (pod: Pod): string | undefined => (pod.status?.['conditions'] as { type: string; status: string }[]).find((c) => c.type === 'Ready')?.status;
      if (restarts(next) > restarts(previous)) seen.restarts++;
      if (ready(next) !== ready(previous)) seen.readyFlips++;
      if (next.metadata.labels?.['track'] !== previous.metadata.labels?.['track']) seen.relabels++;
      previous = next;
    }
    expect([...seen.phases].sort()).toEqual(['Failed', 'Pending', 'Running', 'Succeeded']);
    expect(seen.restarts).toBeGreaterThan(30);
    expect(seen.readyFlips).toBeGreaterThan(30);
    expect(seen.relabels).toBeGreaterThan(5);
    expect(seen.relabels).toBeLessThan(80);
  });

  it('deletes only existing pods and steps past pods deleted behind its back', () => {
    const store = new MemoryStore();
    const churn = createChurn(store, { namespaces: 2, pods: 20, deletesPerSecond: 1 });
    churn.populate();
    for (const pod of store.list(pods).slice(0, 10)) store.delete(pods, pod.metadata.namespace, pod.metadata.name);
    for (let i = 0; i < 10; i++) churn.step();
    expect(churn.stats.deletes).toBe(10);
    expect(store.list(pods)).toHaveLength(0);
    // With nothing left to delete, a delete step creates instead of failing.
    churn.step();
    expect(churn.stats.creates).toBe(1);
  });

  it('adopts pods already in its namespaces so they churn too', () => {
    const store = new MemoryStore();
    store.create(pods, makePod(seededRandom(1), 'ns-0', 'pre-existing'));
    const churn = createChurn(store, { namespaces: 1, pods: 0, deletesPerSecond: 1 });
    churn.populate();
    churn.step();
    expect(store.get(pods, 'ns-0', 'pre-existing')).toBeUndefined();
  });

  it('start() mutates at the configured total rate on timers and stop() clears them', () => {
    jest.useFakeTimers();
    const store = new MemoryStore();
    const churn = createChurn(store, { pods: 50, createsPerSecond: 20, updatesPerSecond: 160, deletesPerSecond: 20 });
    churn.start();
    expect(store.list(pods)).toHaveLength(50);
    jest.advanceTimersByTime(2000);
    const { creates, updates, deletes } = churn.stats;
    expect(creates + updates + deletes).toBeGreaterThanOrEqual(390);
    expect(creates + updates + deletes).toBeLessThanOrEqual(400);
    churn.stop();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(2000);
    expect(churn.stats).toEqual({ creates, updates, deletes });
  });

  it('does not keep the process alive: its timer is unref-ed', () => {
    const setIntervalSpy = jest.spyOn(global, 'setInterval');
    const churn = createChurn(new MemoryStore(), { pods: 1, updatesPerSecond: 1 });
    churn.start();
    try {
      const timer = setIntervalSpy.mock.results[0]?.value as NodeJS.Timeout;
      expect(timer.hasRef()).toBe(false);
    } finally {
      churn.stop();
    }
  });

  it('stops and reports when the store fails for another reason', () => {
    jest.useFakeTimers();
    const store = new MemoryStore();
    const errors: unknown[] = [];
    const churn = createChurn(store, { pods: 5, updatesPerSecond: 100, onError: (error) => errors.push(error) });
    churn.start();
    jest.spyOn(store, 'update').mockImplementation(() => {
      throw new Error('store closed');
    });
    jest.advanceTimersByTime(500);
    expect(errors).toEqual([new Error('store closed')]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('does nothing on start() when every rate is 0', () => {
    jest.useFakeTimers();
    const churn = createChurn(new MemoryStore(), { pods: 5 });
    churn.start();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('drives the real ClusterStore: same seed, same resulting pods (up to store-set uid and time)', () => {
    const run = (): string[] => {
      const store = createClusterStore();
      const churn = createChurn(store, { seed: 3, namespaces: 3, pods: 30, now: fixedClock });
      churn.populate();
      for (let i = 0; i < 300; i++) churn.step();
      return store.list(pods).map((pod) => JSON.stringify({ ...pod, metadata: { ...pod.metadata, uid: undefined, creationTimestamp: undefined } }));
    };
    const first = run();
    expect(first.length).toBeGreaterThan(20);
    expect(run()).toEqual(first);
  });

  it('gives stored pods (with uid, resourceVersion, creationTimestamp) of about 4.5 KB, or 1.6 KB without managedFields', () => {
    const averageStored = (managedFields: boolean): number => {
      const store = createClusterStore();
      createChurn(store, { pods: 500, managedFields }).populate();
      const all = store.list(pods);
      return all.reduce((sum, pod) => sum + JSON.stringify(pod).length, 0) / all.length;
    };
    expect(averageStored(true)).toBeGreaterThan(4100);
    expect(averageStored(true)).toBeLessThan(4800);
    expect(averageStored(false)).toBeGreaterThan(1450);
    expect(averageStored(false)).toBeLessThan(1750);
  });
});
