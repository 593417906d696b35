import { combineLatest, filter, startWith } from 'rxjs';
import { pods } from '../../lib/resources/builtins';
import { shardedInformer } from '../../lib/sharding/shardedInformer';
import { loopbackKubeConfig } from '../../lib/testing/kubeConfig';

/**
 * One replica of the e2e ring, run as a child process: a sharded pod informer against the loopback
 * server at SHARD_URL, identity SHARD_ID. It prints one JSON line per cache or ownership change:
 * `{ id, mode, owned, synced, names, handedIn }` (`handedIn`: the objects
 * its handler saw arrive marked with their bucket's acquisition). Short ring timings (SHARD_TIMINGS, JSON) keep the test short.
 */

const url = process.env.SHARD_URL;
const id = process.env.SHARD_ID;
if (url === undefined || id === undefined) throw new Error('SHARD_URL and SHARD_ID must be set');
const timings = JSON.parse(process.env.SHARD_TIMINGS ?? '{}') as { leaseDuration?: number; renewDeadline?: number; retryPeriod?: number };

const kubeConfig = loopbackKubeConfig({ url, tls: false, token: undefined });
const shard = shardedInformer(kubeConfig, pods, { ring: { name: 'e2e', namespace: 'default' }, identity: id, buckets: 32, ...timings });

// The objects whose add came marked with the acquisition of their bucket, in the handler's order.
const handedIn: string[] = [];
const handling = shard.handle({ onAdd: (pod, info) => void (info.handover?.type === 'acquired' && handedIn.push(`${pod.metadata.namespace}/${pod.metadata.name}`)) }).subscribe();

const running = combineLatest([shard.informer$, shard.filtering$, shard.ownership$.pipe(filter((event) => event.type === 'acquired' || event.type === 'released'), startWith(undefined))]).subscribe(([snapshot, mode]) => {
  const names = [...snapshot.values()].map((pod) => `${pod.metadata.namespace}/${pod.metadata.name}`);
  process.stdout.write(`${JSON.stringify({ id, mode, owned: shard.owned(), synced: snapshot.synced, names, handedIn })}\n`);
});

process.on('SIGTERM', () => {
  running.unsubscribe();
  handling.unsubscribe();
  // Leave time for the Lease release to go out.
  setTimeout(() => process.exit(0), 500);
});
