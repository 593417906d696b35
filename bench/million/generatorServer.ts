/**
 * The server process of the million-object run (`npm run bench:million`): a minimal API server for
 * `/api/v1/pods` that generates its pods as it writes them, so that a million of them (4.4 GB of
 * JSON) never sit in its memory. It holds a thousand pods made by the churn generator's `makePod`
 * (realistic shape, two managedFields entries, ~4.4 KB of JSON each), each cut once into a
 * template around the values that make pod i unique (name, uid, resourceVersion) and the two
 * bench annotations an update changes (sequence, write time). Pod i is template i mod 1000 filled
 * with i's values: every pod has its own name and uid, as on a cluster.
 *
 * What it answers (the rest is 404):
 * - a list (no `watch`): the whole collection in one response, whatever `limit` says, as every
 *   API server answers `resourceVersion=0` from its watch cache; written in chunks as the socket
 *   drains;
 * - a watch with `sendInitialEvents=true`: every pod as ADDED, the initial-events-end bookmark, then
 *   the live updates (a streaming list, as served from Kubernetes 1.34);
 * - any other watch: the updates after its resourceVersion (from a history of the last
 *   {@link HISTORY_LIMIT}), then the live ones.
 * Asked for `as=PartialObjectMetadata(List)` (a metadata-only informer), it writes each pod's
 * metadata (managedFields included, as the API server does). No compression: the loopback run
 * measures the client's parse and cache, not gzip.
 *
 * A list or watch with KEP-5866's `shardSelector` (a sharded informer's `server` mode,
 * lib/sharding) gets only the pods whose uid (or namespace) hashes into its ranges, matched by the
 * loopback API server's own parser and matcher (apiserver/src/shardSelector.ts) on pod i's uid and
 * namespace, computed from i before anything is rendered; a list echoes the selector in
 * `metadata.shardInfo`, as a server with the `ShardedListAndWatch` gate does, and a selector that
 * server refuses gets its 500.
 *
 * Updates come on the harness's requests (`produce`, flow-controlled by `ack`s): MODIFIED events
 * over the pods in turn, stamped with their sequence number and write time. Lists made after
 * updates would still carry the first versions: the run never lists after updating.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { makePod } from '../../apiserver/src/pods';
import { seededRandom } from '../../apiserver/src/random';
import { SEQUENCE_ANNOTATION, WRITTEN_AT_ANNOTATION, sharedClockMs, type ServerRequest } from '../protocol';
import type { MillionServerCommand, MillionServerMessage } from './messages';
import { flowControlledProducer } from '../flowControl';
import { parseRequestShardSelector, ShardSelectorError } from '../../apiserver/src/shardSelector';

const BASE_PODS = 1000;
const NAMESPACES = 10;
/** Updates kept for a watch that connects after they were written (the harness's window is 4096). */
const HISTORY_LIMIT = 20_000;
/** Pods per write while streaming a list. */
const CHUNK = 64;
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

type Slot = 'name' | 'uid' | 'rv' | 'seq' | 'stamp';
const SENTINELS: Readonly<Record<Slot, string>> = { name: '@@name@@', uid: '@@uid@@', rv: '@@rv@@', seq: '@@seq@@', stamp: '@@stamp@@' };

interface Template {
  readonly parts: readonly string[];
  readonly slots: readonly Slot[];
  /** The name before the per-pod suffix, e.g. `web-7d9fkq2b5x-`. */
  readonly namePrefix: string;
}

/** Cuts `json` at every sentinel. */
function templateOf(json: string, namePrefix: string): Template {
  const pattern = new RegExp(Object.values(SENTINELS).join('|'), 'g');
  const bySentinel = new Map(Object.entries(SENTINELS).map(([slot, sentinel]) => [sentinel, slot as Slot]));
  const parts: string[] = [];
  const slots: Slot[] = [];
  let from = 0;
  for (const match of json.matchAll(pattern)) {
    parts.push(json.slice(from, match.index));
    slots.push(bySentinel.get(match[0])!);
    from = match.index + match[0].length;
  }
  parts.push(json.slice(from));
  return { parts, slots, namePrefix };
}

/** Full pods and their metadata (`PartialObjectMetadata`), one template of each per base pod. */
function makeTemplates(): { full: Template[]; metadata: Template[] } {
  const random = seededRandom(42);
  const full: Template[] = [];
  const metadata: Template[] = [];
  for (let k = 0; k < BASE_PODS; k++) {
    const pod = makePod(random, `ns-${k % NAMESPACES}`, SENTINELS.name);
    const labels = pod.metadata.labels ?? {};
    const namePrefix = `${labels['app']}-${labels['pod-template-hash']}-`;
    const meta = {
      ...pod.metadata,
      uid: SENTINELS.uid,
      resourceVersion: SENTINELS.rv,
      creationTimestamp: pod.metadata.managedFields?.[0]?.time ?? '2026-01-01T00:00:00Z',
      annotations: { [SEQUENCE_ANNOTATION]: SENTINELS.seq, [WRITTEN_AT_ANNOTATION]: SENTINELS.stamp },
    };
    full.push(templateOf(JSON.stringify({ ...pod, metadata: meta }), namePrefix));
    metadata.push(templateOf(JSON.stringify({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: meta }), namePrefix));
  }
  return { full, metadata };
}

