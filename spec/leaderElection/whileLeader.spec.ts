import { finalize, NEVER, Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { LeaderState } from '../../lib/leaderElection/leaderElection';
import { leaderElectionFrom } from '../../lib/leaderElection/leaderElection';
import { whileLeader, type WhileLeaderEvent } from '../../lib/leaderElection/whileLeader';
import { createClusterStore, storeLeaseClient } from '../../lib/testing';
import { VirtualAction, VirtualTimeScheduler } from 'rxjs';

const states: Record<string, LeaderState> = {
  F: { state: 'following', holder: 'other' },
  L: { state: 'leading', since: 0, transitions: 1 },
  x: { state: 'lost', reason: 'renew-deadline', error: undefined },
};

/** What whileLeader emits for each leader state: the same fields, `type` in place of `state`. */
const events: Record<string, WhileLeaderEvent<string>> = {
  F: { type: 'following', holder: 'other' },
  L: { type: 'leading', since: 0, transitions: 1 },
  x: { type: 'lost', reason: 'renew-deadline', error: undefined },
  a: { type: 'work', value: 'a' },
  b: { type: 'work', value: 'b' },
  c: { type: 'work', value: 'c' },
  w: { type: 'stopped', reason: 'work-completed', settled: true },
  e: { type: 'stopped', reason: 'election-completed', settled: true },
  s: { type: 'stopped', reason: 'signal', settled: true },
};

function newScheduler(): TestScheduler {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

/** A reader of the output with one switch over `type`: it compiles only if the union has one discriminant and these members. */
function describeEvent(event: WhileLeaderEvent<string>): string {
  switch (event.type) {
    case 'following':
      return `following ${event.holder ?? '-'}`;
    case 'leading':
      return `leading since ${event.since}`;
    case 'lost':
      return `lost ${event.reason}`;
    case 'work':
      return `work ${event.value}`;
    case 'stopped':
      return `stopped ${event.reason}`;
  }
}

describe('whileLeader', () => {
  it('runs the work only while leading, subscribing afresh at each term (its marble diagram)', () => {
    newScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const leader$ = hot('-F--L-----x-F-L-------', states);
      const work$ = cold('-a--b--c');
      expectObservable(leader$.pipe(whileLeader(work$))).toBe('-F--La--b-x-F-La--b--c', events);
      expectSubscriptions(work$.subscriptions).toBe(['----^-----!', '--------------^']);
    });
  });

  it('emits one union with one discriminant, type: the leader states with their fields, the work’s values, stopped', () => {
    newScheduler().run(({ hot, cold, expectObservable }) => {
      const output = hot('-F-L-x-L', states).pipe(whileLeader(cold('-a-')));
      expectObservable(output).toBe('-F-Lax-La', events);
    });
    const seen: string[] = [];
    newScheduler().run(({ hot, cold, flush }) => {
      hot('-F-L--', states)
        .pipe(whileLeader(cold<string>('-a|')))
        .subscribe((event) => seen.push(describeEvent(event)));
      flush();
    });
    expect(seen).toEqual(['following other', 'leading since 0', 'work a', 'stopped work-completed']);
  });

  it('passes lost on before it tears the work down', () => {
    newScheduler().run(({ hot, flush }) => {
      const log: string[] = [];
      const work$ = NEVER.pipe(finalize(() => log.push('work finalized')));
      hot('-L-x', states)
        .pipe(whileLeader(work$))
        .subscribe((event) => log.push(`got ${event.type}`));
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

  it('ends with stopped when the work completes (releasing the election) and when the election completes; errors when either errors', () => {
    newScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const leader$ = hot('-L-----', states);
      expectObservable(leader$.pipe(whileLeader(cold('--a|')))).toBe('-L-a(w|)', events);
      expectSubscriptions(leader$.subscriptions).toBe(['^---!']);
      expectObservable(hot('-L-----', states).pipe(whileLeader(cold('--#')))).toBe('-L-#', events);

      const ending$ = hot('-L--|', states);
      const work$ = cold('-a------');
      expectObservable(ending$.pipe(whileLeader(work$))).toBe('-La-(e|)', events);
      expectSubscriptions(work$.subscriptions).toBe('-^--!');
    });
  });

  it('stops when its signal aborts: the work is torn down, then the election, and the output ends with stopped', () => {
    newScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const stop = new AbortController();
      const leader$ = hot('-L------', states);
      const work$ = cold('-a------');
      hot('----s').subscribe(() => stop.abort());
      expectObservable(leader$.pipe(whileLeader(work$, { signal: stop.signal }))).toBe('-La-(s|)', events);
      expectSubscriptions(work$.subscriptions).toBe('-^--!');
      expectSubscriptions(leader$.subscriptions).toBe('^---!');
    });
    newScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const stopped = new AbortController();
      stopped.abort();
      const leader$ = hot('-L--', states);
      // Already aborted: it ends at once, without campaigning.
      expectObservable(leader$.pipe(whileLeader(NEVER, { signal: stopped.signal }))).toBe('(s|)', events);
      expectSubscriptions(leader$.subscriptions).toBe([]);
    });
  });

  it('unsubscribes both the election and the work when the subscriber leaves, and each when the other fails', () => {
    const failure = new Error('failure');
    newScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const leader$ = hot('-L------', states);
      const work$ = cold('--a-----');
      expectObservable(leader$.pipe(whileLeader(work$)), '^----!').toBe('-L-a', events);
      expectSubscriptions(leader$.subscriptions).toBe('^----!');
      expectSubscriptions(work$.subscriptions).toBe('-^---!');

      const failingElection$ = hot('-L--#', states, failure);
      const workOfFailingElection$ = cold('--a-----');
      expectObservable(failingElection$.pipe(whileLeader(workOfFailingElection$))).toBe('-L-a#', events, failure);
      expectSubscriptions(failingElection$.subscriptions).toBe('^---!');
      expectSubscriptions(workOfFailingElection$.subscriptions).toBe('-^--!');

      const election$ = hot('-L------', states);
      const failingWork$ = cold('--#', undefined, failure);
      expectObservable(election$.pipe(whileLeader(failingWork$))).toBe('-L-#', events, failure);
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
