import { TestScheduler } from 'rxjs/testing';
import { informerFrom, type Informer } from '../../lib/informer/informer';
import { NetworkError, StatusError } from '../../lib/sources/errors';
import type { ListerWatcher } from '../../lib/sources/listerWatcher';
import type { KubeObject } from '../../lib/store/object';
import type { Snapshot } from '../../lib/store/snapshot';
import { SyncTimeoutError, waitForSync } from '../../lib/informer/waitForSync';
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
  await done;
  return outcome;
}

describe('waitForSync', () => {
  it('resolves with the synced snapshot of each informer, in order and typed', async () => {
    const scheduler = virtualScheduler();
    const podInformer = informerFrom(fakeListerWatcher([pod('a', '1'), pod('b', '1')]), { scheduler, name: 'pods' });
    const widgets = fakeListerWatcher([{ metadata: { name: 'w', resourceVersion: '1' }, spec: { size: 3 } } as Labelled]) as unknown as ListerWatcher<Labelled>;
    const widgetInformer: Informer<Labelled> = informerFrom(widgets, { scheduler });
    const [pods, widgetSnapshot] = await waitForSync([podInformer, widgetInformer], { scheduler });
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
    const informer = informerFrom(lw, { scheduler, name: 'pods' });
    const { error } = await settle(waitForSync([informer], { timeout: 10_000, scheduler }), scheduler);
    expect(error).toBe(forbidden);
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
      waitForSync([fine, informerFrom(refused, { scheduler, name: 'pods' }), informerFrom(slow, { scheduler, name: 'widgets' })], { timeout: 5_000, scheduler }),
      scheduler,
    );
    expect(error).toBeInstanceOf(SyncTimeoutError);
    const timeout = error as SyncTimeoutError;
    expect(timeout.kind).toBe('timeout');
    expect(timeout.unsynced.map((u) => `${u.name} ${u.health.phase} ${u.health.lastError?.message ?? '-'}`)).toEqual([
      'pods backingOff connect ECONNREFUSED 127.0.0.1:1',
      'widgets listing -',
    ]);
    expect(timeout.message).toContain('pods (backingOff: connect ECONNREFUSED 127.0.0.1:1)');
    expect(timeout.cause).toBe(refused.listError);
  });

  it('rejects at once with the error of an informer whose cache fails', async () => {
    const broken = new Error('transform failed');
    const informer = informerFrom(fakeListerWatcher([pod('a', '1')]), {
      scheduler: virtualScheduler(),
      transform: () => {
        throw broken;
      },
    });
    await expect(waitForSync([informer], { timeout: 60_000 })).rejects.toBe(broken);
  });

  it('resolves when an informer recovers before the timeout', async () => {
    const scheduler = virtualScheduler();
    const lw = fakeListerWatcher([pod('a', '1')]);
    lw.listError = forbidden;
    const informer = informerFrom(lw, { scheduler, backoff: { initialMs: 1000, jitter: 'none' } });
    scheduler.schedule(() => (lw.listError = undefined), 500);
    const { value, error } = await settle(waitForSync([informer], { timeout: 60_000, scheduler }), scheduler);
    expect(error).toBeUndefined();
    expect(value?.[0].size).toBe(1);
  });

  it('lets go of the informers it started once settled', async () => {
    const scheduler = virtualScheduler();
    const lw = fakeListerWatcher([pod('a', '1')]);
    await waitForSync([informerFrom(lw, { scheduler })], { scheduler });
    expect(lw.openWatches()).toBe(0);
  });

  it('rejects with the abort reason when its signal aborts', async () => {
    const lw = fakeListerWatcher();
    lw.listNever = true;
    const controller = new AbortController();
    const waiting = waitForSync([informerFrom(lw, { scheduler: virtualScheduler() })], { signal: controller.signal, scheduler: virtualScheduler() });
    controller.abort(new Error('shutting down'));
    await expect(waiting).rejects.toThrow('shutting down');
  });

  it('rejects a negative timeout with a RangeError', async () => {
    await expect(waitForSync([], { timeout: -1 })).rejects.toThrow(RangeError);
  });
});
