/**
 * `npm start -- --replicas 3`: several sharded informers, one process each, splitting the pods of
 * the embedded loopback cluster between them over a ring of Leases. Once every replica serves its
 * buckets, one is stopped (SIGTERM: it releases its Lease; `--kill` sends SIGKILL and the others
 * wait two lease durations), and the table shows its buckets moving to the others.
 *
 * Options: --replicas N (2-8), --pods N (default 2000), --stop-after S (seconds after the ring
 * settles, default 5), --duration S (seconds after the stop, default 10), --kill, --until-moved
 * (exit as soon as every bucket has a live owner again, `--duration` being the bound: a wait on the
 * outcome rather than on a guess of how long a loaded machine needs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as readline from 'node:readline';
import { combineLatest, filter, startWith } from 'rxjs';
import { formatBuckets } from '../lib/sharding/buckets';
import { pods } from '../lib';
import { shardedInformer } from '../lib/sharding';
import { loopbackKubeConfig } from '../apiserver/src/kubeConfig';
import { startLoopback } from './loopback';

const BUCKETS = 64;
/** Short ring timings, so that a killed replica's buckets move within seconds. */
const TIMINGS = { leaseDuration: 3_000, renewDeadline: 2_000, retryPeriod: 500 } as const;

/** What a replica process reports, once per change. */
interface ReplicaReport {
  readonly id: string;
  readonly owned: readonly number[];
  readonly objects: number;
  readonly mode: string;
}

interface ReplicasOptions {
  readonly replicas: number;
  readonly pods: number;
  readonly stopAfterSeconds: number;
  readonly durationSeconds: number;
  readonly kill: boolean;
  readonly untilMoved: boolean;
}

function flag(argv: readonly string[], name: string, fallback: number, min: number, max: number): number {
  const at = argv.indexOf(name);
  if (at === -1) return fallback;
  const value = Number(argv[at + 1]);
  if (!Number.isInteger(value) || value < min || value > max) throw new RangeError(`${name} takes an integer in [${min}, ${max}], got ${JSON.stringify(argv[at + 1])}`);
  return value;
}

/** Reads `--replicas N` and its companions. @throws RangeError for a value out of range. */
export function parseReplicasArgs(argv: readonly string[]): ReplicasOptions {
  return {
    replicas: flag(argv, '--replicas', 3, 2, 8),
    pods: flag(argv, '--pods', 2_000, 1, 200_000),
    stopAfterSeconds: flag(argv, '--stop-after', 5, 0, 3_600),
    durationSeconds: flag(argv, '--duration', 10, 1, 86_400),
    kill: argv.includes('--kill'),
    untilMoved: argv.includes('--until-moved'),
  };
}

/** The child: one sharded pod informer against the loopback server at `url`. */
function runReplica(id: string, url: string): void {
  const shard = shardedInformer(loopbackKubeConfig({ url, tls: false, token: undefined }), pods, { ring: { name: 'demo', namespace: 'default' }, identity: id, buckets: BUCKETS, ...TIMINGS });
  const ownership$ = shard.ownership$.pipe(filter((event) => event.type === 'acquired' || event.type === 'released'), startWith(undefined));
  const running = combineLatest([shard.informer$, shard.filtering$, ownership$]).subscribe(([snapshot, mode]) => {
    const report: ReplicaReport = { id, owned: shard.owned(), objects: snapshot.size, mode };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  });
  process.on('SIGTERM', () => {
    running.unsubscribe();
    setTimeout(() => process.exit(0), 300);
  });
}

