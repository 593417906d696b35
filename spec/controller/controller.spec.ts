import { filter, type Subscription } from 'rxjs';
import { silentLogger } from '../../lib/base/logger';
import type { KubeObject } from '../../lib/base/object';
import { controller, type ControllerEvent, type ControllerRequest } from '../../lib/controller/controller';
import { labelKeys } from '../../lib/controller/relatedKeys';
import { changedGeneration } from '../../lib/operators/changedGeneration';
import { matchLabels } from '../../lib/operators/matchLabels';
import { configMaps, secrets, type ConfigMap } from '../../lib/resources/builtins';
import { defineResource } from '../../lib/resources/resource';
import { requeueAfter } from '../../lib/workqueue/reconcileResult';
import { widgets, type Widget } from '../../apiserver/src';
import { Cluster } from './controllerHarness';

/**
 * The controller builder in virtual time: what reaches the reconciler (which keys, when, how
 * often) and what it reads. Informers and writes go to a loopback store (controllerHarness.ts).
 */

const NS = 'shop';
let cluster: Cluster;
let running: Subscription | undefined;
let calls: { readonly at: number; readonly key: string }[];
let events: ControllerEvent[];

beforeEach(() => {
  cluster = new Cluster();
  running = undefined;
  calls = [];
  events = [];
});
afterEach(() => running?.unsubscribe());

function widget(name: string, spec: Widget['spec'] = { size: 1 }): Widget {
  return cluster.store.create(widgets, { metadata: { name, namespace: NS }, spec });
}

function ownedBy(owner: KubeObject, kind = 'Widget', apiVersion = 'example.com/v1', controllerRef: boolean | undefined = true) {
  return { apiVersion, kind, name: owner.metadata.name, uid: owner.metadata.uid ?? '', ...(controllerRef === undefined ? {} : { controller: controllerRef }) };
}

function child(name: string, owners: ReturnType<typeof ownedBy>[], data: Record<string, string> = {}, namespace = NS): ConfigMap {
  return cluster.store.create(configMaps, { metadata: { name, namespace, ownerReferences: owners }, data });
}

function touch(name: string, data: Record<string, string>, namespace = NS): void {
  const current = cluster.store.get(configMaps, namespace, name)!;
  cluster.store.update(configMaps, { ...current, data });
}

/** Records each call; an async reconciler resolving after `ms` when given. */
function recording<T extends KubeObject>(body?: (request: ControllerRequest<T>) => unknown) {
  return (request: ControllerRequest<T>) => {
    calls.push({ at: cluster.time.now(), key: request.key });
    return body?.(request) as undefined;
  };
}

const keysCalled = (): string[] => calls.map((call) => call.key);

