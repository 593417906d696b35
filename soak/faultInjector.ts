import type { ApiServer, RequestRecord } from '../apiserver/src';
import { delay } from './convergence';
import type { FaultStep } from './faultPlan';

/**
 * Carries out one planned fault on a loopback server and tells when it has actually hit a
 * request. Most server faults only arm the next matching request; the soak learns from the
 * request log that the informer met them.
 */

/** A fault being carried out. */
export interface InjectedFault {
  /** Resolves once the churn may run (a forced relist has been set up; a restart is done). */
  readonly armed: Promise<void>;
  /** Resolves true once the fault hit a request (or, for compaction, forced a relist); false after `maxWaitMs`. */
  readonly fired: Promise<boolean>;
  /** Stops waiting and disarms what did not fire. */
  cancel(): void;
}

const RESOURCE = 'pods';

/** Which server fault kind the request log shows for a planned fault (undefined: none, see `firedBy`). */
function loggedKind(step: FaultStep): RequestRecord['fault'] | undefined {
  switch (step.kind) {
    case 'watchDrop':
      return 'closeAfterEvents';
    case 'cutMidLine':
    case 'stall':
    case 'garbageLine':
    case 'slowWrites':
    case 'plainText429':
    case 'tooLargeResourceVersion':
      return step.kind;
    case 'statusBurst':
      return 'status';
    default:
      return undefined;
  }
}

/** True for a list request that starts a list (no continue token): a relist when it is not the first. */
export function isListStart(record: RequestRecord): boolean {
  return record.verb === 'list' && record.resource === RESOURCE && (record.query['continue'] ?? '') === '';
}

/** Lists the server has started for pods so far. */
export function listsStarted(server: ApiServer): number {
  let count = 0;
  for (const record of server.requests.entries) if (isListStart(record)) count++;
  return count;
}

/**
 * Applies `step` to `server`. Faults that only matter during a relist (list-verb faults, continue
 * expiry, compaction itself) first force one: see {@link forceRelist}. The churn must be paused
 * until `armed` resolves, and may run from then on.
 */
export function injectFault(server: ApiServer, step: FaultStep, options: { readonly maxWaitMs: number; readonly mutate: () => void }): InjectedFault {
  const from = server.requests.entries.length;
  const deadline = performance.now() + options.maxWaitMs;
  let cancelled = false;
  const since = (): readonly RequestRecord[] => server.requests.entries.slice(from);
  const match = (verb: 'list' | 'watch', times = 1) => ({ verb, resource: RESOURCE, times });
  let needsRelist = false;

  switch (step.kind) {
    case 'watchDrop':
      server.faults.inject({ kind: 'closeAfterEvents', events: step.afterEvents }, match('watch'));
      break;
    case 'cutMidLine':
      server.faults.inject({ kind: 'cutMidLine', afterEvents: step.afterEvents }, match('watch'));
      break;
    case 'stall':
      server.faults.inject({ kind: 'stall', ms: step.ms, afterEvents: step.afterEvents }, match('watch'));
      break;
    case 'garbageLine':
      server.faults.inject({ kind: 'garbageLine', afterEvents: step.afterEvents }, match('watch'));
      break;
    case 'slowWrites':
      server.faults.inject({ kind: 'slowWrites', delayMs: step.delayMs }, match('watch', step.watches));
      break;
    case 'compaction':
    case 'continueExpiry':
      needsRelist = true;
      break;
    case 'statusBurst':
      needsRelist = step.verb === 'list';
      server.faults.inject(
        { kind: 'status', code: step.code, ...(step.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: step.retryAfterSeconds }) },
        match(step.verb, step.times),
      );
      break;
    case 'plainText429':
      needsRelist = step.verb === 'list';
      server.faults.inject({ kind: 'plainText429', retryAfterSeconds: step.retryAfterSeconds }, match(step.verb, step.times));
      break;
    case 'tooLargeResourceVersion':
      needsRelist = step.verb === 'list';
      server.faults.inject({ kind: 'tooLargeResourceVersion' }, match(step.verb));
      break;
    case 'restart':
      break;
  }

  const armed = step.kind === 'restart' ? server.restart() : needsRelist ? forceRelist(server, options.mutate, deadline, () => cancelled) : Promise.resolve();
  const kind = loggedKind(step);
  const fired = armed.then(async (): Promise<boolean> => {
    if (step.kind === 'restart') return true;
    const relistFrom = server.requests.entries.length;
    for (;;) {
      if (cancelled) return false;
      const records = since();
      if (kind !== undefined && records.some((r) => r.fault === kind)) return true;
      const relisted = server.requests.entries.slice(relistFrom).some(isListStart);
      if (step.kind === 'compaction' && relisted) return true;
      if (step.kind === 'continueExpiry') {
        // Expire tokens as soon as a relist has handed one out, until a page request meets a 410.
        if (records.some((r) => r.verb === 'list' && (r.query['continue'] ?? '') !== '' && r.status === 410)) return true;
        if (relisted) server.faults.expireContinueTokens();
      }
      if (performance.now() >= deadline) return false;
      // Continue tokens need a tight loop: a page follows the one before within milliseconds.
      await (step.kind === 'continueExpiry' ? new Promise<void>((resolve) => setImmediate(resolve)) : delay(5));
    }
  });

  return {
    armed,
    fired,
    cancel: () => {
      cancelled = true;
      server.faults.clear();
    },
  };
}

/**
 * Makes the informer's next re-watch start from a resourceVersion the server has compacted away,
 * so that it gets 410 and relists, without depending on timing:
 * 1. the next watch is armed to be cut in the middle of its first event;
 * 2. once it is open, one mutation (its event is the one cut) and a compaction happen in the same
 *    synchronous turn, before the client can have reconnected. Its last version is now older than
 *    the compaction point.
 * Resolves when done, or at the deadline (a watch never came).
 */
async function forceRelist(server: ApiServer, mutate: () => void, deadline: number, cancelled: () => boolean): Promise<void> {
  const from = server.requests.entries.length;
  server.faults.inject({ kind: 'cutMidLine', afterEvents: 0 }, { verb: 'watch', resource: RESOURCE, times: 1 });
  while (!cancelled() && performance.now() < deadline) {
    if (server.requests.entries.slice(from).some((r) => r.verb === 'watch' && r.fault === 'cutMidLine')) {
      mutate();
      server.store.compact();
      return;
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
