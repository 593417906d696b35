import { finalize, fromEvent, NEVER, Observable, Subject, takeUntil, type SchedulerLike } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { LeaderState } from '../../lib/leaderElection/leaderElection';
import { silentLogger } from '../../lib/base/logger';
import { leaderElectionFrom } from '../../lib/leaderElection/leaderElection';
import { whileLeader, type WhileLeaderEvent } from '../../lib/leaderElection/whileLeader';
import { createClusterStore, storeLeaseClient } from '../../apiserver/src';
import { leases } from '../../lib/resources/builtins';
import type { Logger } from '../../lib/base/logger';
import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { at, runTo } from '../support/virtualClock';

const states: Record<string, LeaderState> = {
  F: { state: 'following', holder: 'other' },
  L: { state: 'leading', since: 0, transitions: 1 },
  x: { state: 'lost', reason: 'renew-deadline', error: undefined, stopWithin: 3_000 },
};

/** What whileLeader emits for each leader state: the same fields, `type` in place of `state`. */
const events: Record<string, WhileLeaderEvent<string>> = {
  F: { type: 'following', holder: 'other' },
  L: { type: 'leading', since: 0, transitions: 1 },
  x: { type: 'lost', reason: 'renew-deadline', error: undefined, stopWithin: 3_000 },
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
    // The same, given a function of the term whose work completes when the term's signal aborts.
    newScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const leader$ = hot('-F--L-----x-F-L-------', states);
      const work$ = cold('-a--b--c');
      const work = ({ signal }: { readonly signal: AbortSignal }) => work$.pipe(takeUntil(fromEvent(signal, 'abort')));
      expectObservable(leader$.pipe(whileLeader(work))).toBe('-F--La--b-x-F-La--b--c', events);
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

  describe('given work that is told when its term ends (a function of the term)', () => {
    /** A hand-made leader$ in virtual time, work that stops `stopsIn` ms after its term's signal aborts, and a log of both. */
    function setUp(options: { readonly stopsIn?: number; readonly settleTimeout?: number } = {}) {
      const time = new VirtualTimeScheduler(VirtualAction, Infinity);
      const leader$ = new Subject<LeaderState>();
      const log: string[] = [];
      const errors: string[] = [];
      const logger: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: (_fields, message) => void errors.push(`${time.now()} ${message}`) };
      let terms = 0;
      const work = ({ signal }: { readonly signal: AbortSignal }): Observable<string> =>
        new Observable<string>((subscriber) => {
          const term = ++terms;
          let completed = false;
          log.push(`${time.now()} term ${term} starts`);
          subscriber.next(`term ${term}`);
          signal.addEventListener('abort', () => {
            log.push(`${time.now()} term ${term} told to stop`);
            if (options.stopsIn !== undefined) time.schedule(() => (log.push(`${time.now()} term ${term} stopped`), (completed = true), subscriber.complete()), options.stopsIn);
          });
          return () => void (completed || log.push(`${time.now()} term ${term} unsubscribed`));
        });
      const election$ = new Observable<LeaderState>((subscriber) => {
        const subscription = leader$.subscribe(subscriber);
        return () => (subscription.unsubscribe(), log.push(`${time.now()} election let go`));
      });
      const events: string[] = [];
      const stop = new AbortController();
      const subscription = election$.pipe(whileLeader(work, { scheduler: time as SchedulerLike, logger, signal: stop.signal, settleTimeout: options.settleTimeout ?? 10_000 })).subscribe({
        next: (event) => events.push(`${time.now()} ${describeEvent(event as WhileLeaderEvent<string>)}${event.type === 'stopped' ? ` settled=${event.settled}` : ''}`),
        complete: () => events.push(`${time.now()} complete`),
      });
      return { time, leader$, log, errors, events, stop, subscription, at: (t: number, action: () => void) => at(time, t, action), runTo: (t: number) => runTo(time, t) };
    }

    it('on lost, aborts the term’s signal and awaits the work: a new term starts only once the old one has completed', () => {
      const { leader$, log, events, at, runTo } = setUp({ stopsIn: 500 });
      at(0, () => leader$.next(states.L!));
      at(1_000, () => leader$.next(states.x!));
      at(1_100, () => leader$.next(states.L!));
      runTo(5_000);
      expect(log).toEqual(['0 term 1 starts', '1000 term 1 told to stop', '1500 term 1 stopped', '1500 term 2 starts']);
      expect(events).toEqual(['0 leading since 0', '0 work term 1', '1000 lost renew-deadline', '1100 leading since 0', '1500 work term 2']);
    });

    it('on unsubscribe, keeps the election (so the Lease is renewed, not released) until the work has completed, then lets it go', () => {
      const { leader$, log, subscription, at, runTo } = setUp({ stopsIn: 700 });
      at(0, () => leader$.next(states.L!));
      at(1_000, () => subscription.unsubscribe());
      runTo(5_000);
      expect(log).toEqual(['0 term 1 starts', '1000 term 1 told to stop', '1700 term 1 stopped', '1700 election let go']);
    });

    it('when its signal aborts, ends with stopped once the work has completed and the election is let go', () => {
      const { leader$, log, events, stop, at, runTo } = setUp({ stopsIn: 700 });
      at(0, () => leader$.next(states.L!));
      at(1_000, () => stop.abort());
      runTo(5_000);
      expect(log.slice(-2)).toEqual(['1700 term 1 stopped', '1700 election let go']);
      expect(events.slice(-2)).toEqual(['1700 stopped signal settled=true', '1700 complete']);
    });

    it('past settleTimeout on a stop, unsubscribes the work, logs an error and still lets the election go: stopped says it did not settle', () => {
      const { leader$, log, events, errors, stop, at, runTo } = setUp({ settleTimeout: 2_000 });
      at(0, () => leader$.next(states.L!));
      at(1_000, () => stop.abort());
      runTo(10_000);
      expect(log).toEqual(['0 term 1 starts', '1000 term 1 told to stop', '3000 term 1 unsubscribed', '3000 election let go']);
      expect(events.slice(-2)).toEqual(['3000 stopped signal settled=false', '3000 complete']);
      expect(errors).toEqual([expect.stringMatching(/^3000 .*did not stop within settleTimeout/)]);
    });

    it('after lost, awaits the work only as long as no other candidate can lead (stopWithin): past it, unsubscribes it and logs an error', () => {
      const { leader$, log, errors, at, runTo } = setUp();
      at(0, () => leader$.next(states.L!));
      at(1_000, () => leader$.next(states.x!));
      runTo(10_000);
      expect(log).toEqual(['0 term 1 starts', '1000 term 1 told to stop', '4000 term 1 unsubscribed']);
      expect(errors).toEqual([expect.stringMatching(/^4000 .*another candidate may lead/)]);
    });

    it('when lost arrives while a stop waits for the work, waits no longer than stopWithin', () => {
      const { leader$, log, subscription, at, runTo } = setUp({ settleTimeout: 10_000 });
      at(0, () => leader$.next(states.L!));
      at(1_000, () => subscription.unsubscribe());
      at(2_000, () => leader$.next(states.x!));
      runTo(20_000);
      expect(log).toEqual(['0 term 1 starts', '1000 term 1 told to stop', '5000 term 1 unsubscribed', '5000 election let go']);
    });

    it('fails when the work function throws, letting the election go', () => {
      const failure = new Error('cannot start');
      newScheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
        const leader$ = hot('-F-L--', states);
        const work = (): Observable<string> => {
          throw failure;
        };
        expectObservable(leader$.pipe(whileLeader(work))).toBe('-F-(L#)', events, failure);
        expectSubscriptions(leader$.subscriptions).toBe('^--!');
      });
    });

    it('with a real election: a stop whose work does not settle leaves the Lease to expire instead of releasing it', () => {
      const time = new VirtualTimeScheduler(VirtualAction, Infinity);
      const store = createClusterStore();
      const requests: string[] = [];
      const client = storeLeaseClient(store, { scheduler: time, latency: 10, fault: (request) => void requests.push(`${time.now()} ${request.verb}`) });
      const stubborn = (): Observable<never> => NEVER;
      const subscription = leaderElectionFrom(client, { namespace: 'default', name: 'lock', identity: 'a', scheduler: time, logger: silentLogger })
        .pipe(whileLeader(stubborn, { scheduler: time, settleTimeout: 2_000, logger: silentLogger }))
        .subscribe();
      time.maxFrames = 3_000;
      time.flush();
      time.frame = 3_000;
      subscription.unsubscribe();
      time.maxFrames = 60_000;
      time.flush();
      // Renewed while it waited, then nothing: no release (which reads the Lease, then writes it).
      expect(requests.filter((line) => Number(line.split(' ')[0]) >= 3_000)).toEqual(['4030 update']);
      expect(store.get(leases, 'default', 'lock')?.spec?.holderIdentity).toBe('a');
    });

    it('with a real election: the release comes after the work has completed', () => {
      const time = new VirtualTimeScheduler(VirtualAction, Infinity);
      const store = createClusterStore();
      const log: string[] = [];
      const client = storeLeaseClient(store, { scheduler: time, latency: 10, fault: (request) => void log.push(`${time.now()} ${request.verb}`) });
      const work = ({ signal }: { readonly signal: AbortSignal }): Observable<never> =>
        new Observable<never>((subscriber) => signal.addEventListener('abort', () => time.schedule(() => (log.push(`${time.now()} work completed`), subscriber.complete()), 2_500)));
      const subscription = leaderElectionFrom(client, { namespace: 'default', name: 'lock', identity: 'a', scheduler: time }).pipe(whileLeader(work, { scheduler: time })).subscribe();
      time.maxFrames = 3_000;
      time.flush();
      time.frame = 3_000;
      subscription.unsubscribe();
      time.maxFrames = 10_000;
      time.flush();
      // Renewed while the work settled, released once it had.
      expect(log.filter((line) => Number(line.split(' ')[0]) >= 3_000)).toEqual(['4030 update', '5500 work completed', '5500 get', '5510 update']);
      expect(store.get(leases, 'default', 'lock')?.spec?.holderIdentity).toBe('');
    });
  });
});