describe('controller(): what reaches the reconciler', () => {
  it('reconciles every primary key once at the start, and the owners named by children already there', async () => {
    const a = widget('a');
    widget('b');
    child('orphan-of-gone', [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'gone', uid: 'u-gone', controller: true }]);
    child('a-config', [ownedBy(a)]);
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets)
      .owns(configMaps)
      .run(recording(), { scheduler: cluster.time, logger: silentLogger })
      .subscribe((event) => events.push(event));
    await cluster.runTo(0);

    expect(keysCalled().sort()).toEqual([`${NS}/a`, `${NS}/b`, `${NS}/gone`]);
    await cluster.advance(1_000);
    expect(calls).toHaveLength(3);
  });

  it('starts no reconcile before the slowest cache has synced', async () => {
    widget('a');
    const listedAt: number[] = [];
    // A factory whose ConfigMap informer lists only at 500 ms.
    const factory = {
      informerFor: ((resource: typeof widgets, options: object) => {
        const made = cluster.factory.informerFor(resource, options);
        if (resource.plural !== 'configmaps') return made;
        return { ...made, informer$: new (require('rxjs').Observable)((subscriber: { add: (s: Subscription) => void; next: (v: unknown) => void }) => {
          subscriber.add(cluster.time.schedule(() => {
            listedAt.push(cluster.time.now());
            subscriber.add(made.informer$.subscribe((snapshot) => subscriber.next(snapshot)));
          }, 500));
        }) };
      }) as never,
    };
    running = controller({ factory, client: cluster.client }, widgets).owns(configMaps).run(recording(), { scheduler: cluster.time, logger: silentLogger }).subscribe();
    await cluster.runTo(499);
    expect(calls).toEqual([]);
    await cluster.runTo(500);
    expect([listedAt, calls]).toEqual([[500], [{ at: 500, key: `${NS}/a` }]]);
  });

  it("reconciles a child's controller owner when the child is added, changed or deleted, and no other widget", async () => {
    const a = widget('a');
    widget('b');
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets).owns(configMaps).run(recording(), { scheduler: cluster.time, logger: silentLogger }).subscribe();
    await cluster.runTo(0);
    calls = [];

    cluster.at(10, () => child('a-config', [ownedBy(a)]));
    cluster.at(20, () => touch('a-config', { x: '1' }));
    cluster.at(30, () => cluster.store.delete(configMaps, NS, 'a-config'));
    await cluster.runTo(40);
    expect(calls).toEqual([
      { at: 10, key: `${NS}/a` },
      { at: 20, key: `${NS}/a` },
      { at: 30, key: `${NS}/a` },
    ]);
  });

  it('maps owner references by group and kind: another kind, or a non-controller reference, reconciles nothing', async () => {
    const a = widget('a');
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets).owns(configMaps).run(recording(), { scheduler: cluster.time, logger: silentLogger }).subscribe();
    await cluster.runTo(0);
    calls = [];

    cluster.at(10, () => child('by-deployment', [ownedBy(a, 'Deployment', 'apps/v1')]));
    cluster.at(20, () => child('by-gadget', [ownedBy(a, 'Widget', 'other.example.com/v1')]));
    cluster.at(30, () => child('not-controller', [ownedBy(a, 'Widget', 'example.com/v1', false)]));
    // An older version of the same group and kind is the same owner.
    cluster.at(40, () => child('by-v1beta1', [ownedBy(a, 'Widget', 'example.com/v1beta1')]));
    await cluster.runTo(50);
    expect(calls).toEqual([{ at: 40, key: `${NS}/a` }]);
  });

  it('with onlyController: false, reconciles every owner of the kind a child names', async () => {
    const a = widget('a');
    const b = widget('b');
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets)
      .owns(configMaps, { onlyController: false })
      .run(recording(), { scheduler: cluster.time, logger: silentLogger })
      .subscribe();
    await cluster.runTo(0);
    calls = [];
    cluster.at(10, () => child('shared', [ownedBy(a, 'Widget', 'example.com/v1', false), ownedBy(b, 'Widget', 'example.com/v1', undefined)]));
    await cluster.runTo(10);
    expect(keysCalled().sort()).toEqual([`${NS}/a`, `${NS}/b`]);
  });

  it('keys a cluster-scoped owner by its name alone, whatever the namespace of its namespaced children (kube-rs #293)', async () => {
    const clusterWidgets = defineResource<Widget>({ group: 'example.com', version: 'v1', plural: 'clusterwidgets', kind: 'ClusterWidget', namespaced: false });
    const owner = cluster.store.create(clusterWidgets, { metadata: { name: 'global' }, spec: { size: 1 } });
    running = controller({ factory: cluster.factory, client: cluster.client }, clusterWidgets).owns(configMaps).run(recording(), { scheduler: cluster.time, logger: silentLogger }).subscribe();
    await cluster.runTo(0);
    expect(keysCalled()).toEqual(['global']);
    calls = [];
    cluster.at(10, () => child('in-a', [ownedBy(owner, 'ClusterWidget')], {}, 'team-a'));
    cluster.at(20, () => child('in-b', [ownedBy(owner, 'ClusterWidget')], {}, 'team-b'));
    await cluster.runTo(20);
    expect(calls).toEqual([
      { at: 10, key: 'global' },
      { at: 20, key: 'global' },
    ]);
  });

  it('reconciles both owners when a child moves from one to another', async () => {
    const a = widget('a');
    const b = widget('b');
    child('moving', [ownedBy(a)]);
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets).owns(configMaps).run(recording(), { scheduler: cluster.time, logger: silentLogger }).subscribe();
    await cluster.runTo(0);
    calls = [];
    cluster.at(10, () => {
      const current = cluster.store.get(configMaps, NS, 'moving')!;
      cluster.store.update(configMaps, { ...current, metadata: { ...current.metadata, ownerReferences: [ownedBy(b)] } });
    });
    await cluster.runTo(10);
    expect(keysCalled().sort()).toEqual([`${NS}/a`, `${NS}/b`]);
  });

  it('reconciles an owner once for a burst of child changes that arrive together, and once more for a burst during its reconcile', async () => {
    const a = widget('a');
    child('one', [ownedBy(a)]);
    child('two', [ownedBy(a)]);
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets)
      .owns(configMaps)
      // Each reconcile takes 50 ms.
      .run(recording(() => new Promise((resolve) => cluster.time.schedule(() => resolve(undefined), 50))), { scheduler: cluster.time, logger: silentLogger })
      .subscribe();
    await cluster.runTo(100);
    calls = [];

    // Five changes in one instant: one batch of watch events, one snapshot.
    cluster.at(200, () => {
      for (let i = 0; i < 5; i++) touch(i % 2 === 0 ? 'one' : 'two', { i: String(i) });
    });
    // Three more while that reconcile runs (200..250).
    for (const t of [210, 220, 230]) cluster.at(t, () => touch('one', { t: String(t) }));
    await cluster.runTo(1_000);
    expect(calls).toEqual([
      { at: 200, key: `${NS}/a` },
      { at: 250, key: `${NS}/a` },
    ]);
  });

  it('maps related objects with a user mapper that reads the snapshots, and by a label naming the primary', async () => {
    widget('a', { size: 1, color: 'red' });
    widget('b', { size: 1, color: 'blue' });
    widget('c', { size: 1, color: 'red' });
    const byColor = (secret: KubeObject, snapshots: ControllerRequest<Widget>['snapshots']): string[] =>
      snapshots
        .of(widgets)
        .list({ namespace: secret.metadata.namespace })
        .filter((candidate) => candidate.spec?.color === secret.metadata.labels?.color)
        .map((candidate) => `${candidate.metadata.namespace}/${candidate.metadata.name}`);
    const pods = defineResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true });
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets)
      .watches(secrets, byColor)
      .watches(pods, labelKeys(widgets, 'example.com/widget'))
      .run(recording(), { scheduler: cluster.time, logger: silentLogger })
      .subscribe();
    await cluster.runTo(0);
    calls = [];
    cluster.at(10, () => cluster.store.create(secrets, { metadata: { name: 'paint', namespace: NS, labels: { color: 'red' } } }));
    cluster.at(20, () => cluster.store.create(pods, { metadata: { name: 'p', namespace: NS, labels: { 'example.com/widget': 'b' } } }));
    cluster.at(30, () => cluster.store.create(pods, { metadata: { name: 'q', namespace: NS, labels: { other: 'b' } } }));
    await cluster.runTo(30);
    expect(calls.map((call) => `${call.at} ${call.key}`).sort()).toEqual([`10 ${NS}/a`, `10 ${NS}/c`, `20 ${NS}/b`]);
  });
});

