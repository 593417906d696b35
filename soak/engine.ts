import { Socket } from 'node:net';
import { pods } from '../lib/resources/builtins';
import { createChurn, startApiServer, type ApiServer, type ChurnStats } from '../apiserver/src';
import { activeResources, delay, figuresOf, MemorySampler, versionsOf, waitForConvergence, type DivergenceFigures } from './convergence';
import { injectFault, listsStarted } from './faultInjector';
import { describeFault, faultKinds, makeFaultPlan, type FaultKind, type FaultPlanOptions } from './faultPlan';
import { divergenceOf, isConverged, type LedgerCounts, type Violation, type ViewDivergence } from './legality';
import type { Subject, SubjectContext, SubjectFactory } from './subject';

/**
 * The chaos soak: a loopback API server, the churn generator mutating it, a subject informer
 * watching it, and a seeded fault plan played against the pair. After each fault the churn
 * pauses and the soak measures how long the subject's cache (and every handler's view) takes to
 * match the server exactly; legality is checked on every call as it happens.
 */

/** Everything a soak run is parameterised by. */
export interface SoakConfig {
  readonly seed: number;
  readonly plan: FaultPlanOptions;
  /** Initial pods, spread over `namespaces`. */
  readonly pods: number;
  readonly namespaces: number;
  /** Churn rate while a fault plays out (1 create : 8 updates : 1 delete). */
  readonly mutationsPerSecond: number;
  /** Realistic ~4.4 KB pods (true) or ~1.5 KB ones. */
  readonly managedFields: boolean;
  readonly watchTimeoutSeconds: number;
  readonly bookmarkIntervalMs: number;
  readonly backoff: SubjectContext['backoff'];
  readonly pageSize: number;
  /** How long to keep churning while waiting for an armed fault to hit a request. */
  readonly maxFireWaitMs: number;
  /** Bound on convergence after each fault (cache, then handlers). */
  readonly convergenceTimeoutMs: number;
  readonly syncTimeoutMs: number;
  /** Fail when the heap peaks this far above what was in use when the soak began. */
  readonly maxHeapBytes: number;
  /** Stop playing faults once the subject has stopped for good (it cannot recover on its own). Default false. */
  readonly abandonWhenStopped?: boolean;
  /** Serve HTTPS with the test CA (client-node refuses plain http). Default false. */
  readonly tls?: boolean;
  /** Progress lines (default: none). */
  readonly log?: (line: string) => void;
}

/** What happened around one fault. */
export interface FaultOutcome {
  readonly index: number;
  readonly kind: FaultKind;
  readonly description: string;
  /** The fault hit a request (armed faults may go unused if no matching request came). */
  readonly fired: boolean;
  /** Mutations made while it played out. */
  readonly mutations: number;
  /** From the end of the churn to an exact cache match; undefined when it never matched in time. */
  readonly convergedMs: number | undefined;
  /** From the end of the churn until every handler view matched too. */
  readonly handlersConvergedMs: number | undefined;
  /** The cache's distance from the server when the wait ended (zeros when converged). */
  readonly divergence: DivergenceFigures;
}

/** Per-kind summary. */
export interface KindSummary {
  readonly planned: number;
  readonly fired: number;
  readonly converged: number;
  readonly maxConvergedMs: number | undefined;
}

/** One handler's (or `changes$`'s) final account. */
export interface HandlerReport {
  readonly name: string;
  readonly counts: LedgerCounts;
  readonly violationTotal: number;
  /** Violations by the calls themselves, not counting how the view ended. */
  readonly illegalCalls: number;
  readonly violations: readonly Violation[];
  readonly divergence: DivergenceFigures;
}

/** The result of a soak run. */
export interface SoakReport {
  readonly seed: number;
  readonly subject: string;
  readonly durationMs: number;
  readonly events: number;
  readonly mutations: ChurnStats;
  readonly serverObjects: number;
  readonly outcomes: readonly FaultOutcome[];
  readonly byKind: Readonly<Record<FaultKind, KindSummary>>;
  /** Faults the server reports having applied, by its own kind names. */
  readonly serverFaults: Readonly<Record<string, number>>;
  readonly relists: number;
  readonly requests: number;
  readonly final: { readonly convergedMs: number | undefined; readonly divergence: DivergenceFigures };
  readonly handlers: readonly HandlerReport[];
  readonly errors: Readonly<Record<string, number>>;
  readonly alive: boolean;
  readonly peakRssBytes: number;
  readonly peakHeapBytes: number;
  /** Heap used after each convergence (after a GC when `--expose-gc` is on). */
  readonly heapAfterFaults: readonly number[];
  /** Handles left after unsubscribing (sockets to the server, timers), by type. */
  readonly leaked: Readonly<Record<string, number>>;
  /** Every broken promise, in words; empty when the run passed. */
  readonly failures: readonly string[];
}

