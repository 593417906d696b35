import { firstValueFrom, type Subscription } from 'rxjs';
import { StatusError } from '../../lib/base/errors';
import { silentLogger } from '../../lib/base/logger';
import { controller, type ControllerRequest } from '../../lib/controller/controller';
import type { ReadAfterWriteMetricEvent } from '../../lib/controller/controllerEvents';
import { finalizer } from '../../lib/controller/finalizer';
import { kubeObjectClient } from '../../lib/controller/objectClient';
import { informerFactory, type InformerFactory } from '../../lib/factory/factory';
import { changedGeneration } from '../../lib/operators/changedGeneration';
import { configMaps, type ConfigMap } from '../../lib/resources/builtins';
import { requeueAfter } from '../../lib/workqueue/reconcileResult';
import { ConflictError } from '../../lib/writes/writeErrors';
import { startApiServer, widgets, type ApiServer, type Widget } from '../../apiserver/src';
import { eventually } from '../support/eventually';
import { describeEachServerVersion, isServedList } from '../support/serverVersions';

/**
 * The controller builder over HTTP against the loopback API server, through the real informer
 * factory and `kubeObjectClient`, at the oldest and the newest server version modelled (the newest
 * orders resourceVersions, KEP-5504; the oldest is compared for equality only).
 */

const NS = 'shop';
const backoff = { initialMs: 10, maxMs: 50 };