describe('controller(): predicates', () => {
  it('passes primary changes through its predicates: a status-only write reconciles nothing, a spec change and a recreated object do', async () => {
    widget('a');
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets, { predicates: [changedGeneration()] })
      .run(recording(), { scheduler: cluster.time, logger: silentLogger })
      .subscribe();
    await cluster.runTo(0);
    calls = [];
    cluster.at(10, () => {
      const current = cluster.store.get(widgets, NS, 'a')!;
      cluster.store.update(widgets, { ...current, status: { ready: true } } as Widget);
    });
    cluster.at(20, () => {
      const current = cluster.store.get(widgets, NS, 'a')!;
      cluster.store.update(widgets, { ...current, spec: { size: 2 } });
    });
    await cluster.runTo(30);
    expect(calls).toEqual([{ at: 20, key: `${NS}/a` }]);
  });

  it('passes an object deleted and created again while the watch was down, which the relist shows as one update at generation 1', async () => {
    widget('a');
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets, { predicates: [changedGeneration()] })
      .run(recording(), { scheduler: cluster.time, logger: silentLogger })
      .subscribe();
    await cluster.runTo(0);
    calls = [];
    // The watch breaks; meanwhile the widget is deleted and created again (generation 1 both
    // times) and the watch cache forgets, so the informer's next watch gets 410 and it relists.
    cluster.at(10, () => {
      cluster.watchFault = 'unreachable';
      cluster.store.delete(widgets, NS, 'a');
      widget('a');
      cluster.store.compact();
    });
    cluster.at(20, () => (cluster.watchFault = undefined));
    await cluster.runTo(10_000);
    expect(cluster.requests.filter((request) => request === 'list widgets')).toHaveLength(2);
    expect(keysCalled()).toEqual([`${NS}/a`]);
  });

  it("applies withEventFilter to every source, before each source's own predicates", async () => {
    const a = widget('a');
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets)
      .owns(configMaps)
      .withEventFilter(matchLabels('team=red'))
      .run(recording(), { scheduler: cluster.time, logger: silentLogger })
      .subscribe();
    await cluster.runTo(0);
    expect(calls).toEqual([]);
    cluster.at(10, () => cluster.store.create(configMaps, { metadata: { name: 'blue', namespace: NS, labels: { team: 'blue' }, ownerReferences: [ownedBy(a)] } }));
    cluster.at(20, () => cluster.store.create(configMaps, { metadata: { name: 'red', namespace: NS, labels: { team: 'red' }, ownerReferences: [ownedBy(a)] } }));
    await cluster.runTo(20);
    expect(calls).toEqual([{ at: 20, key: `${NS}/a` }]);
  });
});

