import { silentLogger } from '../../lib/base/logger';
import * as net from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Subscription } from 'rxjs';
import type { Delta } from '../../lib/reflector/delta';
import type { Health } from '../../lib/reflector/health';
import { reflectorEvents } from '../../lib/reflector/reflect';
import type { ReflectConfig } from '../../lib/reflector/reflect';
import { pods } from '../../lib/resources/builtins';
import type { Pod } from '../../lib/resources/builtins';
import { kubeListerWatcher } from '../../lib/sources/kubeListerWatcher';
import { loadClientNode } from '../../apiserver/src';
import type { ApiServer, RequestRecord } from '../../apiserver/src';

/**
 * Helpers of the reflector fault suite (reflectFaults.spec.ts): a delta consumer that audits what
 * it is given, a pod mutator that remembers every resourceVersion it caused, request-log queries,
 * and a TCP proxy that can play a dead network path or a refusing port.
 */

/** `namespace/name`, the informer's key. */
export function keyOf(object: Pod): string {
  return `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
}

/** One run of the consumer between two Replaces: the Replace, then the watch events on top of it. */
export interface LedgerSegment {
  /** The resourceVersion of the Replace that opened the segment. */
  readonly replaceRv: number;
  /** The resourceVersions of the Added/Updated/Deleted deltas that followed, in arrival order. */
  readonly eventRvs: number[];
  /** The highest version the stream vouched for in this segment (last event or bookmark). */
  coveredRv: number;
}

/** What {@link DeltaLedger.audit} found against the mutations really made. */
export interface LedgerAudit {
  /** Mutations inside a segment's covered range that no delta delivered: lost events. */
  readonly missing: number[];
  /** Deltas carrying a version no mutation produced. */
  readonly unexpected: number[];
}

/**
 * A consumer of the delta stream that keeps the state (key → resourceVersion) the way an indexer
 * would, and records every rule the stream breaks instead of throwing, so a test can show them all.
 *
 * Replace pages fill a fresh map swapped in at `last` (a new `first` abandons an unfinished one;
 * a page's `deleted` leave it before its items go in);
 * Added/Updated set, Deleted removes. Per key it remembers how each version arrived
 * (`list@12`, `Added@13`), so the same (key, version) delivered twice by watch events is caught.
 */
export class DeltaLedger {
  private applied = new Map<string, number>();
  private pending: Map<string, number> | undefined;
  private highWater = -1;
  readonly segments: LedgerSegment[] = [];
  readonly deliveries = new Map<string, string[]>();
  readonly violations: string[] = [];
  /** Completed Replaces. */
  replaces = 0;
  /** Replaces abandoned by a new one before their last page. */
  abandonedReplaces = 0;
  /** Added/Updated/Deleted deltas seen. */
  events = 0;

  apply(delta: Delta<Pod>): void {
    switch (delta.type) {
      case 'Replace':
        return this.replacePage(delta.items, delta.deleted ?? [], delta.first, delta.last, delta.resourceVersion);
      case 'Bookmark': {
        const rv = Number(delta.resourceVersion);
        if (rv < this.highWater) this.violations.push(`bookmark ${rv} below the version already seen (${this.highWater})`);
        const segment = this.segments[this.segments.length - 1];
        if (segment !== undefined) segment.coveredRv = Math.max(segment.coveredRv, rv);
        this.highWater = Math.max(this.highWater, rv);
        return;
      }
      default:
        return this.event(delta.type, delta.object);
    }
  }

  /** The consumer's state as key → resourceVersion. */
  versions(): Map<string, string> {
    return new Map([...this.applied].map(([key, rv]) => [key, String(rv)]));
  }

  /** True while a Replace has started and not ended. */
  get replacing(): boolean {
    return this.pending !== undefined;
  }

  /**
   * Checks, segment by segment, that the watch events are exactly the mutations made after the
   * segment's Replace up to the last version it vouched for: nothing skipped, nothing invented.
   */
  audit(mutations: readonly number[]): LedgerAudit {
    const made = new Set(mutations);
    const missing: number[] = [];
    const unexpected: number[] = [];
    for (const segment of this.segments) {
      const delivered = new Set(segment.eventRvs);
      for (const rv of mutations) if (rv > segment.replaceRv && rv <= segment.coveredRv && !delivered.has(rv)) missing.push(rv);
      for (const rv of segment.eventRvs) if (!made.has(rv)) unexpected.push(rv);
    }
    return { missing, unexpected };
  }

  private deliveriesOf(key: string): string[] {
    let list = this.deliveries.get(key);
    if (list === undefined) this.deliveries.set(key, (list = []));
    return list;
  }

  private replacePage(items: readonly Pod[], deleted: readonly Pod[], first: boolean, last: boolean, resourceVersion: string): void {
    if (first) {
      if (this.pending !== undefined) this.abandonedReplaces += 1;
      this.pending = new Map();
    } else if (this.pending === undefined) {
      this.violations.push(`a Replace page with first=false arrived outside a Replace (rv ${resourceVersion})`);
      this.pending = new Map();
    }
    for (const gone of deleted) this.pending.delete(keyOf(gone));
    for (const item of items) this.pending.set(keyOf(item), Number(item.metadata.resourceVersion));
    if (!last) return;
    const rv = Number(resourceVersion);
    if (!(rv > 0)) this.violations.push(`the last Replace page has no usable resourceVersion (${JSON.stringify(resourceVersion)})`);
    if (rv < this.highWater) this.violations.push(`a Replace at ${rv} moved the cache back from ${this.highWater}`);
    for (const [key, itemRv] of this.pending) {
      if (itemRv > rv) this.violations.push(`Replace at ${rv} holds ${key} at the newer version ${itemRv}`);
      this.deliveriesOf(key).push(`list@${itemRv}`);
    }
    this.applied = this.pending;
    this.pending = undefined;
    this.replaces += 1;
    this.highWater = rv;
    this.segments.push({ replaceRv: rv, eventRvs: [], coveredRv: rv });
  }

  private event(type: 'Added' | 'Updated' | 'Deleted', object: Pod): void {
    this.events += 1;
    const key = keyOf(object);
    const rv = Number(object.metadata.resourceVersion);
    const label = `${type} ${key}@${rv}`;
    const segment = this.segments[this.segments.length - 1];
    if (segment === undefined) this.violations.push(`${label} arrived before any Replace`);
    if (this.pending !== undefined) this.violations.push(`${label} arrived inside an unfinished Replace`);
    const seen = this.deliveriesOf(key);
    if (seen.includes(`Added@${rv}`) || seen.includes(`Updated@${rv}`) || seen.includes(`Deleted@${rv}`)) {
      this.violations.push(`${label} delivered twice`);
    }
    if (rv <= this.highWater) this.violations.push(`${label} is not newer than the version already seen (${this.highWater}): duplicate or out of order`);
    const present = this.applied.has(key);
    if (type === 'Added' && present) this.violations.push(`${label} for a key the consumer already holds`);
    if (type !== 'Added' && !present) this.violations.push(`${label} for a key the consumer does not hold (an earlier event was lost)`);
    seen.push(`${type}@${rv}`);
    if (type === 'Deleted') this.applied.delete(key);
    else this.applied.set(key, rv);
    this.highWater = Math.max(this.highWater, rv);
    if (segment !== undefined) {
      segment.eventRvs.push(rv);
      segment.coveredRv = Math.max(segment.coveredRv, rv);
    }
  }
}

/** The server's pods as key → resourceVersion. */
export function serverVersions(server: ApiServer): Map<string, string> {
  return new Map(server.store.list(pods).map((pod) => [keyOf(pod), pod.metadata.resourceVersion ?? '']));
}

/** Creates, updates and deletes pods on the server, remembering the resourceVersion of each change. */
export class PodMutator {
  /** Every pod mutation's resourceVersion, in order. */
  readonly versions: number[] = [];
  private readonly live: [string, string][] = [];
  private serial = 0;

  constructor(private readonly server: ApiServer) {}

  create(namespace = 'default'): number {
    const name = `pod-${++this.serial}`;
    const pod: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { namespace, name }, spec: { containers: [{ name: 'app', image: 'app:1' }] } };
    this.live.push([namespace, name]);
    return this.record(this.server.store.create(pods, pod));
  }

  update(index: number): number {
    const [namespace, name] = this.live[index % this.live.length]!;
    const current = this.server.store.get(pods, namespace, name)!;
    const labels = { ...current.metadata.labels, touched: String(this.versions.length) };
    return this.record(this.server.store.update(pods, { ...current, metadata: { ...current.metadata, labels } }));
  }

  removeOldest(): number {
    const [namespace, name] = this.live.shift()!;
    return this.record(this.server.store.delete(pods, namespace, name));
  }

  /** `count` pods spread over two namespaces. */
  seed(count: number): void {
    for (let i = 0; i < count; i++) this.create(i % 2 === 0 ? 'default' : 'kube-system');
  }

  /** `count` mutations cycling create, update, delete; returns their resourceVersions in order. */
  burst(count: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < count; i++) {
      if (i % 3 === 0 || this.live.length === 0) out.push(this.create(i % 2 === 0 ? 'default' : 'kube-system'));
      else if (i % 3 === 1) out.push(this.update(i));
      else out.push(this.removeOldest());
    }
    return out;
  }

  private record(pod: Pod): number {
    const rv = Number(pod.metadata.resourceVersion);
    this.versions.push(rv);
    return rv;
  }
}

/** A subscribed reflector feeding a {@link DeltaLedger}, with every health report kept. */
export class ReflectorProbe {
  readonly ledger = new DeltaLedger();
  readonly health: Health[] = [];
  private readonly subscription: Subscription;

  /** `tap` sees each delta after the ledger has applied it (to act at an exact point of a list). */
  constructor(kubeConfig: KubeConfig, config: ReflectConfig, tap?: (delta: Delta<Pod>, ledger: DeltaLedger) => void) {
    // The faults are the point: what they do is read from the deltas and reports, not from log lines.
    this.subscription = reflectorEvents(kubeListerWatcher(kubeConfig, pods), { logger: silentLogger, ...config }).subscribe({
      next: (event) => {
        if (event.type === 'health') return void this.health.push(event.health);
        if (event.type === 'opened' || event.type === 'ended') return;
        this.ledger.apply(event);
        tap?.(event, this.ledger);
      },
      error: (error: unknown) => this.ledger.violations.push(`the delta stream errored: ${String(error)}`),
      complete: () => this.ledger.violations.push('the delta stream completed'),
    });
  }

  get lastHealth(): Health | undefined {
    return this.health[this.health.length - 1];
  }

  stop(): void {
    this.subscription.unsubscribe();
  }
}

/** The server's pod requests of one verb, in the order they were answered. */
export function podRequests(server: ApiServer, verb: 'list' | 'watch'): RequestRecord[] {
  return server.requests.entries.filter((entry) => entry.verb === verb && entry.resource === 'pods');
}

/** Pod list requests that start a list (no `continue`): one per list or relist. */
export function listStarts(server: ApiServer): RequestRecord[] {
  return podRequests(server, 'list').filter((entry) => entry.query['continue'] === undefined);
}

/** The `resourceVersion` query of each request ('' when absent). */
export function versionsOf(records: readonly RequestRecord[]): string[] {
  return records.map((record) => record.query['resourceVersion'] ?? '');
}

/** Polls a condition until it holds; the error names the condition and says what was still wrong. */
export async function waitFor(condition: () => boolean, describe: () => string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${String(condition)}: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A TCP proxy in front of the loopback server, to break the network path in ways HTTP faults cannot. */
export interface TcpProxy {
  /** Points at the proxy; same cluster otherwise. */
  readonly kubeConfig: KubeConfig;
  /**
   * Stops forwarding, both ways, on every open connection whose last request was a watch, and keeps
   * it open: a dead path (a vanished NAT entry) that neither side is told about. Returns how many.
   */
  freezeWatches(): number;
  /** The next connection opened is dead from the start: whatever request it carries never gets an answer. */
  freezeNextConnection(): void;
  /** Resets every connection and stops listening: new connections are refused. */
  refuse(): Promise<void>;
  /** Listens again on the same port. */
  accept(): Promise<void>;
  close(): Promise<void>;
}

interface ProxiedConnection {
  readonly client: net.Socket;
  readonly upstream: net.Socket;
  watch: boolean;
  frozen: boolean;
}

/** Starts a {@link TcpProxy} to `server` on a free loopback port. */
export async function startTcpProxy(server: ApiServer): Promise<TcpProxy> {
  const target = new URL(server.url);
  const connections = new Set<ProxiedConnection>();
  let freezeNext = false;
  const listener = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    const connection: ProxiedConnection = { client, upstream, watch: false, frozen: freezeNext };
    freezeNext = false;
    connections.add(connection);
    client.on('data', (chunk: Buffer) => {
      const head = chunk.toString('latin1', 0, Math.min(chunk.length, 1024));
      if (/^(GET|POST|PUT|PATCH|DELETE) /.test(head)) connection.watch = /[?&]watch=(1|true)\b/.test(head.split('\r\n', 1)[0] ?? '');
      if (!connection.frozen) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!connection.frozen) client.write(chunk);
    });
    const drop = (): void => {
      connections.delete(connection);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', drop);
    // A frozen path hides the server's side closing too: the client must find out by itself.
    upstream.on('close', () => {
      if (!connection.frozen) drop();
    });
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  const listen = (port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(port, '127.0.0.1', () => {
        listener.off('error', reject);
        resolve((listener.address() as net.AddressInfo).port);
      });
    });
  const shut = (): Promise<void> =>
    new Promise((resolve) => {
      for (const connection of [...connections]) {
        connection.client.destroy();
        connection.upstream.destroy();
      }
      connections.clear();
      if (!listener.listening) return resolve();
      listener.close(() => resolve());
    });
  const port = await listen(0);
  const { KubeConfig: KubeConfigClass } = loadClientNode();
  const kubeConfig = new KubeConfigClass();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'proxy', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'proxy' }],
    contexts: [{ name: 'proxy', cluster: 'proxy', user: 'proxy' }],
    currentContext: 'proxy',
  });
  return {
    kubeConfig,
    freezeWatches: () => {
      let frozen = 0;
      for (const connection of connections) {
        if (connection.watch && !connection.frozen) {
          connection.frozen = true;
          frozen += 1;
        }
      }
      return frozen;
    },
    freezeNextConnection: () => {
      freezeNext = true;
    },
    refuse: shut,
    accept: async () => {
      await listen(port);
    },
    close: shut,
  };
}