const templates = makeTemplates();

/** Pod i's uid: derived from i, unique, in the shape of a real one. */
export function generatedUid(index: number): string {
  const hash = (Math.imul(index + 1, 2654435761) >>> 0).toString(16).padStart(8, '0');
  return `${hash}-${hash.slice(0, 4)}-4${hash.slice(5, 8)}-a${hash.slice(1, 4)}-${index.toString(16).padStart(12, '0')}`;
}

/** Pod i's namespace: its template's. */
export function generatedNamespace(index: number): string {
  return `ns-${(index % BASE_PODS) % NAMESPACES}`;
}

/** Pod i's unique values: a name suffix and a uid derived from i. */
function render(template: Template, index: number, rv: number, seq: number, stamp: string): string {
  const values: Readonly<Record<Slot, string>> = {
    name: template.namePrefix + index.toString(36).padStart(5, '0'),
    uid: generatedUid(index),
    rv: String(rv),
    seq: String(seq),
    stamp,
  };
  const { parts, slots } = template;
  let out = parts[0]!;
  for (let i = 0; i < slots.length; i++) out += values[slots[i]!] + parts[i + 1]!;
  return out;
}

function podJson(index: number, metadata: boolean): string {
  const template = (metadata ? templates.metadata : templates.full)[index % BASE_PODS]!;
  return render(template, index, index + 1, 0, '0');
}

/** Which pods a request selects by its `shardSelector` (every pod without one), and the selector to echo. */
interface PodFilter {
  readonly includes: (index: number) => boolean;
  readonly echo: string | undefined;
}

/** @throws ShardSelectorError worded as the API server words it, for a selector it refuses. */
function podFilterOf(query: URLSearchParams): PodFilter {
  const text = query.get('shardSelector');
  if (text === null || text === '') return { includes: () => true, echo: undefined };
  const selector = parseRequestShardSelector(text);
  // The matcher reads metadata.uid or metadata.namespace: pod i's, without rendering it.
  return { includes: (index) => selector.matches({ metadata: { name: '', uid: generatedUid(index), namespace: generatedNamespace(index) } }), echo: selector.text };
}

/** Writes what `item` makes of each index 0 … count−1 (undefined: nothing), `CHUNK` indexes at a time, waiting for the socket to drain. */
async function writeItems(response: http.ServerResponse, count: number, item: (index: number) => string | undefined): Promise<boolean> {
  for (let start = 0; start < count; start += CHUNK) {
    if (response.destroyed) return false;
    let text = '';
    for (let index = start; index < Math.min(count, start + CHUNK); index++) text += item(index) ?? '';
    if (text !== '' && !response.write(text)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          response.off('drain', done);
          response.off('close', done);
          resolve();
        };
        response.on('drain', done);
        response.on('close', done);
      });
    }
  }
  return !response.destroyed;
}

function failWith(response: http.ServerResponse, code: number, reason: string, message: string): void {
  response.writeHead(code, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code, message }));
}

/** The generating server's HTTP side and its state: what the child process serves, and what a spec serves in-process. */
export interface PodGenerator {
  /** The HTTP handler: lists and watches of `/api/v1/pods`, 404 elsewhere. */
  readonly handle: (request: http.IncomingMessage, response: http.ServerResponse) => void;
  /** Serves `pods` pods from now on; the updates so far and the open watches are dropped. */
  setup(pods: number): void;
  /** One MODIFIED event of pod (sequence − 1) mod N, written to every watch that selects it and kept in the history. */
  update(sequence: number): void;
  /** Ends every open watch. */
  closeWatches(): void;
}

