/**
 * The messages the benchmark's processes exchange. The orchestrator (run.ts) forks one server
 * process (server.ts) for the whole run and one fresh client process per measurement
 * (clients/*.ts); a client's requests to the server travel through the orchestrator, which relays
 * them as they are.
 */

import { pods } from '../lib/resources/builtins';
import type { Resource } from '../lib/resources/resource';
import type { KubeObject } from '../lib/base/object';
import { applications } from '../apiserver/src/applications';

/** The client variants measured side by side. */
export type VariantName = 'a1' | 'a2' | 'b' | 'c' | 'd';

/**
 * The objects the server holds (the object-size dimension):
 * - `pod`: pods with managedFields, ~4.4 KB of JSON (as a real API server sends them);
 * - `lean-pod`: the same pods without managedFields, ~1.7 KB;
 * - `application`: Argo CD–style Applications (a custom resource), ~21 KB.
 */
export type ObjectKind = 'pod' | 'lean-pod' | 'application';

/** The resource the clients list and watch for each kind of object. */
export function benchResourceOf(objects: ObjectKind): Resource<KubeObject> {
  return objects === 'application' ? (applications as Resource<KubeObject>) : (pods as Resource<KubeObject>);
}

/**
 * How the server answers the informer's first list (`limit=500&resourceVersion=0`):
 * - `paged`: in pages of 500, as the loopback server's default profile does and no real API
 *   server does (their watch cache ignores `limit` there);
 * - `unpaged`: the whole collection in one response, as a Kubernetes 1.33 server does (as every
 *   version before 1.34, and, at resourceVersion "0", every version the loopback server models);
 * - `streaming`: b lists with a streaming list (`sendInitialEvents`, served from 1.34), the others
 *   as they always do (client-node's list is one response in every scenario).
 */
export type Scenario = 'paged' | 'unpaged' | 'streaming';

/** The loopback server's version profile per scenario (undefined: its default profile, which pages). */
export const SCENARIO_SERVER_VERSION: Readonly<Record<Scenario, '1.33' | '1.36' | undefined>> = {
  paged: undefined,
  unpaged: '1.33',
  streaming: '1.36',
};

export const VARIANT_LABELS: Readonly<Record<VariantName, string>> = {
  a1: 'a1 floor: read, split, JSON.parse, drop',
  a2: 'a2 floor: … and keep in one mutable Map',
  b: 'b rx-informer (namespace + label index, handle())',
  c: 'c @kubernetes/client-node makeInformer',
  d: 'd kubernetes-fluent-client Watch + Map',
};

/** The annotation the server stamps into each MODIFIED object: its write time, ms since the epoch. */
export const WRITTEN_AT_ANNOTATION = 'bench.rx-informer.dev/written-at';
/**
 * The annotation carrying the event's sequence number within its phase (1, 2, …). A handler that
 * coalesces pending updates of one object (rx-informer's handle() does when it lags) skips
 * numbers; a phase is complete when every handler has seen the last number.
 */
export const SEQUENCE_ANNOTATION = 'bench.rx-informer.dev/seq';
/** The annotation that marks the object changed while a client relists (relist detection). */
export const RELIST_MARKER_ANNOTATION = 'bench.rx-informer.dev/relist-marker';

/** What one client process measures, in order; absent phases are skipped. */
export interface ClientPlan {
  /** Heap bytes per cached object after sync (needs --expose-gc). */
  readonly heap: boolean;
  /** Saturated watch throughput: this many MODIFIED events, as fast as the client takes them. */
  readonly throughputEvents: number;
  /** Latency at a fixed offered rate below every variant's capacity. */
  readonly latencyEvents: number;
  readonly latencyRate: number;
  /** A 410-triggered relist of the whole cache. */
  readonly relist: boolean;
}

/** The command line of a client process (JSON in argv[2]). */
export interface ClientConfig {
  readonly variant: VariantName;
  readonly scenario: Scenario;
  readonly serverUrl: string;
  /** The number of objects the server holds: the cache size at sync. */
  readonly pods: number;
  /** What kind of objects (and so which resource) the server holds. */
  readonly objects: ObjectKind;
  /** Drop metadata.managedFields before caching (only b and a2 support it). */
  readonly dropManagedFields: boolean;
  /** Handler subscriptions (fan-out). */
  readonly handlers: number;
  readonly plan: ClientPlan;
  /** Ask for and cache metadata only (b: `metadataOnly: true`; a2: the same Accept header, parsed into its Map). */
  readonly metadataOnly?: boolean;
  /** b's list page and initial-events timeouts (ms), raised for lists that take minutes (the million-object run). */
  readonly listTimeoutMs?: number;
}

