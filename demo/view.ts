/**
 * Rendering for the demo: pure functions from what the demo knows to lines of text. The full
 * screen is for terminals; {@link summaryLine} is the one-line form for logs and pipes.
 */
import type { Health, InformerError } from '../lib';
import type { ChangeTotals, NamespaceCount, RecentEvent } from './stats';
import { NO_PHASE } from './stats';

/** Everything one frame shows, gathered by the demo at refresh time. */
export interface ViewState {
  /** What is watched: `pods` or `pods@default?app=web`. */
  readonly informerName: string;
  /** Where from: `loopback http://127.0.0.1:PORT (2000 pods, churn 20/s)` or `context prod-eu`. */
  readonly source: string;
  /** Milliseconds since the demo started. */
  readonly elapsedMs: number;
  readonly health: Health;
  /** The clock `health.since` is on, now. */
  readonly now: number;
  /** Milliseconds the initial list took; undefined until synced. */
  readonly syncedInMs: number | undefined;
  /** Objects in the cache. */
  readonly objects: number;
  readonly resourceVersion: string;
  readonly namespaces: readonly NamespaceCount[];
  readonly phases: ReadonlyMap<string, number>;
  readonly eventsPerSecond: number;
  readonly totals: ChangeTotals;
  /** Newest first. */
  readonly recent: readonly RecentEvent[];
}

/** Phases in lifecycle order; others follow alphabetically. */
const PHASE_ORDER = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown', 'Active', 'Terminating'];

