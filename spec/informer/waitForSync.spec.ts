import { silentLogger } from '../../lib/base/logger';
import { EMPTY, throwError, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { informerFrom, type Informer } from '../../lib/informer/informer';
import { NetworkError, StatusError } from '../../lib/base/errors';
import type { ListerWatcher } from '../../lib/sources/listerWatcher';
import type { KubeObject } from '../../lib/base/object';
import type { Snapshot } from '../../lib/store/snapshot';
import { InformerStoppedError, SyncTimeoutError, waitForSync } from '../../lib/informer/waitForSync';
import { within } from '../support/eventually';
import { fakeListerWatcher, pod } from './informerFixtures';

const forbidden = new StatusError({ kind: 'Status', apiVersion: 'v1', code: 403, reason: 'Forbidden', message: 'pods is forbidden' });

interface Labelled extends KubeObject {
  readonly spec: { readonly size: number };
}

function virtualScheduler(): TestScheduler {
  const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
  scheduler.maxFrames = Number.POSITIVE_INFINITY;
  return scheduler;
}

/** Settles a promise driven by a virtual scheduler: flush, then let the promise callbacks run. */
async function settle<V>(promise: Promise<V>, scheduler: TestScheduler): Promise<{ value?: V; error?: unknown }> {
  const outcome: { value?: V; error?: unknown } = {};
  const done = promise.then(
    (value) => void (outcome.value = value),
    (error: unknown) => void (outcome.error = error),
  );
  scheduler.flush();
  // The virtual scheduler has run everything due: a promise still pending now never settles.
  await within(done, 5_000, 'waitForSync to settle once the virtual scheduler has run everything due');
  return outcome;
}

describe('waitForSync', () => {
  it('resolves with the synced snapshot of each informer, in order and typed', async () => {
    const scheduler = virtualScheduler();
    const podInformer = informerFrom(fakeListerWatcher([pod('a', '1'), pod('b', '1')]), { scheduler, name: 'pods' });
    const widgets = fakeListerWatcher([{ metadata: { name: 'w', resourceVersion: '1' }, spec: { size: 3 } } as Labelled]) as unknown as ListerWatcher<Labelled>;
    const widgetInformer: Informer<Labelled> = informerFrom(widgets, { logger: silentLogger, scheduler });
    const [pods, widgetSnapshot] = await within(waitForSync([podInformer, widgetInformer], { scheduler }), 5_000, 'both informers to sync');
    const typed: Snapshot<Labelled> = widgetSnapshot;
    expect(pods.size).toBe(2);
    expect(typed.get('w')?.spec.size).toBe(3);
  });

  it('resolves at once for no informers', async () => {
    await expect(waitForSync([])).resolves.toEqual([]);
  });

  it('rejects with the last error of the one unsynced informer on timeout (403), instead of hanging', async () => {
    const scheduler = virtualScheduler();
    const lw = fakeListerWatcher();
    lw.listError = forbidden;
    const informer = informerFrom(lw, { logger: silentLogger, scheduler, name: 'pods' });
    const { error } = await settle(waitForSync([informer], { timeout: 10_000, scheduler }), scheduler);
    expect(error).toBeInstanceOf(StatusError);
    expect(error).toMatchObject({ code: 403, informer: 'pods', message: 'pods: 403 Forbidden: pods is forbidden' });
    expect(lw.lists.length).toBeGreaterThan(1); // it kept retrying meanwhile
    expect(scheduler.now()).toBe(10_000);
  });

  it('rejects with a SyncTimeoutError naming each unsynced informer, its phase and error', async () => {
    const scheduler = virtualScheduler();
    const refused = fakeListerWatcher();
    refused.listError = new NetworkError('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED');
    const slow = fakeListerWatcher();
    slow.listNever = true;
    const fine = informerFrom(fakeListerWatcher([pod('a', '1')]), { scheduler, name: 'configmaps' });
    const { error } = await settle(
      waitForSync([fine, informerFrom(refused, { logger: silentLogger, scheduler, name: 'pods' }), informerFrom(slow, { logger: silentLogger, scheduler, name: 'widgets' })], { timeout: 5_000, scheduler }),
      scheduler,
    );
    expect(error).toBeInstanceOf(SyncTimeoutError);
    const timeout = error as SyncTimeoutError;
    expect(timeout.kind).toBe('timeout');
    expect(timeout.unsynced.map((u) => `${u.name} ${u.health.phase} ${u.health.lastError?.message ?? '-'}`)).toEqual([
      'pods backingOff pods: connect ECONNREFUSED 127.0.0.1:1',
      'widgets listing -',
    ]);
    expect(timeout.message).toBe('informers not synced after 5000 ms: pods (backingOff: connect ECONNREFUSED 127.0.0.1:1), widgets (listing)');
    expect(timeout.cause).toBeInstanceOf(NetworkError);
    expect((timeout.cause as NetworkError).informer).toBe('pods');
  });

  it('resolves without what a throwing transform was given: rejected objects do not stop a sync', async () => {
    const scheduler = virtualScheduler();
    const informer = informerFrom(fakeListerWatcher([pod('a', '1'), pod('b', '1')]), {
      scheduler,
      logger: silentLogger,
      transform: (object) => {
        if (object.metadata.name === 'b') throw new Error('transform failed');
        return object;
      },
    });
    const { value, error } = await settle(waitForSync([informer], { timeout: 60_000, scheduler }), scheduler);
    expect(error).toBeUndefined();
    expect([...(value?.[0].keys() ?? [])]).toEqual(['default/a']);
  });

  it('rejects at once with a 400 Bad Request, which no retry can fix, naming the informer', async () => {
    const scheduler = virtualScheduler();
    const lw = fakeListerWatcher();
    lw.listError = new StatusError({ kind: 'Status', apiVersion: 'v1', code: 400, reason: 'BadRequest', message: 'field label not supported: spec.color' }, undefined, 'GET /api/v1/pods');
    const informer = informerFrom(lw, { logger: silentLogger, scheduler, name: 'pods?spec.color=red' });
    const { error } = await settle(waitForSync([informer], { timeout: 120_000, scheduler }), scheduler);
    expect(error).toBeInstanceOf(StatusError);
    expect((error as StatusError).message).toBe('pods?spec.color=red: 400 BadRequest on GET /api/v1/pods: field label not supported: spec.color');
    expect(lw.lists).toHaveLength(1);
  });

  it('does not reject on the 400 a streaming list is refused with: the informer falls back to a paged list and syncs', async () => {
    const scheduler = virtualScheduler();
    const lw = fakeListerWatcher([pod('a', '1')]);
    const refusing: ListerWatcher = {
      list: (options) => lw.list(options),
      watch: (options) =>
        options.sendInitialEvents
          ? throwError(() => new StatusError({ kind: 'Status', apiVersion: 'v1', code: 400, reason: 'BadRequest', message: 'sendInitialEvents is not supported' }))
          : lw.watch(options),
    };
    const { value, error } = await settle(waitForSync([informerFrom(refusing, { logger: silentLogger, scheduler, streamingList: true })], { timeout: 60_000, scheduler }), scheduler);
    expect(error).toBeUndefined();
    expect(value?.[0].size).toBe(1);
  });

  it('rejects at once with an InformerStoppedError naming an informer that stops before it syncs, or whose cache fails', async () => {
    const scheduler = virtualScheduler();
    const stub = (name: string, synced$: Observable<Snapshot>): Informer => ({ ...informerFrom(fakeListerWatcher(), { logger: silentLogger, scheduler, name }), synced$ });
    const broken = new Error('cache failed');
    const stopped = await within(waitForSync([stub('pods', EMPTY)]), 5_000, 'waitForSync to reject for an informer that stopped').catch((e: unknown) => e);
    expect(stopped).toBeInstanceOf(InformerStoppedError);
    expect(stopped).toMatchObject({ kind: 'stopped', informer: 'pods', message: 'pods stopped before it synced' });
    const failed = await within(waitForSync([stub('widgets', throwError(() => broken))]), 5_000, 'waitForSync to reject for an informer that failed').catch((e: unknown) => e);
    expect(failed).toMatchObject({ informer: 'widgets', message: 'widgets stopped before it synced: cache failed', cause: broken });
  });

  it('resolves when an informer recovers before the timeout', async () => {
    const scheduler = virtualScheduler();
    const lw = fakeListerWatcher([pod('a', '1')]);
    lw.listError = forbidden;
    const informer = informerFrom(lw, { logger: silentLogger, scheduler, backoff: { initialMs: 1000, jitter: 'none' } });
    scheduler.schedule(() => (lw.listError = undefined), 500);
    const { value, error } = await settle(waitForSync([informer], { timeout: 60_000, scheduler }), scheduler);
    expect(error).toBeUndefined();
    expect(value?.[0].size).toBe(1);
  });

  it('lets go of the informers it started once settled (they stop after their grace period)', async () => {
    const scheduler = virtualScheduler();
    const lw = fakeListerWatcher([pod('a', '1')]);
    await within(waitForSync([informerFrom(lw, { logger: silentLogger, scheduler })], { scheduler }), 5_000, 'the informer to sync');
    scheduler.flush();
    expect(lw.openWatches()).toBe(0);
  });

  it('rejects with the abort reason when its signal aborts', async () => {
    const lw = fakeListerWatcher();
    lw.listNever = true;
    const controller = new AbortController();
    const waiting = waitForSync([informerFrom(lw, { logger: silentLogger, scheduler: virtualScheduler() })], { signal: controller.signal, scheduler: virtualScheduler() });
    controller.abort(new Error('shutting down'));
    await expect(waiting).rejects.toThrow('shutting down');
  });

  it('rejects a negative timeout with a RangeError', async () => {
    await expect(waitForSync([], { timeout: -1 })).rejects.toThrow(RangeError);
  });
});
