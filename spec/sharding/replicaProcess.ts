import { auditTime, BehaviorSubject, combineLatest, filter, map, type Observable, startWith, type Subscription } from 'rxjs';
import { pods, type Pod } from '../../lib/resources/builtins';
import { shardedInformer } from '../../lib/sharding/shardedInformer';
import type { Snapshot } from '../../lib/store/snapshot';
import { loopbackKubeConfig } from '../../apiserver/src/kubeConfig';

/**
 * One replica of the e2e rings, run as a child process: a sharded pod informer against the loopback
 * server at SHARD_URL, identity SHARD_ID, in SHARD_MODE (`server`, the default, on ring `e2e`; or
 * `label`, a shard of the sharder's ring `e2e-label`). It prints one JSON line per cache, lease or
 * ownership change: `{ id, mode, owned, synced, names, handedIn }` (`handedIn`: the objects its
 * handler saw arrive marked with their bucket's acquisition; `synced` in label mode also needs the
 * shard Lease held). Short ring timings (SHARD_TIMINGS, JSON) keep the tests short.
 */

const url = process.env.SHARD_URL;
const id = process.env.SHARD_ID;
if (url === undefined || id === undefined) throw new Error('SHARD_URL and SHARD_ID must be set');
const timings = JSON.parse(process.env.SHARD_TIMINGS ?? '{}') as { leaseDuration?: number; renewDeadline?: number; retryPeriod?: number };
const kubeConfig = loopbackKubeConfig({ url, tls: false, token: undefined });

const handedIn: string[] = [];
// The handler runs after the snapshot that made its change was reported: report again after it.
const handled = new BehaviorSubject<number>(0);
const nameOf = (pod: Pod): string => `${pod.metadata.namespace}/${pod.metadata.name}`;
const report = (snapshot: Snapshot<Pod>, mode: string, owned: readonly number[], ready: boolean): void => {
  const names = [...snapshot.values()].map(nameOf);
  process.stdout.write(`${JSON.stringify({ id, mode, owned, synced: snapshot.synced && ready, names, handedIn })}\n`);
};

const running: Subscription[] = [];
if (process.env.SHARD_MODE === 'label') {
  const shard = shardedInformer(kubeConfig, pods, { mode: 'label', ring: { name: 'e2e-label', namespace: 'default' }, identity: id, ...timings });
  const leading: Observable<boolean> = shard.lease$.pipe(map((state) => state.state === 'leading'));
  running.push(combineLatest([shard.informer$, leading]).subscribe(([snapshot, ready]) => report(snapshot, 'label', [], ready)));
} else {
  const shard = shardedInformer(kubeConfig, pods, { ring: { name: 'e2e', namespace: 'default' }, identity: id, buckets: 32, ...timings });
  const onAdd = (pod: Pod, info: { readonly handover?: { readonly type: string } }): void => {
    if (info.handover?.type === 'acquired') handled.next(handedIn.push(nameOf(pod)));
  };
  running.push(shard.handle({ onAdd }).subscribe());
  const moves = shard.ownership$.pipe(
    filter((event) => event.type === 'acquired' || event.type === 'released'),
    startWith(undefined),
  );
  running.push(combineLatest([shard.informer$, shard.filtering$, moves, handled.pipe(auditTime(20))]).subscribe(([snapshot, mode]) => report(snapshot, mode, shard.owned(), true)));
}

process.on('SIGTERM', () => {
  for (const subscription of running) subscription.unsubscribe();
  // Leave time for the Lease release to go out.
  setTimeout(() => process.exit(0), 500);
});
