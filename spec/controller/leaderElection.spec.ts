import type { Subscription } from 'rxjs';
import { silentLogger } from '../../lib/base/logger';
import { controller, type ControllerRequest } from '../../lib/controller/controller';
import { finalizer } from '../../lib/controller/finalizer';
import { leaderElectionFrom } from '../../lib/leaderElection/leaderElection';
import { whileLeader } from '../../lib/leaderElection/whileLeader';
import { configMaps, leases } from '../../lib/resources/builtins';
import { widgets, storeLeaseClient, type Widget } from '../../apiserver/src';
import { Cluster, settlePromises } from './controllerHarness';

/**
 * A controller as the work of `whileLeader`: every replica keeps the factory's caches warm, only
 * the leader reconciles, and when a leader stops, its reconciles have settled before the Lease
 * goes to another replica, which then reconciles every key from its warm cache.
 */

const NS = 'shop';
const TIMINGS = { leaseDuration: 15_000, renewDeadline: 10_000, retryPeriod: 2_000 } as const;

describe('controller().run() under whileLeader', () => {
  let cluster: Cluster;
  let replicas: Subscription[];
  let runs: { readonly replica: string; readonly key: string; readonly start: number; end: number | undefined }[];

  beforeEach(() => {
    cluster = new Cluster();
    replicas = [];
    runs = [];
  });
  afterEach(() => replicas.forEach((replica) => replica.unsubscribe()));

  /** A replica: its own election, one controller whose reconciles take 400 ms and stop 50 ms after their signal aborts. */
  function replica(identity: string): Subscription {
    const client = storeLeaseClient(cluster.store, { scheduler: cluster.time, latency: 5 });
    const widgetController = controller({ factory: cluster.factory, client: cluster.client }, widgets).owns(configMaps);
    const reconciler = ({ key, signal }: ControllerRequest<Widget>) =>
      new Promise<undefined>((resolve) => {
        const run = { replica: identity, key, start: cluster.time.now(), end: undefined as number | undefined };
        runs.push(run);
        const end = (): void => {
          run.end = cluster.time.now();
          resolve(undefined);
        };
        const done = cluster.time.schedule(end, 400);
        signal.addEventListener('abort', () => {
          done.unsubscribe();
          cluster.time.schedule(end, 50);
        });
      });
    return leaderElectionFrom(client, { namespace: NS, name: 'widgets', identity, scheduler: cluster.time, logger: silentLogger, random: () => 0.5, ...TIMINGS })
      .pipe(whileLeader(({ signal }) => widgetController.run(reconciler, { scheduler: cluster.time, logger: silentLogger, signal }), { scheduler: cluster.time, logger: silentLogger }))
      .subscribe();
  }

  it('reconciles on the leader only; a stopping leader settles before the other takes over and reconciles every key', async () => {
    for (const name of ['a', 'b']) cluster.store.create(widgets, { metadata: { name, namespace: NS }, spec: { size: 1 } });
    const first = replica('one');
    await cluster.runTo(100);
    replicas.push(first, replica('two'));
    await cluster.runTo(1_000);
    expect(runs.map((run) => `${run.replica} ${run.key}`).sort()).toEqual([`one ${NS}/a`, `one ${NS}/b`]);

    // A change while one leads: one reconciles it. Then one stops in the middle of a reconcile.
    cluster.at(2_000, () => cluster.store.create(configMaps, { metadata: { name: 'c', namespace: NS, ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Widget', name: 'a', uid: 'x', controller: true }] } }));
    cluster.at(2_100, () => first.unsubscribe());
    await cluster.runTo(30_000);

    const byOne = runs.filter((run) => run.replica === 'one');
    const byTwo = runs.filter((run) => run.replica === 'two');
    expect(byOne.slice(0, 2).map((run) => run.key).sort()).toEqual([`${NS}/a`, `${NS}/b`]);
    expect(byOne.slice(2).map((run) => run.key)).toEqual([`${NS}/a`]);
    // one's last reconcile started at 2 000 and was stopped at 2 100: it ended 50 ms later.
    expect(byOne.at(-1)).toMatchObject({ start: 2_000, end: 2_150 });
    expect(byTwo.map((run) => run.key).sort()).toEqual([`${NS}/a`, `${NS}/b`]);
    // No reconcile of two started before every reconcile of one had ended.
    expect(Math.min(...byTwo.map((run) => run.start))).toBeGreaterThanOrEqual(Math.max(...byOne.map((run) => run.end!)));
    expect(cluster.informersMade.sort()).toEqual(['configmaps@?', 'widgets@?']);
  });

  it('a leader stopped while a finalizer’s apply runs reports stopped, and releases the Lease, only once apply’s Promise has settled', async () => {
    cluster.store.create(widgets, { metadata: { name: 'a', namespace: NS }, spec: { size: 1 } });
    const client = storeLeaseClient(cluster.store, { scheduler: cluster.time, latency: 5 });
    let release: () => void = () => undefined;
    let appliedAt: number | undefined;
    // The first apply, after the finalizer's addition, holds until the spec lets it go.
    const reconciler = finalizer<Widget>('example.com/registry', {
      apply: () => {
        appliedAt = cluster.time.now();
        return new Promise<undefined>((resolve) => (release = () => resolve(undefined)));
      },
      cleanup: () => undefined,
    });
    const widgetController = controller({ factory: cluster.factory, client: cluster.client }, widgets);
    const stop = new AbortController();
    const ends: string[] = [];
    replicas.push(
      leaderElectionFrom(client, { namespace: NS, name: 'widgets', identity: 'one', scheduler: cluster.time, logger: silentLogger, random: () => 0.5, ...TIMINGS })
        .pipe(whileLeader(({ signal }) => widgetController.run(reconciler, { scheduler: cluster.time, logger: silentLogger, signal }), { scheduler: cluster.time, logger: silentLogger, signal: stop.signal }))
        .subscribe((event) => {
          if (event.type === 'stopped') ends.push(`${cluster.time.now()} stopped settled=${event.settled}`);
        }),
    );
    await cluster.runTo(1_000);
    expect(appliedAt).toBeDefined();
    stop.abort();
    // Well within the settleTimeout (10 s): the leader waits for apply, renewing the Lease.
    await cluster.runTo(5_000);
    expect(ends).toEqual([]);
    expect(cluster.store.get(leases, NS, 'widgets')?.spec?.holderIdentity).toBe('one');
    release();
    await settlePromises();
    expect(ends).toEqual(['5000 stopped settled=true']);
    // The release itself reaches the store a write's latency later.
    await cluster.advance(100);
    expect(cluster.store.get(leases, NS, 'widgets')?.spec?.holderIdentity).toBe('');
  });
});