/**
 * Runs one soak: seeded plan, churn, subject, checks. Never throws for a subject's misbehaviour:
 * that goes into `failures`. Everything it starts is stopped before it resolves.
 */
export async function runSoak(config: SoakConfig, subjectFactory: SubjectFactory): Promise<SoakReport> {
  const log = config.log ?? (() => undefined);
  const started = performance.now();
  const memory = new MemorySampler(50);
  const plan = makeFaultPlan(config.seed, config.plan);
  const server = await startApiServer({ bookmarkIntervalMs: config.bookmarkIntervalMs, tls: config.tls ?? false });
  const rate = config.mutationsPerSecond;
  const churn = createChurn(server.store, {
    seed: config.seed,
    pods: config.pods,
    namespaces: config.namespaces,
    createsPerSecond: rate * 0.1,
    updatesPerSecond: rate * 0.8,
    deletesPerSecond: rate * 0.1,
    managedFields: config.managedFields,
    onError: (error) => log(`churn stopped: ${String(error)}`),
  });
  churn.populate();
  const port = Number(new URL(server.url).port);
  const timersBefore = activeResources().get('Timeout') ?? 0;
  const serverVersions = (): Map<string, string> => versionsOf(server.store.list(pods));
  const relists = (): number => Math.max(0, listsStarted(server) - 1);
  const failures: string[] = [];
  const outcomes: FaultOutcome[] = [];
  const heapAfterFaults: number[] = [];
  let subject: Subject | undefined;
  let final: SoakReport['final'] = { convergedMs: undefined, divergence: { missing: 0, extra: 0, stale: 0 } };
  let handlers: HandlerReport[] = [];
  let leaked: Record<string, number> = {};

  try {
    subject = await subjectFactory(server, {
      relists,
      watchTimeoutSeconds: config.watchTimeoutSeconds,
      backoff: config.backoff,
      pageSize: config.pageSize,
      syncTimeoutMs: config.syncTimeoutMs,
    });
    const current = subject;
    log(`seed ${config.seed}: ${current.name} synced ${server.store.list(pods).length} pods; ${plan.faults.length} faults planned`);

    for (const planned of plan.faults) {
      if (config.abandonWhenStopped === true && !current.alive) {
        log(`${current.name} has stopped for good: the remaining ${plan.faults.length - planned.index} faults are not played`);
        break;
      }
      current.beforeFault?.(planned.index);
      const before = total(churn.stats);
      const injected = injectFault(server, planned.fault, { maxWaitMs: config.maxFireWaitMs, mutate: () => churn.step() });
      await injected.armed;
      churn.start();
      const storm = delay(planned.stormMs);
      const fired = await injected.fired;
      await storm;
      churn.stop();
      injected.cancel();
      const cache = await waitForConvergence(() => divergenceOf(current.cache(), serverVersions()), { timeoutMs: config.convergenceTimeoutMs });
      const views = cache.tookMs === undefined ? undefined : await waitForConvergence(() => worstView(current, serverVersions()), { timeoutMs: config.convergenceTimeoutMs });
      heapAfterFaults.push(heapNow());
      const outcome: FaultOutcome = {
        index: planned.index,
        kind: planned.fault.kind,
        description: describeFault(planned.fault),
        fired,
        mutations: total(churn.stats) - before,
        convergedMs: cache.tookMs,
        handlersConvergedMs: views?.tookMs,
        divergence: figuresOf(cache.last),
      };
      outcomes.push(outcome);
      log(`#${planned.index} ${outcome.description}: ${fired ? 'fired' : 'not fired'}, ${outcome.mutations} mutations, cache ${ms(outcome.convergedMs)}, handlers ${ms(outcome.handlersConvergedMs)}`);
      if (outcome.convergedMs === undefined) {
        failures.push(`fault #${planned.index} (${outcome.description}): cache did not match the server within ${config.convergenceTimeoutMs} ms (${describeFigures(outcome.divergence)})`);
      } else if (outcome.handlersConvergedMs === undefined) {
        failures.push(`fault #${planned.index} (${outcome.description}): handler views did not match the server within ${config.convergenceTimeoutMs} ms`);
      }
    }

    // The faults have stopped: one last exact comparison, and the handlers' accounts.
    const settled = await waitForConvergence(() => divergenceOf(current.cache(), serverVersions()), { timeoutMs: config.convergenceTimeoutMs });
    await waitForConvergence(() => worstView(current, serverVersions()), { timeoutMs: config.convergenceTimeoutMs });
    final = { convergedMs: settled.tookMs, divergence: figuresOf(settled.last) };
    if (settled.tookMs === undefined) failures.push(`after the faults stopped the cache still differs from the server (${describeFigures(final.divergence)})`);
    const server$ = serverVersions();
    handlers = current.ledgers.map((ledger) => {
      const divergence = figuresOf(ledger.settle(server$));
      return { name: ledger.name, counts: ledger.stats, violationTotal: ledger.violationTotal, illegalCalls: ledger.illegalCalls, violations: ledger.violations, divergence };
    });
    for (const handler of handlers) {
      if (handler.violationTotal > 0) {
        const first = handler.violations[0];
        failures.push(`${handler.name}: ${handler.violationTotal} illegal or missing calls; first: ${first?.rule} on ${first?.key} (${first?.detail})`);
      }
    }
    if (!current.alive) failures.push(`${current.name} stopped for good during the soak`);
  } finally {
    churn.stop();
    subject?.stop();
    leaked = await leftovers(port, timersBefore);
    await server.close();
  }
  const peak = memory.stop();
  const heapGrowth = peak.peakHeapBytes - peak.baselineHeapBytes;
  if (heapGrowth > config.maxHeapBytes) failures.push(`heap peaked at ${mib(peak.peakHeapBytes)}, ${mib(heapGrowth)} above the ${mib(peak.baselineHeapBytes)} in use when the soak began: above the ${mib(config.maxHeapBytes)} bound`);
  if (Object.keys(leaked).length > 0) failures.push(`left behind after unsubscribing: ${JSON.stringify(leaked)}`);

  return {
    seed: config.seed,
    subject: subject?.name ?? 'unknown',
    durationMs: performance.now() - started,
    events: subject?.events ?? 0,
    mutations: churn.stats,
    serverObjects: server.store.list(pods).length,
    outcomes,
    byKind: summarise(outcomes),
    serverFaults: countServerFaults(server),
    relists: Math.max(0, listsStarted(server) - 1),
    requests: server.requests.entries.length,
    final,
    handlers,
    errors: Object.fromEntries(subject?.errors ?? []),
    alive: subject?.alive ?? false,
    peakRssBytes: peak.peakRssBytes,
    peakHeapBytes: peak.peakHeapBytes,
    heapAfterFaults,
    leaked,
    failures,
  };
}