/** Sync measurements. */
export interface SyncResult {
  readonly syncMs: number;
  /** CPU time of the client process (all its threads, GC included) from start to synced. */
  readonly cpuMs: number;
  /** Peak resident set size of the client process up to synced. */
  readonly peakRssBytes: number;
  /** Longest event-loop stall between start and synced. */
  readonly maxStallMs: number;
  /** The same stall in main-thread CPU time (robust when other processes share the cores); absent in older results. */
  readonly maxStallCpuMs?: number;
  /** Peak V8 heap used up to synced, sampled at every stall-monitor tick; absent in older results. */
  readonly peakHeapBytes?: number;
}

export interface ThroughputResult {
  readonly events: number;
  /** Notifications the first handler received (fewer than events when its queue coalesced updates). */
  readonly delivered: number;
  readonly eventsPerSecond: number;
  /** The client's CPU time over wall time in the phase (≈1 when it is the bottleneck on a free core). */
  readonly cpuShare: number;
  /** CPU time per event (all threads, GC included): robust when other processes compete for the cores. */
  readonly cpuMicrosPerEvent: number;
  /** The server's own capacity while producing these events (events per second of its CPU time). */
  readonly serverEventsPerSecond: number;
}

export interface LatencyResult {
  readonly events: number;
  readonly p50Ms: number | undefined;
  readonly p99Ms: number | undefined;
  readonly maxMs: number | undefined;
}

export interface RelistResult {
  readonly relistMs: number;
  /** List requests the server saw during the relist (0 means the relist did not happen as planned). */
  readonly listRequests: number;
  readonly peakRssBytes: number;
  readonly peakHeapBytes: number;
  readonly maxStallMs: number;
}

/** Everything one client process reports. */
export interface ClientResult {
  readonly sync: SyncResult;
  readonly heapBytesPerObject?: number;
  readonly throughput?: ThroughputResult;
  readonly latency?: LatencyResult;
  readonly relist?: RelistResult;
}

/** Requests a client sends to the server (through the orchestrator). */
export type ServerRequest =
  | { readonly type: 'produce'; readonly count: number; readonly window: number }
  | { readonly type: 'pace'; readonly count: number; readonly ratePerSecond: number }
  | { readonly type: 'ack'; readonly handled: number }
  | { readonly type: 'relist' }
  /** How many list requests reached the server since the last relist trigger (proves a real relist). */
  | { readonly type: 'relist-check' };

/** Replies of the server to a client. */
export type ServerReply =
  /** busyMs: the server process's CPU time while producing (so count/busyMs is its capacity). */
  | { readonly type: 'produced'; readonly count: number; readonly busyMs: number; readonly elapsedMs: number }
  | { readonly type: 'relist-triggered'; readonly at: number }
  | { readonly type: 'relist-checked'; readonly lists: number };

/** Orchestrator → server. */
export type ServerCommand =
  | { readonly type: 'setup'; readonly pods: number; readonly scenario: Scenario; readonly objects: ObjectKind }
  /**
   * Before each client: the client's first watch will be ended cleanly after this many events
   * (its throughput and latency events plus the relist trigger), so a relist can follow.
   */
  | { readonly type: 'arm'; readonly closeWatchAfterEvents: number | undefined }
  | { readonly type: 'client'; readonly request: ServerRequest }
  | { readonly type: 'shutdown' };

/** Server → orchestrator. */
export type ServerMessage =
  | { readonly type: 'ready'; readonly url: string; readonly podJsonBytes: number; readonly preSerialized: boolean }
  | { readonly type: 'armed' }
  | { readonly type: 'reply'; readonly reply: ServerReply }
  | { readonly type: 'failed'; readonly message: string };

/** Client → orchestrator. */
export type ClientMessage =
  | { readonly type: 'server'; readonly request: ServerRequest }
  | { readonly type: 'result'; readonly result: ClientResult }
  | { readonly type: 'failed'; readonly message: string };

/** Orchestrator → client. */
export type ClientCommand = { readonly type: 'reply'; readonly reply: ServerReply };

/**
 * The clock the processes share, in ms with sub-µs resolution: the machine's monotonic clock
 * (`process.hrtime`; CLOCK_MONOTONIC on Linux, one clock for every process). Not
 * `performance.timeOrigin + performance.now()`: each process fixes that origin at start-up with an
 * error of its own, which every latency measured against another process inherits (100 fresh
 * processes read it 0.74–6.6 ms ahead of the wall clock on a loaded 2-core machine, against a
 * ±5 µs spread for the monotonic clock anchored where `Date.now()` ticks).
 */
export function sharedClockMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
