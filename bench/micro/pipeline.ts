/**
 * Micro-benchmark of the client's per-event cost without HTTP: watch lines rendered in memory,
 * JSON.parse'd, then either kept in one Map (a2) or fed through rx-informer's reflector, indexer
 * and one handle() subscription (b). One variant per process, so each gets a clean heap:
 *
 *   node -r ts-node/register/transpile-only bench/micro/pipeline.ts <a2|b|b-changes|b-cache> 100000 100000 [handlers=1]
 *
 * (b: `handlers` handle() subscriptions; b-changes: as many `changes$` subscriptions, the stream
 * handle() is measured against; b-cache: the informer's snapshots without either.) Add --cpu-prof before -r
 * to profile; SHARE=0 turns the indexer's `shareUnchanged` off and FREEZE=1 turns `freeze` on,
 * for before/after figures.
 *
 * Prints µs per event of wall and CPU time. Used to profile what the full benchmark shows.
 */
import { Observable, of } from 'rxjs';
import { informerFrom } from '../../lib/informer/informer';
import { pods as podResource, type Pod } from '../../lib/resources/builtins';
import type { ListerWatcher, ListPage, WatchEvent } from '../../lib/sources/listerWatcher';
import { labelIndex, namespaceIndex, NAMESPACE_INDEX } from '../../lib/store/indexers';
import { makePod, seededRandom } from '../../apiserver/src/churn';
import { observeGcPauses } from './gcPauses';

const [variant = 'b', cachedText = '100000', eventsText = '100000', handlersText = '1'] = process.argv.slice(2);
const handlerCount = Number(handlersText);
const cached = Number(cachedText);
const events = Number(eventsText);
const BATCH = 64;

const random = seededRandom(7);
const base: Pod[] = [];
for (let i = 0; i < cached; i++) {
  const pod = makePod(random, `ns-${i % 10}`, `pod-${i}`);
  base.push({ ...pod, metadata: { ...pod.metadata, uid: `uid-${i}`, resourceVersion: String(i + 1), annotations: { seq: '0' } } });
}
/** Each pod's JSON cut around its resourceVersion and sequence annotation. */
const templates = base.map((pod) => JSON.stringify(pod).split(/"resourceVersion":"\d+"|"seq":"0"/));
const line = (event: number): string => {
  const parts = templates[event % cached]!;
  return `${parts[0]}"resourceVersion":"${cached + event + 1}"${parts[1]}"seq":"${event + 1}"${parts[2]}`;
};
const listPage: ListPage<Pod> = { items: base.map((pod) => JSON.parse(JSON.stringify(pod)) as Pod), resourceVersion: String(cached), last: true, remainingItemCount: undefined };
base.length = 0;

/** Emits the events in batches of 64 per macrotask, as a socket delivers them. */
function feed(emit: (text: string) => void, done: () => void): void {
  let next = 0;
  const turn = (): void => {
    for (let i = 0; i < BATCH && next < events; i++) emit(line(next++));
    if (next < events) setImmediate(turn);
    else done();
  };
  turn();
}

const gc = observeGcPauses();

function report(started: number, cpu: NodeJS.CpuUsage): void {
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000;
  process.stdout.write(`${variant} cached=${cached} events=${events} subscribers=${variant === 'b' || variant === 'b-changes' ? handlerCount : 0}: wall ${((wall * 1000) / events).toFixed(1)} µs/event, cpu ${((cpuMs * 1000) / events).toFixed(1)} µs/event, gc pauses ${((gc.totalMs * 1000) / events).toFixed(1)} µs/event (${gc.count}), throughput ${Math.round((events * 1000) / wall)} events/s\n`);
}

async function runMap(): Promise<void> {
  const map = new Map<string, Pod>();
  for (const pod of listPage.items) map.set(`${pod.metadata.namespace}/${pod.metadata.name}`, pod);
  let seen = 0;
  gc.reset();
  const started = performance.now();
  const cpu = process.cpuUsage();
  await new Promise<void>((resolve) =>
    feed(
      (text) => {
        const event = JSON.parse(text) as Pod;
        map.set(`${event.metadata.namespace}/${event.metadata.name}`, event);
        seen = Number(event.metadata.annotations?.['seq']);
      },
      resolve,
    ),
  );
  report(started, cpu);
  if (seen !== events) throw new Error('lost events');
}

async function runInformer(): Promise<void> {
  let startWatch: (() => void) | undefined;
  const listerWatcher: ListerWatcher<Pod> = {
    list: () => of(listPage),
    watch: () =>
      new Observable<WatchEvent<Pod>>((subscriber) => {
        startWatch = () => feed((text) => subscriber.next({ type: 'MODIFIED', object: JSON.parse(text) as Pod }), () => undefined);
      }),
  };
  const informer = informerFrom(listerWatcher, { indexers: { [NAMESPACE_INDEX]: namespaceIndex, app: labelIndex('app') }, shareUnchanged: process.env['SHARE'] !== '0', freeze: process.env['FREEZE'] === '1' });
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  let synced: () => void = () => undefined;
  const isSynced = new Promise<void>((resolve) => (synced = resolve));
  if (variant === 'b-cache') {
    // The cache alone: snapshots, no handler queue.
    informer.informer$.subscribe((snapshot) => {
      if (snapshot.synced) synced();
      for (const change of snapshot.changes) if (change.type === 'update' && Number(change.object.metadata.annotations?.['seq']) === events) finish();
    });
  } else if (variant === 'b-changes') {
    let subscribersDone = 0;
    informer.synced$.subscribe(() => synced());
    for (let h = 0; h < handlerCount; h++) {
      informer.changes$.subscribe((change) => {
        if (change.type === 'update' && Number(change.object.metadata.annotations?.['seq']) === events && ++subscribersDone === handlerCount) finish();
      });
    }
  } else {
    let handlersDone = 0;
    let handlersSynced = 0;
    for (let h = 0; h < handlerCount; h++) {
      informer
        .handle({
          onUpdate: (_old, pod) => {
            if (Number(pod.metadata.annotations?.['seq']) === events && ++handlersDone === handlerCount) finish();
          },
        })
        .subscribe((event) => event.type === 'synced' && ++handlersSynced === handlerCount && synced());
    }
  }
  await isSynced;
  while (startWatch === undefined) await new Promise((resolve) => setImmediate(resolve));
  gc.reset();
  const started = performance.now();
  const cpu = process.cpuUsage();
  startWatch();
  await finished;
  report(started, cpu);
}

(variant === 'a2' ? runMap() : runInformer()).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  },
);
void podResource;
