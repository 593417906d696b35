import { finalize, NEVER, Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { LeaderState } from '../../lib/leaderElection/leaderElection';
import { leaderElectionFrom } from '../../lib/leaderElection/leaderElection';
import { whileLeader } from '../../lib/leaderElection/whileLeader';
import { createClusterStore, storeLeaseClient } from '../../apiserver/src';
import { VirtualAction, VirtualTimeScheduler } from 'rxjs';

const states: Record<string, LeaderState> = {
  F: { state: 'following', holder: 'other' },
  L: { state: 'leading', since: 0, transitions: 1 },
  x: { state: 'lost', reason: 'renew-deadline', error: undefined },
};

function newScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

describe('whileLeader', () => {
  it('runs the work only while leading, subscribing afresh at each term (its marble diagram)', () => {
    newScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const leader$ = hot('-F--L-----x-F-L-------', states);
      const work$ = cold('-a--b--c');
      expectObservable(leader$.pipe(whileLeader(work$))).toBe('-F--La--b-x-F-La--b--c', { ...states, a: 'a', b: 'b', c: 'c' });
      expectSubscriptions(work$.subscriptions).toBe(['----^-----!', '--------------^']);
    });
  });

  it('passes lost on before it tears the work down', () => {
    newScheduler().run(({ hot, flush }) => {
      const log: string[] = [];
      const work$ = NEVER.pipe(finalize(() => log.push('work finalized')));
      hot('-L-x', states)
        .pipe(whileLeader(work$))
        .subscribe((value) => log.push(`got ${(value as LeaderState).state}`));
      flush();
      expect(log).toEqual(['got leading', 'got lost', 'work finalized']);
    });
  });

  it('on unsubscribe finalizes the work before it lets go of the election', () => {
    newScheduler().run(({ flush }) => {
      const log: string[] = [];
      const leader$ = new Observable<LeaderState>((subscriber) => {
        subscriber.next(states.L!);
        return () => log.push('election released');
      });
      const subscription = leader$.pipe(whileLeader(NEVER.pipe(finalize(() => log.push('work finalized'))))).subscribe();
      flush();
      subscription.unsubscribe();
      expect(log).toEqual(['work finalized', 'election released']);
    });
  });

  it('completes (releasing the election) when the work completes, and errors when it errors', () => {
    newScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const leader$ = hot('-L-----', states);
      expectObservable(leader$.pipe(whileLeader(cold('--a|')))).toBe('-L-a|', { ...states, a: 'a' });
      expectSubscriptions(leader$.subscriptions).toBe(['^---!']);
      expectObservable(hot('-L-----', states).pipe(whileLeader(cold('--#')))).toBe('-L-#', states);
    });
  });

  it('unsubscribes both the election and the work when the subscriber leaves, and each when the other fails', () => {
    const failure = new Error('failure');
    newScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const leader$ = hot('-L------', states);
      const work$ = cold('--a-----');
      expectObservable(leader$.pipe(whileLeader(work$)), '^----!').toBe('-L-a', { ...states, a: 'a' });
      expectSubscriptions(leader$.subscriptions).toBe('^----!');
      expectSubscriptions(work$.subscriptions).toBe('-^---!');

      const failingElection$ = hot('-L--#', states, failure);
      const workOfFailingElection$ = cold('--a-----');
      expectObservable(failingElection$.pipe(whileLeader(workOfFailingElection$))).toBe('-L-a#', { ...states, a: 'a' }, failure);
      expectSubscriptions(failingElection$.subscriptions).toBe('^---!');
      expectSubscriptions(workOfFailingElection$.subscriptions).toBe('-^--!');

      const election$ = hot('-L------', states);
      const failingWork$ = cold('--#', undefined, failure);
      expectObservable(election$.pipe(whileLeader(failingWork$))).toBe('-L-#', states, failure);
      expectSubscriptions(election$.subscriptions).toBe('^--!');
      expectSubscriptions(failingWork$.subscriptions).toBe('-^-!');
    });
  });

  it('with a real election: the release reaches the Lease only after the work has finalized', () => {
    const time = new VirtualTimeScheduler(VirtualAction, Infinity);
    const store = createClusterStore();
    const log: string[] = [];
    const client = storeLeaseClient(store, {
      scheduler: time,
      latency: 10,
      fault: (request) => void log.push(`${time.now()} ${request.verb}`),
    });
    const subscription = leaderElectionFrom(client, { namespace: 'default', name: 'lock', identity: 'a', scheduler: time })
      .pipe(whileLeader(NEVER.pipe(finalize(() => log.push(`${time.now()} work finalized`)))))
      .subscribe();
    time.maxFrames = 3_000;
    time.flush();
    time.frame = 3_000;
    subscription.unsubscribe();
    time.maxFrames = 4_000;
    time.flush();
    expect(log.slice(-3)).toEqual(['3000 work finalized', '3000 get', '3010 update']);
  });
});