/** The first handler view that still differs from the server, or a converged (empty) one. */
function worstView(subject: Subject, server: ReadonlyMap<string, string>): ViewDivergence {
  for (const ledger of subject.ledgers) {
    const divergence = ledger.divergence(server);
    if (!isConverged(divergence)) return divergence;
  }
  return { missing: [], missedDeletes: [], stale: [] };
}

/**
 * What the subject left open after it was stopped: sockets still connected to the server (the
 * client side: a ref'd socket whose remote port is the server's) and timers above the count
 * before it started. Waits up to 2 s for sockets that are closing.
 */
async function leftovers(port: number, timersBefore: number): Promise<Record<string, number>> {
  const deadline = performance.now() + 2000;
  for (;;) {
    const sockets = clientSockets(port);
    const timers = (activeResources().get('Timeout') ?? 0) - timersBefore;
    const found: Record<string, number> = {};
    if (sockets > 0) found['client sockets to the server'] = sockets;
    if (timers > 0) found['timers'] = timers;
    if (Object.keys(found).length === 0 || performance.now() >= deadline) return found;
    await delay(20);
  }
}

/** Ref'd, open sockets whose remote end is the server: the client side of requests still open. */
export function clientSockets(port: number): number {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter((handle) => handle instanceof Socket && !handle.destroyed && handle.remotePort === port).length;
}

function summarise(outcomes: readonly FaultOutcome[]): Record<FaultKind, KindSummary> {
  const summary = {} as Record<FaultKind, KindSummary>;
  for (const kind of faultKinds) {
    const mine = outcomes.filter((o) => o.kind === kind);
    const times = mine.map((o) => o.convergedMs).filter((t): t is number => t !== undefined);
    summary[kind] = {
      planned: mine.length,
      fired: mine.filter((o) => o.fired).length,
      converged: times.length,
      maxConvergedMs: times.length === 0 ? undefined : Math.max(...times),
    };
  }
  return summary;
}

function countServerFaults(server: ApiServer): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const record of server.requests.entries) if (record.fault !== undefined) counts[record.fault] = (counts[record.fault] ?? 0) + 1;
  return counts;
}

function heapNow(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  return process.memoryUsage().heapUsed;
}

function total(stats: ChurnStats): number {
  return stats.creates + stats.updates + stats.deletes;
}

function ms(value: number | undefined): string {
  return value === undefined ? 'NOT converged' : `${Math.round(value)} ms`;
}

function mib(bytes: number): string {
  return `${(bytes / 1048576).toFixed(0)} MiB`;
}

/** `missing 2, extra 0, stale 1`. */
export function describeFigures(figures: DivergenceFigures): string {
  return `missing ${figures.missing}, extra ${figures.extra}, stale ${figures.stale}`;
}
