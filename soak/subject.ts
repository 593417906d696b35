import type { ApiServer } from '../apiserver/src';
import type { HandlerLedger } from './legality';

/**
 * What the soak runs faults against: an informer implementation, seen from outside. rx-informer
 * and client-node's informer both fit, so the same seeded plans drive a differential run.
 */
export interface Subject {
  readonly name: string;
  /** Key → resourceVersion of the cache now. */
  cache(): ReadonlyMap<string, string>;
  /** Handler views that must also converge and stay legal (empty when the subject has none). */
  readonly ledgers: readonly HandlerLedger[];
  /** Changes the cache applied so far (events delivered). */
  readonly events: number;
  /** Errors the subject reported, counted by a short label (`StatusError 429`, `ProtocolError malformed-json`). */
  readonly errors: ReadonlyMap<string, number>;
  /** False once the subject has stopped for good on its own (client-node does on most errors). */
  readonly alive: boolean;
  /** Called before each planned fault; rx-informer adds a late handler here. */
  beforeFault?(index: number): void;
  /** Unsubscribes everything it opened. */
  stop(): void;
}

/** Starts a subject against a server and resolves once its cache has synced. */
export type SubjectFactory = (server: ApiServer, context: SubjectContext) => Promise<Subject>;

/** What the engine hands a subject factory. */
export interface SubjectContext {
  /** Relists the server has seen so far (list starts after the first). */
  readonly relists: () => number;
  /** Reflector watch `timeoutSeconds`: short, so faults armed for the next watch land soon. */
  readonly watchTimeoutSeconds: number;
  /** Backoff of the subject, when it has one to tune. */
  readonly backoff: { readonly initialMs: number; readonly maxMs: number; readonly resetAfterMs: number };
  /** Items per list page. */
  readonly pageSize: number;
  /** Bound on the initial sync, ms. */
  readonly syncTimeoutMs: number;
}

/** Counts one error under a label. */
export function countError(errors: Map<string, number>, error: unknown): void {
  const label = errorLabel(error);
  errors.set(label, (errors.get(label) ?? 0) + 1);
}

/** A short label of an error: its class and its code or problem. */
export function errorLabel(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const fields = error as Error & { code?: unknown; problem?: unknown; reason?: unknown };
  const detail = fields.problem ?? fields.code ?? fields.reason;
  return detail === undefined ? error.name : `${error.name} ${String(detail)}`;
}