describe('controller(): what the reconciler reads', () => {
  it('hands it one consistent view: the primary, and every snapshot as they were when it started', async () => {
    const a = widget('a');
    child('a-1', [ownedBy(a)]);
    child('a-2', [ownedBy(a)]);
    child('stranger', []);
    const seen: string[] = [];
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets)
      .owns(configMaps)
      .run(
        recording<Widget>(async ({ primary, snapshots }) => {
          const children = snapshots.owned(configMaps, primary!);
          // The cache moves on while the reconcile runs; what it was handed does not.
          await new Promise((resolve) => cluster.time.schedule(resolve, 20));
          const later = snapshots.owned(configMaps, primary!);
          seen.push(`${primary?.spec?.size} ${children.map((c) => c.metadata.name).sort().join(',')} ${later.length} ${snapshots.of(widgets).get(`${NS}/a`) === primary}`);
        }),
        { scheduler: cluster.time, logger: silentLogger },
      )
      .subscribe();
    cluster.at(10, () => child('a-3', [ownedBy(a)]));
    await cluster.runTo(100);
    expect(seen).toEqual(['1 a-1,a-2 2 true', '1 a-1,a-2,a-3 3 true']);
  });

  it('reconciles a key whose primary is gone with primary undefined', async () => {
    const a = widget('a');
    const seen: string[] = [];
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets)
      .run(recording<Widget>((request) => void seen.push(`${request.key} ${request.primary?.metadata.name ?? 'gone'}`)), { scheduler: cluster.time, logger: silentLogger })
      .subscribe();
    await cluster.runTo(0);
    cluster.at(10, () => cluster.store.delete(widgets, NS, a.metadata.name));
    await cluster.runTo(10);
    expect(seen).toEqual([`${NS}/a a`, `${NS}/a gone`]);
  });

  it("refuses a snapshot of a resource it does not watch, naming the ones it does", async () => {
    widget('a');
    let thrown: unknown;
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets)
      .owns(configMaps)
      .run(
        recording<Widget>(({ snapshots }) => {
          try {
            snapshots.of(secrets);
          } catch (error) {
            thrown = error;
          }
        }),
        { scheduler: cluster.time, logger: silentLogger },
      )
      .subscribe();
    await cluster.runTo(0);
    expect(String(thrown)).toMatch(/secrets.*not watched.*widgets\.example\.com.*configmaps/);
  });
});

