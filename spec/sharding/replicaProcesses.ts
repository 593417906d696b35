import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { eventually } from '../support/eventually';

/** Replica processes of the multi-process e2e specs (each runs replicaProcess.ts) and waiting on them. */

const REPO = path.resolve(__dirname, '../..');

/** What a replica process prints on every change (see replicaProcess.ts). */
export interface Report {
  readonly id: string;
  readonly mode: string;
  /** Buckets served (empty in label mode). */
  readonly owned: number[];
  /** The cache is synced and (label mode) its shard Lease is held. */
  readonly synced: boolean;
  readonly names: string[];
  /** The objects the replica's handler saw arrive marked with their bucket's acquisition. */
  readonly handedIn: string[];
}

export interface ReplicaProcess {
  readonly id: string;
  readonly child: ChildProcess;
  latest: Report | undefined;
  stderr: string;
}

/** Starts replicaProcess.ts as `id` against the server at `url`; `env` adds its SHARD_* settings. */
export function startReplica(url: string, id: string, env: Readonly<Record<string, string>>): ReplicaProcess {
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', path.join('spec', 'sharding', 'replicaProcess.ts')], {
    cwd: REPO,
    env: { ...process.env, SHARD_URL: url, SHARD_ID: id, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const replica: ReplicaProcess = { id, child, latest: undefined, stderr: '' };
  readline.createInterface({ input: child.stdout! }).on('line', (line) => {
    replica.latest = JSON.parse(line) as Report;
  });
  child.stderr!.on('data', (chunk: Buffer) => (replica.stderr += chunk.toString()));
  return replica;
}

/**
 * Checks every 50 ms that `whyNot` (undefined: met; else why not) is undefined, for up to
 * `timeoutMs`; resolves with the ms it took, or fails with the last reason why not.
 */
export async function met(whyNot: () => string | undefined, timeoutMs: number): Promise<number> {
  const started = Date.now();
  await eventually(() => expect(whyNot()).toBeUndefined(), { timeoutMs, intervalMs: 50 });
  return Date.now() - started;
}

/** Why the caches of `live` are not disjoint and synced, or undefined when they are; fills `seen` (object → replica). */
export function overlapOf(live: readonly ReplicaProcess[], seen: Map<string, string>): string | undefined {
  for (const replica of live) {
    if (replica.latest === undefined || !replica.latest.synced) return `${replica.id} not synced`;
    for (const name of replica.latest.names) {
      const other = seen.get(name);
      if (other !== undefined) return `${name} in ${other} and ${replica.id}`;
      seen.set(name, replica.id);
    }
  }
  return undefined;
}

/** Why `actual` (any order) differs from `expected` (sorted), or undefined. */
export function differs(what: string, actual: Iterable<string>, expected: readonly string[]): string | undefined {
  const sorted = [...actual].sort();
  if (sorted.length !== expected.length || sorted.some((name, i) => name !== expected[i])) return `${what} ${sorted.length} != server ${expected.length}`;
  return undefined;
}
