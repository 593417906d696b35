import { silentLogger } from '../../lib/base/logger';
import { Observable, type Subscription } from 'rxjs';
import { kubeLeaseClient, type LeaseClient } from '../../lib/leaderElection/leaseClient';
import { leaderElection, leaderElectionFrom, type LeaderState } from '../../lib/leaderElection/leaderElection';
import { leases } from '../../lib/resources/builtins';
import { NetworkError } from '../../lib/base/errors';
import { startApiServer, type ApiServer } from '../../lib/testing';
import { eventually } from '../support/eventually';

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
