/**
 * The server process of the benchmark: the loopback API server filled with realistic objects of
 * one kind per setup (`ObjectKind`: the churn generator's pods with managedFields, ~4.4 KB of JSON
 * each, or without, ~1.4 KB; or Argo CD–style Applications, a custom resource of ~20 KB, from
 * `makeApplication`), driven over IPC by the
 * orchestrator. It produces MODIFIED events on request, each stamped with its write time, either
 * as fast as the client takes them (flow-controlled by the client's acknowledgements) or at a
 * fixed rate, and triggers a 410 relist. Each setup answers like the version profile of its
 * scenario (`SCENARIO_SERVER_VERSION`: paged first lists, a 1.33 server that answers them whole,
 * a 1.36 server that serves streaming lists), and compresses responses over 128 KB for clients
 * that ask, as the API server does.
 *
 * Pre-serialisation: the loopback server stringifies each updated object once (~4.4 KB, as costly
 * as the client's JSON.parse), which on two cores made the server, not the client, the limit of
 * the a1 floor. So every pod gets its bench annotations once at setup, its wire JSON is cut into a
 * template around the three values an update changes (resourceVersion, sequence, write time), and
 * a store listener registered before any watch hands the server the rendered JSON of each update
 * (the StoredObject's cached `json`), checked against JSON.stringify now and then. The bytes on
 * the wire are the same; only the server's cost of producing them changes.
 */
import { startApiServer, type ApiServer } from '../apiserver/src/server';
import type { ClusterStoreImpl } from '../apiserver/src/clusterStore';
import type { StoreEvent } from '../apiserver/src/history';
import { createChurn } from '../apiserver/src/churn';
import type { Resource } from '../lib/resources/resource';
import type { KubeObject } from '../lib/base/object';
import { applications, makeApplication } from '../apiserver/src/applications';
import { seededRandom } from '../apiserver/src/random';
import { flowControlledProducer } from './flowControl';
import {
  SCENARIO_SERVER_VERSION,
  RELIST_MARKER_ANNOTATION,
  SEQUENCE_ANNOTATION,
  WRITTEN_AT_ANNOTATION,
  sharedClockMs,
  type ServerCommand,
  type ServerMessage,
  type ServerReply,
  type ServerRequest,
  benchResourceOf,
  type ObjectKind,
  type Scenario,
} from './protocol';

/** History enough for a client that connects its watch while events are already flowing. */
const HISTORY_LIMIT = 20_000;

interface PodRef {
  readonly namespace: string;
  readonly name: string;
}

/** The JSON of a pod cut around the values an update changes; `slots` names them in order. */
interface Template {
  readonly parts: readonly string[];
  readonly slots: readonly ('rv' | 'seq' | 'stamp')[];
}

type TemplateValues = Readonly<Record<Template['slots'][number], string>>;

/** Cuts `json` around the values; undefined when a value does not occur exactly once. */
function templateOf(json: string, values: TemplateValues): Template | undefined {
  const needles: [Template['slots'][number], string][] = [
    ['rv', `"resourceVersion":"${values.rv}"`],
    ['seq', `"${SEQUENCE_ANNOTATION}":"${values.seq}"`],
    ['stamp', `"${WRITTEN_AT_ANNOTATION}":"${values.stamp}"`],
  ];
  const cuts: { slot: Template['slots'][number]; start: number; end: number }[] = [];
  for (const [slot, needle] of needles) {
    const at = json.indexOf(needle);
    if (at === -1 || json.indexOf(needle, at + 1) !== -1) return undefined;
    const end = at + needle.length - 1;
    cuts.push({ slot, start: end - values[slot].length, end });
  }
  cuts.sort((a, b) => a.start - b.start);
  const parts: string[] = [];
  let from = 0;
  for (const cut of cuts) {
    parts.push(json.slice(from, cut.start));
    from = cut.end;
  }
  parts.push(json.slice(from));
  return { parts, slots: cuts.map((cut) => cut.slot) };
}

