import { silentLogger } from '../../lib/base/logger';
import { interval, map, Observable, type Subscription } from 'rxjs';
import { performance } from 'node:perf_hooks';
import { kubeLeaseClient, type LeaseClient } from '../../lib/leaderElection/leaseClient';
import { leaderElection, leaderElectionFrom, type LeaderState } from '../../lib/leaderElection/leaderElection';
import { leases } from '../../lib/resources/builtins';
import { NetworkError } from '../../lib/base/errors';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { eventually } from '../support/eventually';
import { whileLeader } from '../../lib/leaderElection/whileLeader';
import { reconcile } from '../../lib/workqueue/reconcile';

/**
 * Two candidates over HTTP against the loopback API server, in real time with short timings
 * (lease 2 s, renew deadline 1.5 s, retry 200 ms) so that each scenario takes a few seconds.
 */
const TIMINGS = { leaseDuration: 2_000, renewDeadline: 1_500, retryPeriod: 200 };
const LEASE = { namespace: 'default', name: 'e2e-controller' };

/** A candidate whose states are recorded, and whose HTTP client can be cut off. */
class Candidate {
  readonly states: LeaderState[] = [];
  /** When each state arrived (Date.now()). */
  readonly times: number[] = [];
  cutOff = false;
  private readonly subscription: Subscription;

  constructor(server: ApiServer, readonly id: string) {
    const http = kubeLeaseClient(server.kubeConfig);
    const guard = <T>(request: () => Observable<T>): Observable<T> =>
      new Observable<T>((subscriber) => (this.cutOff ? subscriber.error(new NetworkError('cut off', 'ECONNREFUSED')) : request().subscribe(subscriber)));
    const client: LeaseClient = {
      get: (namespace, name) => guard(() => http.get(namespace, name)),
      create: (lease) => guard(() => http.create(lease)),
      update: (lease) => guard(() => http.update(lease)),
    };
    // Cuts and failed releases are the point here: states are checked, not log lines.
    this.subscription = leaderElectionFrom(client, { ...LEASE, ...TIMINGS, identity: id, logger: silentLogger }).subscribe((state) => {
      this.states.push(state);
      this.times.push(Date.now());
    });
  }

  get leading(): boolean {
    return this.states.at(-1)?.state === 'leading';
  }

  stop(): void {
    this.subscription.unsubscribe();
  }
}

describe('leaderElection over HTTP against the loopback server', () => {
  let server: ApiServer;
  let candidates: Candidate[];
  beforeEach(async () => {
    server = await startApiServer();
    candidates = [];
  });
  afterEach(async () => {
    candidates.forEach((candidate) => candidate.stop());
    await server.close();
  });

  const holder = (): string | undefined => server.store.get(leases, LEASE.namespace, LEASE.name)?.spec?.holderIdentity;

  it('elects one of two candidates, and hands over to the other at once when the leader stops', async () => {
    const [a, b] = (candidates = [new Candidate(server, 'a'), new Candidate(server, 'b')]);
    await eventually(() => expect([a!.states.at(-1)?.state, b!.states.at(-1)?.state]).toContain('leading'));
    const [leader, follower] = a!.leading ? [a!, b!] : [b!, a!];
    await eventually(() => expect(follower.states).toContainEqual(expect.objectContaining({ state: 'following', holder: leader.id })));
    expect(holder()).toBe(leader.id);
    expect(follower.leading).toBe(false);

    const stoppedAt = Date.now();
    leader.stop();
    await eventually(() => expect(follower.states.at(-1)?.state).toBe('leading'));
    // Released: the follower took over at its next try, not a lease duration later.
    expect(Date.now() - stoppedAt).toBeLessThan(TIMINGS.leaseDuration);
    expect(server.store.get(leases, LEASE.namespace, LEASE.name)?.spec).toMatchObject({ holderIdentity: follower.id, leaseTransitions: 1 });
  });

  it('a leader cut off from the API server stops leading, and only then does the other take over', async () => {
    const [a, b] = (candidates = [new Candidate(server, 'a'), new Candidate(server, 'b')]);
    await eventually(() => expect([a!.states.at(-1)?.state, b!.states.at(-1)?.state]).toContain('leading'));
    const [leader, follower] = a!.leading ? [a!, b!] : [b!, a!];
    leader.cutOff = true;
    await eventually(() => expect(follower.states.at(-1)?.state).toBe('leading'));
    const lost = leader.states.findIndex((s) => s.state === 'lost');
    expect(lost).toBeGreaterThan(0);
    expect(leader.leading).toBe(false);
    const tookOver = follower.states.findIndex((s) => s.state === 'leading');
    expect(leader.times[lost]).toBeLessThan(follower.times[tookOver]!);
    expect(holder()).toBe(follower.id);
  });

  it('uses the KubeConfig’s server and credentials through leaderElection()', async () => {
    const states: LeaderState[] = [];
    const subscription = leaderElection(server.kubeConfig, { ...LEASE, ...TIMINGS, identity: 'solo', logger: silentLogger }).subscribe((state) => states.push(state));
    try {
      await eventually(() => expect(states).toContainEqual(expect.objectContaining({ state: 'leading' })));
      expect(holder()).toBe('solo');
      expect(server.requests.entries.filter((r) => r.resource === 'leases').map((r) => `${r.method} ${r.status}`).slice(0, 2)).toEqual(['GET 404', 'POST 201']);
    } finally {
      subscription.unsubscribe();
    }
    await eventually(() => expect(holder()).toBe(''));
  });
});

