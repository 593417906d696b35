import { defaultBackoffConfig } from '../../lib/reflector/backoff';
import { healthReport, reportTransition, requestStopped, stoppedHealth } from '../../lib/reflector/reflectorReports';
import type { ReportRecord } from '../../lib/reflector/reflectorReports';
import type { ReflectorReport } from '../../lib/reflector/reflectorEvent';
import { initialContext, step } from '../../lib/reflector/reflectorState';
import type { ReflectorContext, ReflectorInput, ReflectorRequest, ReflectorState } from '../../lib/reflector/reflectorState';
import type { RequestOpened } from '../../lib/reflector/requestEvent';
import { NetworkError } from '../../lib/base/errors';
import { connectionRefused, expired } from './reflectHarness';

/** random 0: every backoff wait is its base delay (800 ms at first). */
const env = { now: 5000, random: () => 0, backoff: defaultBackoffConfig };
const refused = connectionRefused();
const gone = expired();
const synced: ReflectorContext = { ...initialContext(false), resourceVersion: '10' };
const failing: ReflectorContext = { ...synced, failures: 1, lastError: refused };
const streaming: ReflectorContext = { ...initialContext(true), resourceVersion: '10' };

const list = (resourceVersion: string): ReflectorRequest => ({ kind: 'list', resourceVersion, paged: true, immediateRetry: false });
const opened = (request: ReflectorRequest, at = 1000): RequestOpened => ({
  type: 'opened',
  request: { kind: request.kind, resourceVersion: request.resourceVersion },
  relist: false,
  after: undefined,
  continued: false,
  at,
});
const listing: ReflectorState = { name: 'listing', request: { kind: 'list', resourceVersion: '0', paged: true, immediateRetry: false }, paginated: false };
const watching: ReflectorState = { name: 'watching', request: { kind: 'watch', resourceVersion: '10' } };
const streamingList: ReflectorState = { name: 'streamingList', request: { kind: 'streamingList', resourceVersion: '' } };
const backingOff: ReflectorState = { name: 'backingOff', next: list('15'), delayMs: 800 };

/** A report in a line: what a reader of the table needs to see. */
function oneLine(report: ReflectorReport): string {
  switch (report.type) {
    case 'health': {
      const h = report.health;
      const extras = [h.retryInMs === undefined ? '' : `retryIn=${h.retryInMs}`, h.listedItems === undefined ? '' : `listed=${h.listedItems}`, h.lastError ? `error=${h.lastError.constructor.name}` : ''];
      return [`health ${h.phase} since=${h.since} attempt=${h.attempt} rv=${h.resourceVersion}`, ...extras.filter(Boolean)].join(' ');
    }
    case 'opened': {
      const extras = [report.relist ? 'relist' : '', report.after ? `after=${report.after.constructor.name}` : '', report.continued ? 'continued' : ''];
      return [`opened ${report.request.kind}@${report.request.resourceVersion} at=${report.at}`, ...extras.filter(Boolean)].join(' ');
    }
    case 'ended': {
      const extras = [report.closed ? 'closed' : '', report.error ? `error=${report.error.constructor.name}` : ''];
      return [`ended ${report.request.kind} ${report.outcome} items=${report.items} ${report.startedAt}..${report.at}`, ...extras.filter(Boolean)].join(' ');
    }
  }
}

type Row = [label: string, state: ReflectorState, context: ReflectorContext, request: ReflectorRequest | undefined, input: ReflectorInput, reports: string[]];

