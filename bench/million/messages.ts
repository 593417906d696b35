/**
 * The messages between the million-object run's orchestrator (million.ts) and its generating
 * server (generatorServer.ts). Clients are the benchmark's own (bench/clients), whose `produce` and
 * `ack` requests the orchestrator relays as bench/run.ts does.
 */
import type { ServerReply, ServerRequest } from '../protocol';

/** Orchestrator → generator server. */
export type MillionServerCommand =
  | { readonly type: 'setup'; readonly pods: number }
  /** The server process's own memory, for the report (each side's memory is its own). */
  | { readonly type: 'memory' }
  | { readonly type: 'client'; readonly request: ServerRequest }
  | { readonly type: 'shutdown' };

/** Generator server → orchestrator. */
export type MillionServerMessage =
  | { readonly type: 'ready'; readonly url: string; readonly podJsonBytes: number; readonly metadataJsonBytes: number }
  | { readonly type: 'memory'; readonly rssBytes: number; readonly heapUsedBytes: number; readonly peakRssBytes: number; readonly cpuMs: number }
  | { readonly type: 'reply'; readonly reply: ServerReply }
  | { readonly type: 'failed'; readonly message: string };
