import { filter, firstValueFrom, Subscription, timeout } from 'rxjs';
import { silentLogger } from '../lib/base/logger';
import { informerFrom } from '../lib/informer/informer';
import { pods, type Pod } from '../lib/resources/builtins';
import { kubeListerWatcher } from '../lib/sources/kubeListerWatcher';
import type { ListerWatcher } from '../lib/sources/listerWatcher';
import type { Snapshot } from '../lib/store/snapshot';
import { HandlerLedger } from './legality';
import { countError, type Subject, type SubjectFactory } from './subject';

/**
 * rx-informer as a soak subject: one informer over pods with
 * - `changes$` checked by a ledger,
 * - a synchronous handler and an asynchronous one (each call awaits a macrotask) from the start,
 * - a late handler added before the third fault (it must first get the current cache as adds),
 * each with its own ledger; health reports are counted by error.
 *
 * The ListerWatcher is `kubeListerWatcher` with a short watch `timeoutSeconds`, so that faults
 * armed for the next watch land within a second. `informer()` does not expose the reflector's
 * `watchTimeoutSeconds`, hence `informerFrom` over the same ListerWatcher `informer()` builds.
 */
export const rxInformerSubject: SubjectFactory = async (server, context) => {
  const base = kubeListerWatcher<Pod>(server.kubeConfig, pods);
  const shortWatches: ListerWatcher<Pod> = {
    list: (options) => base.list(options),
    watch: (options) => base.watch({ ...options, timeoutSeconds: Math.min(options.timeoutSeconds ?? context.watchTimeoutSeconds, context.watchTimeoutSeconds) }),
  };
  // The soak injects the faults and checks the cache against them: their warnings would only bury its report.
  const podInformer = informerFrom<Pod>(shortWatches, { name: 'soak-pods', backoff: context.backoff, pageSize: context.pageSize, logger: silentLogger });
  const subscriptions = new Subscription();
  const errors = new Map<string, number>();
  const ledgers: HandlerLedger[] = [];
  let latest: Snapshot<Pod> | undefined;
  let events = 0;
  let alive = true;
  let lateAdded = false;

  const eventsLedger = new HandlerLedger('changes$', context.relists);
  ledgers.push(eventsLedger);
  subscriptions.add(
    podInformer.changes$.subscribe({
      next: (change) => {
        events++;
        eventsLedger.observe(change);
      },
      error: (error: unknown) => {
        alive = false;
        countError(errors, error);
      },
    }),
  );
  subscriptions.add(
    podInformer.informer$.subscribe({
      next: (snapshot) => (latest = snapshot),
      error: () => (alive = false),
    }),
  );
  subscriptions.add(
    podInformer.health$.subscribe((health) => {
      if (health.phase === 'backingOff' && health.lastError !== undefined) countError(errors, health.lastError);
    }),
  );

  const addHandler = (name: string, asynchronous: boolean): void => {
    const ledger = new HandlerLedger(name, context.relists);
    ledgers.push(ledger);
    const settle = (): Promise<void> | undefined => (asynchronous ? new Promise<void>((resolve) => setImmediate(resolve)) : undefined);
    subscriptions.add(
      podInformer
        .handle({
          onAdd: (object, { key }) => {
            ledger.observe({ type: 'add', key, object });
            return settle();
          },
          onUpdate: (oldObject, object, { key, isResync }) => {
            ledger.observe({ type: 'update', key, oldObject, object, isResync });
            return settle();
          },
          onDelete: (object, { key, finalStateUnknown }) => {
            ledger.observe({ type: 'delete', key, object, finalStateUnknown });
            return settle();
          },
          onError: (error) => countError(errors, error),
        })
        .subscribe({ error: () => (alive = false) }),
    );
  };
  addHandler('sync handler', false);
  addHandler('async handler', true);

  await firstValueFrom(podInformer.synced$.pipe(timeout(context.syncTimeoutMs)));
  await firstValueFrom(podInformer.informer$.pipe(filter((snapshot) => snapshot.synced)));

  const subject: Subject = {
    name: 'rx-informer',
    cache: () => {
      const versions = new Map<string, string>();
      if (latest === undefined) return versions;
      for (const [key, object] of entries(latest)) versions.set(key, object.metadata.resourceVersion ?? '');
      return versions;
    },
    ledgers,
    get events() {
      return events;
    },
    errors,
    get alive() {
      return alive;
    },
    beforeFault: (index) => {
      if (index === 2 && !lateAdded) {
        lateAdded = true;
        addHandler('late handler', false);
      }
    },
    stop: () => subscriptions.unsubscribe(),
  };
  return subject;
};

function* entries(snapshot: Snapshot<Pod>): Generator<[string, Pod]> {
  for (const key of snapshot.keys()) {
    const object = snapshot.get(key);
    if (object !== undefined) yield [key, object];
  }
}
