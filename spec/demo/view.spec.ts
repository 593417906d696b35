import { NetworkError, StatusError, type Health } from '../../lib';
import { NO_PHASE, type NamespaceCount } from '../../demo/stats';
import {
  CLEAR_BELOW,
  CLEAR_LINE,
  countsTable,
  CURSOR_HOME,
  describeError,
  duration,
  healthLine,
  phaseColumns,
  progressBar,
  screen,
  summaryLine,
  terminalFrame,
  type ViewState,
} from '../../demo/view';

const health = (overrides: Partial<Health> = {}): Health => ({
  phase: 'watching',
  attempt: 0,
  lastError: undefined,
  resourceVersion: '120',
  since: 1000,
  retryInMs: undefined,
  listedItems: undefined,
  remainingItemCount: undefined,
  ...overrides,
});
const row = (namespace: string, phases: Record<string, number>): NamespaceCount => ({
  namespace,
  total: Object.values(phases).reduce((a, b) => a + b, 0),
  byPhase: new Map(Object.entries(phases)),
});
const forbidden = new StatusError({ kind: 'Status', apiVersion: 'v1', code: 403, reason: 'Forbidden', message: 'pods is forbidden: User "x" cannot list pods' });

const synced = (overrides: Partial<ViewState> = {}): ViewState => ({
  informerName: 'pods',
  source: 'loopback http://127.0.0.1:1234 (3 pods, churn 20/s)',
  elapsedMs: 4200,
  health: health(),
  now: 5200,
  syncedInMs: 350,
  objects: 3,
  resourceVersion: '120',
  namespaces: [row('ns-1', { Running: 1, Pending: 1 }), row('ns-0', { Running: 1 })],
  phases: new Map([['Running', 2], ['Pending', 1]]),
  eventsPerSecond: 18.44,
  totals: { add: 2, update: 30, delete: 1 },
  recent: [{ at: 4100, type: 'update', key: 'ns-1/web-1', detail: 'Pending → Running' }],
  ...overrides,
});

describe('progressBar', () => {
  it('fills in proportion to listed / (listed + remaining) and shows the count and percentage', () => {
    expect(progressBar(0, 100, 10)).toBe('[░░░░░░░░░░] 0/100 0%');
    expect(progressBar(500, 1500, 10)).toBe('[███░░░░░░░] 500/2000 25%');
    expect(progressBar(2000, 0, 10)).toBe('[██████████] 2000/2000 100%');
    expect(progressBar(0, 0, 4)).toBe('[████] 0/0 100%');
  });

  it('shows only the count when the server gave no remainingItemCount', () => {
    expect(progressBar(1500, undefined, 5)).toBe('[░░░░░] 1500 listed');
  });
});

describe('duration', () => {
  it('reads as ms, seconds with one decimal, or minutes and seconds', () => {
    expect([duration(850), duration(12_345), duration(245_000)]).toEqual(['850ms', '12.3s', '4m05s']);
  });
});

describe('healthLine', () => {
  it('says how long the phase has held, the resourceVersion it began at and that nothing failed', () => {
    expect(healthLine(health(), 13_500)).toBe('watching for 12.5s (from rv 120) · last error: none');
  });

  it('shows the attempt, the retry delay and the typed error while backing off', () => {
    const line = healthLine(health({ phase: 'backingOff', attempt: 3, retryInMs: 1600, lastError: forbidden, resourceVersion: '' }), 1200);
    expect(line).toBe('backingOff for 200ms · attempt 3 · retry in 1.6s · last error: status: 403 Forbidden: pods is forbidden: User "x" cannot list pods');
  });

  it('names the Node error code of a network error and shortens long messages', () => {
    expect(describeError(new NetworkError('connect ECONNREFUSED 127.0.0.1:6443', 'ECONNREFUSED'))).toBe('network ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:6443');
    expect(describeError(new NetworkError('x'.repeat(500))).length).toBeLessThan(180);
  });
});