/** The parent: the loopback cluster, the replica processes and the table. */
async function runRing(options: ReplicasOptions): Promise<void> {
  const print = (line: string): boolean => process.stdout.write(`${line}\n`);
  print(`starting the loopback cluster with ${options.pods} pods and ${options.replicas} replicas (${BUCKETS} buckets, lease ${TIMINGS.leaseDuration / 1000}s)...`);
  const loopback = await startLoopback({ resource: pods, objects: options.pods, namespaces: 10, churn: 20, seed: 1 });
  const reports = new Map<string, ReplicaReport | undefined>();
  const children = new Map<string, ChildProcess>();
  const stopped = new Set<string>();
  for (let i = 0; i < options.replicas; i++) {
    const id = `replica-${i}`;
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', __filename, '--child', id, loopback.server.url], { stdio: ['ignore', 'pipe', 'inherit'] });
    readline.createInterface({ input: child.stdout! }).on('line', (line) => reports.set(id, JSON.parse(line) as ReplicaReport));
    children.set(id, child);
    reports.set(id, undefined);
  }

  const unownedBuckets = (): number => {
    const owned = [...reports].filter(([id]) => !stopped.has(id)).flatMap(([, report]) => report?.owned ?? []);
    return BUCKETS - new Set(owned).size;
  };
  const table = (): string => {
    const rows = [...reports].map(([id, report]) => {
      if (stopped.has(id)) return `  ${id}  stopped`;
      if (report === undefined) return `  ${id}  starting`;
      return `  ${id}  ${String(report.owned.length).padStart(2)} buckets  ${String(report.objects).padStart(6)} pods  ${report.mode}  [${formatBuckets(report.owned)}]`;
    });
    return `${rows.join('\n')}\n  unowned buckets: ${unownedBuckets()}, cluster: ${loopback.server.store.list(pods).length} pods`;
  };

  const finish = async (code: number): Promise<void> => {
    clearInterval(ticker);
    const running = [...children.values()].filter((child) => child.exitCode === null && child.signalCode === null);
    const exited = Promise.all(running.map((child) => new Promise((resolve) => child.once('exit', resolve))));
    for (const child of running) child.kill('SIGTERM');
    // The cluster stays up until the replicas have stopped (their watches closed, their Leases
    // released), or for 5 s at most: stopping it first would fail their last requests.
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((resolve) => (bound = setTimeout(resolve, 5_000)))]);
    clearTimeout(bound);
    await loopback.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void finish(0));

  let settledAt: number | undefined;
  let stoppedAt: number | undefined;
  const started = Date.now();
  const ticker = setInterval(() => {
    const now = Date.now();
    print(`t=${((now - started) / 1000).toFixed(0)}s`);
    print(table());
    const all = [...reports.values()];
    if (settledAt === undefined && all.every((report) => report !== undefined && report.owned.length > 0)) {
      settledAt = now;
      print(`every replica serves its buckets; stopping replica-1 in ${options.stopAfterSeconds}s`);
    }
    if (settledAt !== undefined && stoppedAt === undefined && now - settledAt >= options.stopAfterSeconds * 1000) {
      stoppedAt = now;
      stopped.add('replica-1');
      children.get('replica-1')!.kill(options.kill ? 'SIGKILL' : 'SIGTERM');
      print(options.kill ? 'killed replica-1 (SIGKILL): its buckets move after two lease durations' : 'stopped replica-1 (SIGTERM): it releases its Lease, its buckets move now');
    }
    if (stoppedAt === undefined || stoppedAt === now) return;
    const moved = unownedBuckets() === 0;
    if (options.untilMoved && moved) void finish(0);
    else if (now - stoppedAt >= options.durationSeconds * 1000) void finish(options.untilMoved ? 1 : 0);
  }, 1_000);
}

/** Entry point for `demo/main.ts --replicas N` and for the replica children. */
export function replicasMain(argv: readonly string[]): void {
  const child = argv.indexOf('--child');
  if (child !== -1) {
    runReplica(argv[child + 1]!, argv[child + 2]!);
    return;
  }
  let options: ReplicasOptions;
  try {
    options = parseReplicasArgs(argv);
  } catch (error) {
    process.stderr.write(`rx-informer demo: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }
  runRing(options).catch((error: unknown) => {
    process.stderr.write(`rx-informer demo: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}

if (require.main === module) replicasMain(process.argv.slice(2));