describe('controller(): the work queue', () => {
  it('retries a failing reconcile with backoff (5, then 10 ms) and honours requeueAfter', async () => {
    widget('a');
    let attempts = 0;
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets)
      .run(
        recording(() => {
          attempts += 1;
          if (attempts <= 2) throw new Error('not yet');
          return attempts === 3 ? requeueAfter(1_000) : undefined;
        }),
        { scheduler: cluster.time, logger: silentLogger },
      )
      .pipe(filter((event) => event.type !== 'queue'))
      .subscribe((event) => events.push(event));
    await cluster.runTo(2_000);
    expect(calls.map((call) => call.at)).toEqual([0, 5, 15, 1_015]);
    expect(events.map((event) => event.type)).toEqual(['failed', 'failed', 'reconciled', 'reconciled']);
  });

  it('re-emits every primary key each resyncPeriod', async () => {
    widget('a');
    widget('b');
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets)
      .run(recording(), { scheduler: cluster.time, logger: silentLogger, resyncPeriod: 60_000 })
      .subscribe();
    await cluster.runTo(130_000);
    expect(calls.map((call) => call.at)).toEqual([0, 0, 60_000, 60_000, 120_000, 120_000]);
  });

  it('leaves nothing scheduled once unsubscribed', async () => {
    widget('a');
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets)
      .run(recording(() => requeueAfter(10_000)), { scheduler: cluster.time, logger: silentLogger, resyncPeriod: 60_000 })
      .subscribe();
    await cluster.runTo(100);
    running.unsubscribe();
    await cluster.advance(0);
    expect(cluster.time.actions).toEqual([]);
  });

  it('with the signal option, stops taking keys, and completes once running reconciles have settled', async () => {
    widget('a');
    const stop = new AbortController();
    let completedAt: number | undefined;
    running = controller({ factory: cluster.factory, client: cluster.client }, widgets)
      .run(recording(({ signal }) => new Promise((resolve) => signal.addEventListener('abort', () => cluster.time.schedule(() => resolve(undefined), 30)))), {
        scheduler: cluster.time,
        logger: silentLogger,
        signal: stop.signal,
      })
      .subscribe({ complete: () => (completedAt = cluster.time.now()) });
    cluster.at(100, () => stop.abort());
    await cluster.runTo(1_000);
    expect(completedAt).toBe(130);
  });
});

describe('controller(): informers', () => {
  it('asks the factory once per resource and scope, so two controllers share one informer per resource', async () => {
    widget('a');
    const first = controller({ factory: cluster.factory, client: cluster.client }, widgets).owns(configMaps);
    const second = controller({ factory: cluster.factory, client: cluster.client }, widgets).owns(configMaps).owns(secrets);
    const both = [first.run(recording(), { scheduler: cluster.time, logger: silentLogger }).subscribe(), second.run(recording(), { scheduler: cluster.time, logger: silentLogger }).subscribe()];
    await cluster.runTo(0);
    both.forEach((subscription) => subscription.unsubscribe());
    expect(cluster.informersMade.sort()).toEqual(['configmaps@?', 'secrets@?', 'widgets@?']);
    expect(cluster.requests.filter((request) => request.startsWith('watch')).sort()).toEqual(['watch configmaps', 'watch secrets', 'watch widgets']);
  });

  it('refuses one resource watched in two scopes at build time', () => {
    const builder = controller({ factory: cluster.factory, client: cluster.client }, widgets).owns(configMaps);
    expect(() => builder.watches(configMaps, () => [], { labelSelector: 'app=x' })).toThrow(/configmaps.*already watched/);
  });
});