describe('countsTable', () => {
  it('has a column per phase in lifecycle order, a row per namespace and a total row', () => {
    const lines = countsTable(synced().namespaces, synced().phases, 3);
    expect(lines.map((line) => line.split(/\s+/).join(' '))).toEqual([
      'NAMESPACE TOTAL PENDING RUNNING',
      'ns-1 2 1 1',
      'ns-0 1 0 1',
      'all 3 1 2',
    ]);
  });

  it('shows only counts for objects without a phase', () => {
    const lines = countsTable([row('default', { [NO_PHASE]: 4 })], new Map([[NO_PHASE, 4]]), 4);
    expect(lines.map((line) => line.split(/\s+/).join(' '))).toEqual(['NAMESPACE TOTAL', 'default 4', 'all 4']);
  });

  it('sums the namespaces beyond the first twelve into one row', () => {
    const rows = Array.from({ length: 15 }, (_, i) => row(`ns-${i}`, { Running: 1 }));
    const lines = countsTable(rows, new Map([['Running', 15]]), 15);
    expect(lines).toHaveLength(1 + 12 + 1 + 1);
    expect(lines[13]?.split(/\s+/).join(' ')).toBe('(3 more) 3 3');
  });

  it('orders phases Pending, Running, Succeeded, Failed, Unknown, then others by name', () => {
    expect(phaseColumns(new Map([['Zeta', 1], ['Failed', 1], ['Alpha', 1], ['Pending', 1], [NO_PHASE, 1]]))).toEqual(['Pending', 'Failed', 'Alpha', 'Zeta']);
  });
});

describe('screen', () => {
  it('shows the progress bar while the initial list is loading, and no table yet', () => {
    const lines = screen(synced({ syncedInMs: undefined, health: health({ phase: 'listing', listedItems: 500, remainingItemCount: 1500 }) }), 0);
    expect(lines.join('\n')).toContain(`initial list  [${'█'.repeat(8)}${'░'.repeat(22)}] 500/2000 25%`);
    expect(lines.join('\n')).not.toContain('NAMESPACE');
  });

  it('once synced shows the counts, the event rate, the totals and the last events', () => {
    const text = screen(synced(), 0).join('\n');
    expect(text).toContain('synced in 350ms · 3 objects · rv 120');
    expect(text).toMatch(/NAMESPACE\s+TOTAL\s+PENDING\s+RUNNING/);
    expect(text).toContain('events/s 18.4 (5 s window) · since sync: 2 added, 30 updated, 1 deleted');
    expect(text).toMatch(/\+4\.1s\s+update\s+ns-1\/web-1\s+Pending → Running/);
    expect(text).toContain('health  watching for 4.2s (from rv 120) · last error: none');
  });
});

describe('summaryLine', () => {
  it('is the progress bar while listing', () => {
    expect(summaryLine(synced({ syncedInMs: undefined, health: health({ phase: 'listing', listedItems: 1, remainingItemCount: 3 }) }))).toBe(
      `[  4.2s] listing pods [${'█'.repeat(8)}${'░'.repeat(22)}] 1/4 25%`,
    );
  });

  it('is the health line while the first list fails', () => {
    const line = summaryLine(synced({ syncedInMs: undefined, health: health({ phase: 'backingOff', attempt: 1, retryInMs: 800, lastError: forbidden, since: 5000 }) }));
    expect(line).toBe('[  4.2s] pods not synced: backingOff for 200ms (from rv 120) · attempt 1 · retry in 800ms · last error: status: 403 Forbidden: pods is forbidden: User "x" cannot list pods');
  });

  it('once synced gives counts by phase, events/s, health and the last event on one line', () => {
    expect(summaryLine(synced())).toBe('[  4.2s] pods objects=3 namespaces=2 Pending=1 Running=2 | events/s=18.4 | watching rv=120 | last=update ns-1/web-1 Pending → Running');
    expect(summaryLine(synced({ health: health({ attempt: 2, lastError: forbidden }) }))).toContain('| watching rv=120 attempt=2 | error=status: 403 Forbidden');
  });
});

describe('terminalFrame', () => {
  it('redraws from the top left, clearing each line to its end and the rest of the screen', () => {
    expect(terminalFrame(['one', 'two'], 80, 24)).toBe(`${CURSOR_HOME}one${CLEAR_LINE}\ntwo${CLEAR_LINE}\n${CLEAR_BELOW}`);
  });

  it('clips lines to the width and the frame to the height, so the screen never scrolls', () => {
    const frame = terminalFrame(['abcdef', 'b', 'c', 'd'], 3, 3);
    expect(frame).toBe(`${CURSOR_HOME}abc${CLEAR_LINE}\nb${CLEAR_LINE}\n${CLEAR_BELOW}`);
  });
});