/**
 * Two controllers over HTTP, each `leaderElection` piped through `whileLeader` into a `reconcile`
 * queue given its term's signal. Every reconcile takes 300–600 ms and stops 50 ms after its signal
 * aborts, like one awaiting a request it passes the signal to. Each run is timed with the
 * monotonic clock; any two runs of different replicas that intersect are an overlap.
 */
describe('controllers handing over over HTTP', () => {
  let server: ApiServer;
  const controllers: Controller[] = [];
  beforeEach(async () => {
    server = await startApiServer();
  });
  afterEach(async () => {
    controllers.splice(0).forEach((controller) => controller.stop());
    await server.close();
  });

  interface Run {
    readonly start: number;
    end: number | undefined;
  }

  /** Leader election and a reconcile queue, as in docs/guides/leader-election.md; `cutOff` fails its Lease requests. */
  class Controller {
    readonly runs: Run[] = [];
    readonly events: string[] = [];
    cutOff = false;
    private readonly subscription: Subscription;

    constructor(
      readonly id: string,
      timings: typeof TIMINGS,
    ) {
      const http = kubeLeaseClient(server.kubeConfig);
      const guard = <T>(request: () => Observable<T>): Observable<T> =>
        new Observable<T>((subscriber) => (this.cutOff ? subscriber.error(new NetworkError('cut off', 'ECONNREFUSED')) : request().subscribe(subscriber)));
      const client: LeaseClient = {
        get: (namespace, name) => guard(() => http.get(namespace, name)),
        create: (lease) => guard(() => http.create(lease)),
        update: (lease) => guard(() => http.update(lease)),
      };
      const keys$ = interval(40).pipe(map((i) => `key-${i % 3}`));
      const slowReconcile = (_key: string, { signal }: { readonly signal: AbortSignal }): Promise<void> => {
        const run: Run = { start: performance.now(), end: undefined };
        this.runs.push(run);
        return new Promise<void>((resolve) => {
          const done = (): void => {
            run.end ??= performance.now();
            resolve();
          };
          const timer = setTimeout(done, 300 + Math.random() * 300);
          signal.addEventListener('abort', () => {
            clearTimeout(timer);
            setTimeout(done, 50);
          });
        });
      };
      this.subscription = leaderElectionFrom(client, { ...LEASE, ...timings, identity: id, logger: silentLogger })
        .pipe(whileLeader(({ signal }) => keys$.pipe(reconcile(slowReconcile, { concurrency: 2, signal })), { logger: silentLogger }))
        .subscribe((event) => {
          if (event.type !== 'work') this.events.push(event.type);
        });
    }

    get leading(): boolean {
      return this.events.at(-1) === 'leading';
    }

    get running(): number {
      return this.runs.filter((run) => run.end === undefined).length;
    }

    stop(): void {
      this.subscription.unsubscribe();
    }
  }

  /** Total time (ms) during which a run of one controller and a run of the other were both running. */
  function overlapMs(a: Controller, b: Controller): number {
    let total = 0;
    for (const x of a.runs) {
      for (const y of b.runs) {
        const from = Math.max(x.start, y.start);
        const to = Math.min(x.end ?? Infinity, y.end ?? Infinity);
        if (to > from) total += to - from;
      }
    }
    return total;
  }

  it('a leader stopped during its reconciles releases the Lease once they have settled: no overlap, and the other starts within its next tries', async () => {
    const [a, b] = [new Controller('a', TIMINGS), new Controller('b', TIMINGS)];
    controllers.push(a, b);
    await eventually(() => expect(a.leading || b.leading).toBe(true));
    const [leader, follower] = a.leading ? [a, b] : [b, a];
    await eventually(() => expect(leader.running).toBeGreaterThan(0));
    const stoppedAt = performance.now();
    leader.stop();
    await eventually(() => expect(follower.runs.length).toBeGreaterThan(2));
    const leaderLast = Math.max(...leader.runs.map((run) => run.end ?? Infinity));
    const followerFirst = Math.min(...follower.runs.map((run) => run.start));
    expect(leaderLast).toBeGreaterThan(stoppedAt);
    expect(overlapMs(leader, follower)).toBe(0);
    // Released after the last reconcile settled (50 ms after the stop), taken at the follower's next try.
    expect(followerFirst - leaderLast).toBeGreaterThanOrEqual(0);
    expect(followerFirst - stoppedAt).toBeLessThan(TIMINGS.leaseDuration);
  });

  it('a leader cut off from the API server tells its reconciles to stop when it loses the Lease; the other starts after they have: no overlap', async () => {
    // A wider margin than the others' (lease 3 s − deadline 1.5 s − retry 0.2 s = 1.3 s), for timers on a busy machine.
    const timings = { leaseDuration: 3_000, renewDeadline: 1_500, retryPeriod: 200 };
    const [a, b] = [new Controller('a', timings), new Controller('b', timings)];
    controllers.push(a, b);
    await eventually(() => expect(a.leading || b.leading).toBe(true));
    const [leader, follower] = a.leading ? [a, b] : [b, a];
    await eventually(() => expect(leader.running).toBeGreaterThan(0));
    leader.cutOff = true;
    await eventually(() => expect(follower.runs.length).toBeGreaterThan(2));
    expect(leader.events).toContain('lost');
    expect(leader.running).toBe(0);
    expect(overlapMs(leader, follower)).toBe(0);
  });
});