describeEachServerVersion('controller() against the loopback API server', (serverVersion) => {
  let server: ApiServer;
  let madeFactory: InformerFactory | undefined;
  let running: Subscription[];
  /** Every reconcile: key, and the primary's uid, generation and size as read. */
  let calls: { readonly key: string; readonly uid: string | undefined; readonly size: number | undefined }[];

  beforeEach(async () => {
    server = await startApiServer({ serverVersion });
    running = [];
    calls = [];
    madeFactory = undefined;
  });
  afterEach(async () => {
    running.forEach((subscription) => subscription.unsubscribe());
    await madeFactory?.shutdown();
    await server.close();
  });

  const makeFactory = (streamingList?: boolean): InformerFactory =>
    (madeFactory = informerFactory(server.kubeConfig, { namespace: NS, logger: silentLogger, backoff, ...(streamingList === undefined ? {} : { streamingList }) }));
  const widget = (name: string, size = 1): Widget => server.store.create(widgets, { metadata: { name, namespace: NS }, spec: { size } });
  const ownedBy = (owner: Widget) => [{ apiVersion: 'example.com/v1', kind: 'Widget', name: owner.metadata.name, uid: owner.metadata.uid!, controller: true }];
  const record = (request: ControllerRequest<Widget>): void => void calls.push({ key: request.key, uid: request.primary?.metadata.uid, size: request.primary?.spec?.size });
  const callsOf = (key: string) => calls.filter((call) => call.key === key);

  /** Changes widget `sentinel` and waits for its reconcile: anything queued before it has run by then (one worker, keys in order). */
  async function afterQueuedWork(): Promise<void> {
    const before = callsOf(`${NS}/sentinel`).length;
    const existing = server.store.get(widgets, NS, 'sentinel');
    if (existing === undefined) widget('sentinel');
    else server.store.update(widgets, { ...existing, spec: { size: (existing.spec?.size ?? 0) + 1 } });
    await eventually(() => expect(callsOf(`${NS}/sentinel`).length).toBeGreaterThan(before));
  }

  it("reconciles a child's owner once for its change, and once for a burst of changes that came while it was reconciled", async () => {
    const a = widget('a');
    server.store.create(configMaps, { metadata: { name: 'a-config', namespace: NS, ownerReferences: ownedBy(a) } });
    const factory = makeFactory();
    const childInformer = factory.informerFor(configMaps);
    let release: (() => void) | undefined;
    let hold = false;
    running.push(
      controller({ factory, kubeConfig: server.kubeConfig }, widgets)
        .owns(configMaps)
        .run(async (request) => {
          record(request);
          if (hold && request.key === `${NS}/a`) await new Promise<void>((resolve) => (release = resolve));
        }, { logger: silentLogger })
        .subscribe(),
    );
    factory.start();
    await eventually(() => expect(callsOf(`${NS}/a`)).toHaveLength(1));

    // One change: one reconcile, which is held while five more changes arrive.
    hold = true;
    const touch = (i: number): ConfigMap => {
      const current = server.store.get(configMaps, NS, 'a-config')!;
      return server.store.update(configMaps, { ...current, data: { i: String(i) } });
    };
    touch(0);
    await eventually(() => expect(release).toBeDefined());
    hold = false;
    let last: ConfigMap | undefined;
    for (let i = 1; i <= 5; i++) last = touch(i);
    // Once the cache holds the fifth, every change of the burst has reached the controller.
    await eventually(async () => expect((await firstValueFrom(childInformer.informer$)).get(`${NS}/a-config`)?.metadata.resourceVersion).toBe(last!.metadata.resourceVersion));
    release!();
    await eventually(() => expect(callsOf(`${NS}/a`)).toHaveLength(3));
    await afterQueuedWork();
    expect(callsOf(`${NS}/a`)).toHaveLength(3);
  });

  it('passes a widget deleted and created again while the watch was down through the generation predicate', async () => {
    widget('a');
    // The widgets' watch writes nothing for a minute: the deletion and the new widget stay unseen.
    server.faults.inject({ kind: 'stall', ms: 60_000 }, { verb: 'watch', resource: 'widgets' });
    const factory = makeFactory(false);
    running.push(
      controller({ factory, kubeConfig: server.kubeConfig }, widgets, { predicates: [changedGeneration()] })
        .run(record, { logger: silentLogger })
        .subscribe(),
    );
    factory.start();
    await eventually(() => expect(callsOf(`${NS}/a`)).toHaveLength(1));
    const firstUid = calls[0]!.uid;
    // The cache syncs on the list, before the watch is made: wait until the stalled watch is open.
    await eventually(() => expect(server.requests.entries.some((request) => request.resource === 'widgets' && request.fault === 'stall')).toBe(true));

    server.store.delete(widgets, NS, 'a');
    const again = widget('a');
    expect(again.metadata.generation).toBe(1);
    // The restarted server's watch cache starts now: the informer's next watch gets 410 and it relists.
    await server.restart();
    await eventually(() => expect(callsOf(`${NS}/a`).map((call) => call.uid)).toEqual([firstUid, again.metadata.uid]));
    await afterQueuedWork();
    expect(callsOf(`${NS}/a`)).toHaveLength(2);
  });

  it('on deletion runs cleanup once, and the widget disappears only once the finalizer is removed', async () => {
    widget('a');
    const factory = makeFactory();
    let cleanups = 0;
    let finishCleanup: (() => void) | undefined;
    running.push(
      controller({ factory, kubeConfig: server.kubeConfig }, widgets, { predicates: [changedGeneration()] })
        .owns(configMaps)
        .run(
          finalizer<Widget>('example.com/cleanup', {
            apply: (request) => record(request),
            cleanup: async (request) => {
              record(request);
              cleanups += 1;
              await new Promise<void>((resolve) => (finishCleanup = resolve));
            },
          }),
          { logger: silentLogger },
        )
        .subscribe(),
    );
    factory.start();
    await eventually(() => expect(server.store.get(widgets, NS, 'a')?.metadata.finalizers).toEqual(['example.com/cleanup']));

    const deleted = await kubeObjectClientDelete();
    expect(deleted?.metadata.deletionTimestamp).toEqual(expect.any(String));
    await eventually(() => expect(finishCleanup).toBeDefined());
    // Cleanup runs: the widget is still there, marked.
    expect(server.store.get(widgets, NS, 'a')?.metadata).toMatchObject({ finalizers: ['example.com/cleanup'], deletionTimestamp: expect.any(String) });
    // A child of it changes meanwhile: its reconcile waits behind the running one.
    server.store.create(configMaps, { metadata: { name: 'late', namespace: NS, ownerReferences: ownedBy(deleted!) } });
    finishCleanup!();
    await eventually(() => expect(server.store.get(widgets, NS, 'a')).toBeUndefined());
    await afterQueuedWork();
    expect(cleanups).toBe(1);
  });

  it('hands the reconcile right after a write the written version, though the watch shows it late', async () => {
    widget('a');
    // Every event of the widgets' watch comes 300 ms late.
    server.faults.inject({ kind: 'slowWrites', delayMs: 300 }, { verb: 'watch', resource: 'widgets' });
    const factory = makeFactory(false);
    const metrics: ReadAfterWriteMetricEvent[] = [];
    let written: Widget | undefined;
    running.push(
      controller({ factory, kubeConfig: server.kubeConfig }, widgets)
        .run(
          async (request) => {
            record(request);
            if (written !== undefined) return undefined;
            const { primary, writes } = request;
            written = await writes.patch(widgets, primary!, { type: 'merge', patch: { metadata: { resourceVersion: primary!.metadata.resourceVersion }, spec: { size: 2 } } });
            return requeueAfter(0);
          },
          { logger: silentLogger, readAfterWriteMetrics: (event) => void metrics.push(event) },
        )
        .subscribe(),
    );
    factory.start();
    await eventually(() => expect(callsOf(`${NS}/a`).length).toBeGreaterThanOrEqual(2));
    expect(callsOf(`${NS}/a`).map((call) => call.size)).toEqual([1, 2, ...callsOf(`${NS}/a`).slice(2).map(() => 2)]);
    expect(metrics[0]).toMatchObject({ type: 'caughtUp', key: `${NS}/a` });
    expect((metrics[0] as { waitedSeconds: number }).waitedSeconds).toBeGreaterThan(0.1);
  });

  it('shares one watch per resource between two controllers on one factory', async () => {
    widget('a');
    const factory = makeFactory();
    for (let i = 0; i < 2; i++) running.push(controller({ factory, kubeConfig: server.kubeConfig }, widgets).owns(configMaps).run(record, { logger: silentLogger }).subscribe());
    factory.start();
    await eventually(() => expect(callsOf(`${NS}/a`)).toHaveLength(2));
    const served = (resource: string) => server.requests.entries.filter((request) => request.resource === resource && request.status === 200);
    const readsOf = (resource: string) => [served(resource).filter(isServedList).length, served(resource).filter((request) => request.verb === 'watch').length];
    // The caches sync on their lists, before the watches are made: wait for both, then for more work.
    await eventually(() => expect([readsOf('widgets'), readsOf('configmaps')]).toEqual([[1, 1], [1, 1]]));
    await afterQueuedWork();
    expect([readsOf('widgets'), readsOf('configmaps')]).toEqual([[1, 1], [1, 1]]);
  });

  it("answers a stale merge patch with 409 Conflict, as rx-informer/writes' ConflictError", async () => {
    const a = widget('a');
    server.store.update(widgets, { ...a, spec: { size: 9 } });
    const client = kubeObjectClient(server.kubeConfig);
    const error = await firstValueFrom(client.patch(widgets, { namespace: NS, name: 'a' }, { type: 'merge', patch: { metadata: { resourceVersion: a.metadata.resourceVersion }, spec: { size: 2 } } })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toBeInstanceOf(StatusError);
    expect(error).toMatchObject({ code: 409, reason: 'Conflict' });
  });

  async function kubeObjectClientDelete(): Promise<Widget | undefined> {
    return firstValueFrom(kubeObjectClient(server.kubeConfig).delete(widgets, { namespace: NS, name: 'a' }));
  }
});