/** A generator of pods; it serves none until `setup`. */
export function podGenerator(): PodGenerator {
  let podCount = 0;
  /** The resourceVersion of the list: pods carry 1..podCount; updates count on from here. */
  let listRv = 0;
  let updates = 0;
  const history: { rv: number; index: number; full: string; metadata: string }[] = [];
  const watchers = new Set<{ response: http.ServerResponse; metadata: boolean; filter: PodFilter }>();
  const currentRv = (): number => listRv + updates;

  async function list(response: http.ServerResponse, metadata: boolean, filter: PodFilter): Promise<void> {
    const kind = metadata ? '"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1"' : '"kind":"PodList","apiVersion":"v1"';
    const shardInfo = filter.echo === undefined ? '' : `,"shardInfo":{"selector":${JSON.stringify(filter.echo)}}`;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write(`{${kind},"metadata":{"resourceVersion":"${currentRv()}"${shardInfo}},"items":[`);
    let written = 0;
    const item = (index: number): string | undefined => (filter.includes(index) ? (written++ === 0 ? '' : ',') + podJson(index, metadata) : undefined);
    if (await writeItems(response, podCount, item)) response.end(']}');
  }

  async function watch(response: http.ServerResponse, query: URLSearchParams, metadata: boolean, filter: PodFilter): Promise<void> {
    response.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    response.flushHeaders();
    let from = Number(query.get('resourceVersion') ?? '0');
    if (query.get('sendInitialEvents') === 'true') {
      if (!(await writeItems(response, podCount, (index) => (filter.includes(index) ? `{"type":"ADDED","object":${podJson(index, metadata)}}\n` : undefined)))) return;
      const kind = metadata ? '"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1"' : '"kind":"Pod","apiVersion":"v1"';
      from = currentRv();
      response.write(`{"type":"BOOKMARK","object":{${kind},"metadata":{"resourceVersion":"${from}","annotations":{"${INITIAL_EVENTS_END}":"true"}}}}\n`);
    }
    const missed = history.filter((event) => event.rv > from && filter.includes(event.index)).map((event) => (metadata ? event.metadata : event.full));
    if (missed.length > 0) response.write(missed.join(''));
    const watcher = { response, metadata, filter };
    watchers.add(watcher);
    response.on('close', () => watchers.delete(watcher));
  }

  function handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (url.pathname !== '/api/v1/pods') return failWith(response, 404, 'NotFound', `${url.pathname} is not served here`);
    let filter: PodFilter;
    try {
      filter = podFilterOf(url.searchParams);
    } catch (error) {
      if (error instanceof ShardSelectorError) return failWith(response, 500, 'InternalError', error.message);
      throw error;
    }
    const metadata = (request.headers.accept ?? '').includes('as=PartialObjectMetadata');
    const isWatch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    const done = isWatch ? watch(response, url.searchParams, metadata, filter) : list(response, metadata, filter);
    done.catch((error: unknown) => {
      process.stderr.write(`generator server: ${String(error)}\n`);
      response.destroy();
    });
  }

  function update(sequence: number): void {
    updates++;
    const rv = currentRv();
    const index = (sequence - 1) % podCount;
    const stamp = sharedClockMs().toFixed(3);
    const line = (metadata: boolean): string => `{"type":"MODIFIED","object":${render((metadata ? templates.metadata : templates.full)[index % BASE_PODS]!, index, rv, sequence, stamp)}}\n`;
    const event = { rv, index, full: line(false), metadata: line(true) };
    history.push(event);
    if (history.length > HISTORY_LIMIT) history.splice(0, history.length - HISTORY_LIMIT);
    for (const watcher of watchers) if (watcher.filter.includes(index)) watcher.response.write(watcher.metadata ? event.metadata : event.full);
  }

  function closeWatches(): void {
    for (const watcher of watchers) watcher.response.destroy();
    watchers.clear();
  }

  return {
    handle,
    setup(pods) {
      podCount = pods;
      listRv = pods;
      updates = 0;
      history.length = 0;
      closeWatches();
    },
    update,
    closeWatches,
  };
}

/** The child process of the million-object runs: the generator on a loopback port, driven by the orchestrator's messages. */
function runAsChild(): void {
  const generator = podGenerator();
  const producer = flowControlledProducer((sequence) => generator.update(sequence));
  const send = (message: MillionServerMessage): void => void process.send?.(message);
  const onRequest = async (request: ServerRequest): Promise<void> => {
    if (request.type === 'produce') send({ type: 'reply', reply: await producer.produce(request.count, request.window) });
    else if (request.type === 'ack') producer.onAck(request.handled);
    else send({ type: 'failed', message: `the generator server does not serve ${request.type}` });
  };
  const server = http.createServer(generator.handle);
  server.keepAliveTimeout = 60_000;
  const ready = (): void => {
    const { port } = server.address() as AddressInfo;
    send({ type: 'ready', url: `http://127.0.0.1:${port}`, podJsonBytes: Buffer.byteLength(podJson(0, false)), metadataJsonBytes: Buffer.byteLength(podJson(0, true)) });
  };
  process.on('message', (command: MillionServerCommand) => {
    switch (command.type) {
      case 'setup':
        generator.setup(command.pods);
        if (server.listening) ready();
        else server.listen(0, '127.0.0.1', ready);
        return;
      case 'memory': {
        const usage = process.memoryUsage();
        const resources = process.resourceUsage();
        send({ type: 'memory', rssBytes: usage.rss, heapUsedBytes: usage.heapUsed, peakRssBytes: resources.maxRSS * 1024, cpuMs: (resources.userCPUTime + resources.systemCPUTime) / 1000 });
        return;
      }
      case 'client':
        void onRequest(command.request);
        return;
      case 'shutdown':
        generator.closeWatches();
        server.close(() => process.exit(0));
        server.closeAllConnections();
        return;
    }
  });
}

if (require.main === module) runAsChild();