function render(template: Template, values: TemplateValues): string {
  const { parts, slots } = template;
  let out = parts[0]!;
  for (let i = 0; i < slots.length; i++) out += values[slots[i]!] + parts[i + 1]!;
  return out;
}

const templates = new Map<string, Template>();
/** The JSON the next store event should carry, by the resourceVersion it will get. */
let pendingJson: { rv: number; json: string } | undefined;
let preSerialized = true;
let checkedEvents = 0;

/** Registered before any watch, so the JSON is in place when the watches read it. */
function attachPreSerialized(event: StoreEvent): void {
  if (pendingJson === undefined || event.rv !== pendingJson.rv) return;
  const json = pendingJson.json;
  pendingJson = undefined;
  if (checkedEvents++ < 20 || checkedEvents % 997 === 0) {
    if (json !== JSON.stringify(event.object.object)) {
      preSerialized = false;
      process.stderr.write('bench server: pre-serialised JSON differs from JSON.stringify; falling back to the server\'s own\n');
      return;
    }
  }
  event.object.json = json;
}

let server: ApiServer | undefined;
/** The resource of the current setup's objects. */
let resource: Resource<KubeObject> = benchResourceOf('pod');
let targets: PodRef[] = [];
let nextTarget = 0;

function send(message: ServerMessage): void {
  process.send?.(message);
}

function reply(message: ServerReply): void {
  send({ type: 'reply', reply: message });
}

function store(): ApiServer['store'] {
  if (server === undefined) throw new Error('no server: send setup first');
  return server.store;
}

/** Writes one MODIFIED event: the next pod in turn, stamped with the time of the write. */
function updatePod(target: PodRef, sequence: number, extraAnnotation?: string): void {
  const current = store().get(resource, target.namespace, target.name);
  if (current === undefined) throw new Error(`${resource.kind} ${target.namespace}/${target.name} vanished`);
  const values: TemplateValues = { rv: String(Number(store().resourceVersion) + 1), seq: String(sequence), stamp: sharedClockMs().toFixed(3) };
  const annotations: Record<string, string> = { ...current.metadata.annotations, [SEQUENCE_ANNOTATION]: values.seq, [WRITTEN_AT_ANNOTATION]: values.stamp };
  if (extraAnnotation !== undefined) annotations[extraAnnotation] = 'true';
  const next: KubeObject = { ...current, metadata: { ...current.metadata, annotations } };
  const key = `${target.namespace}/${target.name}`;
  const template = extraAnnotation === undefined && preSerialized ? templates.get(key) : undefined;
  if (template !== undefined) pendingJson = { rv: Number(values.rv), json: render(template, values) };
  const stored = store().update(resource, next);
  pendingJson = undefined;
  if (template === undefined && extraAnnotation === undefined) {
    const cut = templateOf(JSON.stringify(stored), values);
    if (cut !== undefined) templates.set(key, cut);
  }
  if (extraAnnotation !== undefined) templates.delete(key);
}

/** Writes one MODIFIED event: the next pod in turn, stamped with its sequence number and write time. */
function updateOne(sequence: number, extraAnnotation?: string): void {
  const target = targets[nextTarget]!;
  nextTarget = (nextTarget + 1) % targets.length;
  updatePod(target, sequence, extraAnnotation);
}

/** Namespaces the objects are spread over. */
const NAMESPACES = 10;

/** Fills the store with `count` objects of the kind, deterministically. */
function populate(store: ApiServer['store'], objects: ObjectKind, count: number): void {
  if (objects !== 'application') {
    createChurn(store, { pods: count, namespaces: NAMESPACES, seed: 42, managedFields: objects === 'pod' }).populate();
    return;
  }
  const random = seededRandom(42);
  for (let i = 0; i < count; i++) {
    const namespace = `ns-${i % NAMESPACES}`;
    store.create(applications, makeApplication(random, namespace, `app-${i.toString(36).padStart(4, '0')}`));
  }
}