describe('reportTransition', () => {
  // label, state and context before, request in flight (opened at 1000, 7 items so far), input → reports
  // (at 5000, the last resourceVersion observed 12; a list request opens from the context's)
  it.each<Row>([
    ['the start', { name: 'idle' }, initialContext(false), undefined, { type: 'start' }, ['health listing since=5000 attempt=0 rv= listed=0', 'opened list@0 at=5000']],
    ['a list page but the last', listing, initialContext(false), list('0'), { type: 'listPage' }, []],
    [
      'the last list page',
      listing,
      initialContext(false),
      list('0'),
      { type: 'listed', resourceVersion: '10' },
      ['ended list completed items=7 1000..5000', 'health watching since=5000 attempt=0 rv=10', 'opened watch@10 at=5000'],
    ],
    [
      'a watch closed after events',
      watching,
      synced,
      watching.request,
      { type: 'closed', resourceVersion: '12', events: 7, durationMs: 4000 },
      ['ended watch completed items=7 1000..5000 closed', 'health watching since=5000 attempt=0 rv=12', 'opened watch@12 at=5000'],
    ],
    [
      'a watch closed at once without events',
      watching,
      synced,
      watching.request,
      { type: 'closed', resourceVersion: '12', events: 0, durationMs: 0 },
      ['ended watch failed items=7 1000..5000 closed error=NetworkError', 'health backingOff since=5000 attempt=1 rv=12 retryIn=800 error=NetworkError'],
    ],
    [
      'a watch failing with a 410',
      watching,
      synced,
      watching.request,
      { type: 'failed', error: gone, resourceVersion: '12' },
      ['ended watch failed items=7 1000..5000 error=StatusError', 'health backingOff since=5000 attempt=1 rv=12 retryIn=800 error=StatusError'],
    ],
    [
      'the end of a backoff, relisting',
      backingOff,
      { ...synced, resourceVersion: '15', failures: 1, lastError: gone },
      undefined,
      { type: 'retry' },
      ['health listing since=5000 attempt=1 rv=15 listed=0 error=StatusError', 'opened list@15 at=5000 relist after=StatusError'],
    ],
    ['a watch event after failures', watching, failing, watching.request, { type: 'recovered' }, ['health watching since=1000 attempt=0 rv=12']],
    [
      'the initial-events-end bookmark',
      streamingList,
      streaming,
      streamingList.request,
      { type: 'initialEventsEnd', resourceVersion: '12' },
      ['health watching since=5000 attempt=0 rv=12', 'ended streamingList completed items=7 1000..5000', 'opened watch@12 at=5000 continued'],
    ],
    [
      'no initial-events-end bookmark in time',
      streamingList,
      streaming,
      streamingList.request,
      { type: 'initialEventsTimeout' },
      ['ended streamingList failed items=7 1000..5000', 'health listing since=5000 attempt=0 rv=10 listed=0', 'opened list@10 at=5000 relist'],
    ],
    ['the stop', watching, failing, watching.request, { type: 'stop' }, ['ended watch stopped items=7 1000..5000', 'health idle since=5000 attempt=1 rv=12 error=NetworkError']],
    ['an input that changes nothing', watching, synced, watching.request, { type: 'retry' }, []],
  ])('%s', (_label, state, context, request, input, reports) => {
    const record: ReportRecord = { since: 1000, request: request === undefined ? undefined : opened(request) };
    const transition = step(state, context, input, env);
    const reported = reportTransition({ state, context }, input, transition, record, { now: 5000, resourceVersion: '12', items: 7 });
    expect(reported.reports.map(oneLine)).toEqual(reports);
  });

  it('keeps the record through a transition that reports nothing, and replaces the request with the one it opens', () => {
    const record: ReportRecord = { since: 1000, request: opened(list('0')) };
    const page = step(listing, initialContext(false), { type: 'listPage' }, env);
    expect(reportTransition({ state: listing, context: initialContext(false) }, { type: 'listPage' }, page, record, { now: 5000, resourceVersion: '', items: 1 }).record).toBe(record);
    const listed = step(listing, initialContext(false), { type: 'listed', resourceVersion: '10' }, env);
    const after = reportTransition({ state: listing, context: initialContext(false) }, { type: 'listed', resourceVersion: '10' }, listed, record, { now: 5000, resourceVersion: '10', items: 1 });
    expect(after.record).toEqual({ since: 5000, request: after.reports.at(-1) });
  });
});

describe('healthReport', () => {
  it.each([
    ['listing, with no page yet', listing, undefined, { phase: 'listing', listedItems: 0, remainingItemCount: undefined, retryInMs: undefined }],
    ['listing, with its progress', listing, { listedItems: 500, remainingItemCount: 1500 }, { phase: 'listing', listedItems: 500, remainingItemCount: 1500 }],
    ['a streaming list, as listing', streamingList, undefined, { phase: 'listing', listedItems: 0 }],
    ['watching', watching, undefined, { phase: 'watching', listedItems: undefined, retryInMs: undefined }],
    ['backing off, with the wait', backingOff, undefined, { phase: 'backingOff', retryInMs: 800, listedItems: undefined }],
  ] as const)('shows %s', (_label, state, progress, health) => {
    expect(healthReport(state, failing, '12', 1000, progress)).toEqual({ type: 'health', health: expect.objectContaining({ ...health, attempt: 1, lastError: refused, resourceVersion: '12', since: 1000 }) });
  });
});

describe('the stop, drawn by whoever stopped the stream (rule 5)', () => {
  it.each([
    ['listing', listing, { listedItems: 3, remainingItemCount: 9 }],
    ['watching', watching, undefined],
    ['backing off', backingOff, undefined],
  ] as const)('stoppedHealth from the last report while %s is what the stop transition reports', (_label, state, progress) => {
    const last = healthReport(state, failing, '12', 1000, progress).health;
    const stop = step(state, failing, { type: 'stop' }, env);
    const reported = reportTransition({ state, context: failing }, { type: 'stop' }, stop, { since: 1000, request: undefined }, { now: 5000, resourceVersion: '12', items: 0 });
    expect(reported.reports).toEqual([{ type: 'health', health: stoppedHealth(last, 5000) }]);
  });

  it('keeps the rest of a report as it was, an informer’s counts included', () => {
    const last = { ...healthReport(watching, failing, '12', 1000).health, rejectedObjects: 2, lastRejection: undefined };
    expect(stoppedHealth(last, 5000)).toEqual({ ...last, phase: 'idle', since: 5000 });
  });

  it('requestStopped is what the stop transition reports of the request in flight', () => {
    const request = opened(watching.request);
    const stop = step(watching, synced, { type: 'stop' }, env);
    const reported = reportTransition({ state: watching, context: synced }, { type: 'stop' }, stop, { since: 1000, request }, { now: 5000, resourceVersion: '12', items: 7 });
    expect(reported.reports[0]).toEqual(requestStopped(request, 7, 5000));
    expect(requestStopped(request, 7, 5000)).toMatchObject({ outcome: 'stopped', error: undefined, closed: false, startedAt: 1000, at: 5000 });
  });

  it('names the error of a watch that closed at once, which is its own', () => {
    const transition = step(watching, synced, { type: 'closed', resourceVersion: '10', events: 0, durationMs: 0 }, env);
    const reported = reportTransition({ state: watching, context: synced }, { type: 'closed', resourceVersion: '10', events: 0, durationMs: 0 }, transition, { since: 0, request: opened(watching.request) }, { now: 5000, resourceVersion: '10', items: 0 });
    expect(reported.reports[0]).toMatchObject({ type: 'ended', error: transition.context.lastError });
    expect(transition.context.lastError).toBeInstanceOf(NetworkError);
  });
});