/** The phases to show as columns, in a stable order. */
export function phaseColumns(phases: ReadonlyMap<string, number>): string[] {
  const rank = (phase: string): number => {
    const index = PHASE_ORDER.indexOf(phase);
    return index === -1 ? PHASE_ORDER.length : index;
  };
  return [...phases.keys()].filter((phase) => phase !== NO_PHASE).sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * A text progress bar: `[██████░░░░░░] 1500/3000 50%`. `remaining` is the server's
 * remainingItemCount; without it the total is unknown and only the count is shown.
 */
export function progressBar(listed: number, remaining: number | undefined, width = 30): string {
  if (remaining === undefined) return `[${'░'.repeat(width)}] ${listed} listed`;
  const total = listed + remaining;
  const fraction = total === 0 ? 1 : Math.min(1, listed / total);
  const filled = Math.round(fraction * width);
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${listed}/${total} ${Math.floor(fraction * 100)}%`;
}

/** Milliseconds as `850ms`, `12.3s`, `4m05s`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const seconds = Math.floor(ms / 1000);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

/** An error as `kind: message`, with the HTTP code or Node code when there is one. */
export function describeError(error: InformerError): string {
  const message = error.message.length > 160 ? `${error.message.slice(0, 157)}...` : error.message;
  return `${error.kind}${error.kind === 'network' && 'code' in error && typeof error.code === 'string' ? ` ${error.code}` : ''}: ${message}`;
}

/**
 * The health line: phase and for how long, the resourceVersion the phase began at (a watch's
 * starting point; the cache's own moves on with every event), failed attempts, retry delay, last error.
 */
export function healthLine(health: Health, now: number): string {
  const from = health.resourceVersion === '' ? '' : ` (from rv ${health.resourceVersion})`;
  const parts = [`${health.phase} for ${duration(now - health.since)}${from}`];
  if (health.attempt > 0) parts.push(`attempt ${health.attempt}`);
  if (health.phase === 'backingOff' && health.retryInMs !== undefined) parts.push(`retry in ${duration(health.retryInMs)}`);
  parts.push(`last error: ${health.lastError === undefined ? 'none' : describeError(health.lastError)}`);
  return parts.join(' · ');
}

/** The list progress of a listing informer, or undefined when it is not listing. */
export function listProgress(health: Health): string | undefined {
  if (health.phase !== 'listing') return undefined;
  return progressBar(health.listedItems ?? 0, health.remainingItemCount);
}

function rateText(perSecond: number): string {
  return perSecond >= 100 ? perSecond.toFixed(0) : perSecond.toFixed(1);
}

function pad(text: string, width: number, right = false): string {
  const clipped = text.length > width ? `${text.slice(0, width - 1)}…` : text;
  return right ? clipped.padStart(width) : clipped.padEnd(width);
}

/** Most namespaces the table lists; the rest are summed in one line. */
const TABLE_ROWS = 12;

/** The counts table: one row per namespace (largest first), one column per phase, and a total row. */
export function countsTable(namespaces: readonly NamespaceCount[], phases: ReadonlyMap<string, number>, total: number): string[] {
  const columns = phaseColumns(phases);
  const nameWidth = Math.max(9, ...namespaces.slice(0, TABLE_ROWS).map((row) => Math.min(40, row.namespace.length)));
  const row = (name: string, count: number, byPhase: ReadonlyMap<string, number>): string =>
    [pad(name, nameWidth), pad(String(count), 7, true), ...columns.map((phase) => pad(String(byPhase.get(phase) ?? 0), Math.max(7, phase.length), true))].join('  ');
  const header = [pad('NAMESPACE', nameWidth), pad('TOTAL', 7, true), ...columns.map((phase) => pad(phase.toUpperCase(), Math.max(7, phase.length), true))].join('  ');
  const lines = [header];
  for (const entry of namespaces.slice(0, TABLE_ROWS)) lines.push(row(entry.namespace, entry.total, entry.byPhase));
  if (namespaces.length > TABLE_ROWS) {
    const rest = namespaces.slice(TABLE_ROWS);
    const restByPhase = new Map<string, number>();
    for (const entry of rest) for (const [phase, count] of entry.byPhase) restByPhase.set(phase, (restByPhase.get(phase) ?? 0) + count);
    lines.push(row(`(${rest.length} more)`, rest.reduce((sum, entry) => sum + entry.total, 0), restByPhase));
  }
  lines.push(row('all', total, phases));
  return lines;
}

/** One event log line: `+12.3s update  ns-3/web-abc  Running → Failed`. */
export function eventLine(event: RecentEvent, startedAt: number): string {
  return `  ${pad(`+${duration(event.at - startedAt)}`, 8)} ${pad(event.type, 6)} ${pad(event.key, 48)} ${event.detail}`;
}

/**
 * The full screen: title, health, the progress bar while listing, then (once synced) the counts
 * table, events per second and the last events.
 *
 * @param startedAt the clock `RecentEvent.at` is on, at the start of the demo.
 */
export function screen(state: ViewState, startedAt: number): string[] {
  const lines = [`rx-informer · ${state.informerName} · ${state.source} · up ${duration(state.elapsedMs)}`, `health  ${healthLine(state.health, state.now)}`, ''];
  const progress = listProgress(state.health);
  if (state.syncedInMs === undefined) {
    lines.push(`initial list  ${progress ?? (state.health.phase === 'backingOff' ? 'waiting to retry' : 'starting')}`);
    return lines;
  }
  if (progress !== undefined) lines.push(`relisting  ${progress}`, '');
  lines.push(`synced in ${duration(state.syncedInMs)} · ${state.objects} objects · rv ${state.resourceVersion}`, '');
  lines.push(...countsTable(state.namespaces, state.phases, state.objects), '');
  const { add, update, delete: deleted } = state.totals;
  lines.push(`events/s ${rateText(state.eventsPerSecond)} (5 s window) · since sync: ${add} added, ${update} updated, ${deleted} deleted`, '');
  lines.push('last events');
  if (state.recent.length === 0) lines.push('  (none yet)');
  for (const event of state.recent) lines.push(eventLine(event, startedAt));
  lines.push('', 'Ctrl-C to stop');
  return lines;
}

/**
 * One summary line for plain output: while listing the progress bar, then objects, phases,
 * events per second, health and the last event.
 */
export function summaryLine(state: ViewState): string {
  const time = `[${duration(state.elapsedMs).padStart(6)}]`;
  const progress = listProgress(state.health);
  if (state.syncedInMs === undefined) {
    if (progress !== undefined) return `${time} listing ${state.informerName} ${progress}`;
    return `${time} ${state.informerName} not synced: ${healthLine(state.health, state.now)}`;
  }
  const phases = phaseColumns(state.phases).map((phase) => `${phase}=${state.phases.get(phase) ?? 0}`);
  const parts = [
    `${time} ${state.informerName} objects=${state.objects} namespaces=${state.namespaces.length}${phases.length > 0 ? ` ${phases.join(' ')}` : ''}`,
    `events/s=${rateText(state.eventsPerSecond)}`,
    `${state.health.phase} rv=${state.resourceVersion}${state.health.attempt > 0 ? ` attempt=${state.health.attempt}` : ''}`,
  ];
  if (state.health.lastError !== undefined) parts.push(`error=${describeError(state.health.lastError)}`);
  const last = state.recent[0];
  if (last !== undefined) parts.push(`last=${last.type} ${last.key} ${last.detail}`);
  return parts.join(' | ');
}

/** ANSI: cursor to the top left. */
export const CURSOR_HOME = '\u001b[H';
/** ANSI: clear from the cursor to the end of the line / of the screen. */
export const CLEAR_LINE = '\u001b[K';
export const CLEAR_BELOW = '\u001b[J';
export const HIDE_CURSOR = '\u001b[?25l';
export const SHOW_CURSOR = '\u001b[?25h';

/**
 * One redraw of a terminal: home, each line clipped to the width and cleared to its end, then the
 * rest of the screen cleared. Overwriting in place instead of clearing first avoids flicker.
 */
export function terminalFrame(lines: readonly string[], columns: number, rows: number): string {
  const shown = lines.slice(0, Math.max(1, rows - 1)).map((line) => (line.length > columns ? line.slice(0, columns) : line));
  return `${CURSOR_HOME}${shown.map((line) => `${line}${CLEAR_LINE}`).join('\n')}\n${CLEAR_BELOW}`;
}