async function setup(podCount: number, scenario: Scenario, objects: ObjectKind): Promise<void> {
  await server?.close();
  server = undefined;
  targets = [];
  // Drop the previous population before building the next one.
  (globalThis as { gc?: () => void }).gc?.();
  const serverVersion = SCENARIO_SERVER_VERSION[scenario];
  resource = benchResourceOf(objects);
  server = await startApiServer({ historyLimit: HISTORY_LIMIT, bookmarkIntervalMs: 0, resources: [applications], ...(serverVersion === undefined ? {} : { serverVersion }) });
  populate(server.store, objects, podCount);
  templates.clear();
  preSerialized = true;
  checkedEvents = 0;
  (server.store as ClusterStoreImpl).subscribe(resource, attachPreSerialized);
  targets = server.store.list(resource).map((pod) => ({ namespace: pod.metadata.namespace ?? '', name: pod.metadata.name }));
  // Every pod gets its bench annotations now (and a template), before any client lists.
  for (const target of targets) updatePod(target, 0);
  nextTarget = 0;
  const all = server.store.list(resource);
  const sample = all.slice(0, 100);
  const podJsonBytes = sample.reduce((sum, pod) => sum + Buffer.byteLength(JSON.stringify(pod)), 0) / Math.max(1, sample.length);
  send({ type: 'ready', url: server.url, podJsonBytes, preSerialized: preSerialized && templates.size === targets.length });
}

const producer = flowControlledProducer((sequence) => updateOne(sequence));

/** Produces `count` events at a fixed rate, in 5 ms ticks. */
function pace(count: number, ratePerSecond: number): Promise<ServerReply> {
  const started = performance.now();
  let done = 0;
  let busyMs = 0;
  return new Promise<ServerReply>((resolve) => {
    const timer = setInterval(() => {
      const t0 = performance.now();
      const due = Math.min(count, Math.floor(((t0 - started) * ratePerSecond) / 1000));
      while (done < due) updateOne(++done);
      busyMs += performance.now() - t0;
      if (done >= count) {
        clearInterval(timer);
        resolve({ type: 'produced', count, busyMs, elapsedMs: performance.now() - started });
      }
    }, 5);
  });
}

let listsBeforeRelist = 0;

function listRequests(): number {
  return server?.requests.entries.filter((entry) => entry.verb === 'list').length ?? 0;
}

/**
 * The client's watch was armed to end cleanly after its next event. That event (the trigger)
 * goes out; then the marker changes and history is compacted, all in this turn, before the
 * client can re-watch: its re-watch from the trigger's resourceVersion gets 410 Expired, and it
 * relists. The marker is in the relist, and nowhere else.
 */
function relist(): ServerReply {
  listsBeforeRelist = listRequests();
  const at = sharedClockMs();
  updateOne(0);
  updateOne(0, RELIST_MARKER_ANNOTATION);
  store().compact();
  return { type: 'relist-triggered', at };
}

async function onRequest(request: ServerRequest): Promise<void> {
  switch (request.type) {
    case 'produce':
      return reply(await producer.produce(request.count, request.window));
    case 'pace':
      return reply(await pace(request.count, request.ratePerSecond));
    case 'ack':
      return producer.onAck(request.handled);
    case 'relist':
      return reply(relist());
    case 'relist-check':
      return reply({ type: 'relist-checked', lists: listRequests() - listsBeforeRelist });
  }
}

process.on('message', (command: ServerCommand) => {
  const run = async (): Promise<void> => {
    switch (command.type) {
      case 'setup':
        return setup(command.pods, command.scenario, command.objects);
      case 'arm':
        server?.faults.clear();
        server?.requests.clear();
        if (command.closeWatchAfterEvents !== undefined) {
          server?.faults.inject({ kind: 'closeAfterEvents', events: command.closeWatchAfterEvents }, { verb: 'watch', resource: resource.plural });
        }
        return send({ type: 'armed' });
      case 'client':
        return onRequest(command.request);
      case 'shutdown':
        await server?.close();
        process.exit(0);
    }
  };
  run().catch((error: unknown) => send({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) }));
});
