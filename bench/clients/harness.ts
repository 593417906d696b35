/**
 * The measuring half of every client process. A variant (a1, a2, b, c) only has to list, watch,
 * cache and call the harness's handlers; the harness times the phases of the plan, relays
 * requests to the server and reports one ClientResult to the orchestrator.
 */
import type { KubeObject } from '../../lib/base/object';
import {
  RELIST_MARKER_ANNOTATION,
  SEQUENCE_ANNOTATION,
  WRITTEN_AT_ANNOTATION,
  sharedClockMs,
  type ClientCommand,
  type ClientConfig,
  type ClientMessage,
  type ClientResult,
  type LatencyResult,
  type RelistResult,
  type ServerReply,
  type ServerRequest,
  type SyncResult,
  type ThroughputResult,
} from '../protocol';
import { LatencyRecorder } from '../stats';

/** What a handler subscription receives: the new state of an updated object. */
export type UpdateHandler = (object: KubeObject) => void;

/** A client under test: an informer (or a floor) that calls `handlers` on every update. */
export interface ClientUnderTest {
  /** Lists, caches, starts watching; resolves once the initial list is cached (synced). */
  start(): Promise<void>;
  /** Stops watching and releases the cache. */
  stop(): Promise<void>;
}

/** Builds a variant from its configuration and the handler subscriptions to register. */
export type VariantFactory = (config: ClientConfig, handlers: readonly UpdateHandler[]) => ClientUnderTest;

/** How many handled events between two acknowledgements to the server (its flow-control window). */
const ACK_EVERY = 256;
/** Events the server may run ahead of the slowest client in the saturated phase. */
const PRODUCE_WINDOW = 4096;
const STALL_TICK_MS = 5;

const DEBUG = process.env['BENCH_DEBUG'] === '1';

function debug(text: string): void {
  if (DEBUG) process.stderr.write(`[client ${process.pid} ${performance.now().toFixed(0)} ms] ${text}\n`);
}

function send(message: ClientMessage): void {
  process.send?.(message);
}

/** Sends and resolves once the message has left the process (before exiting). */
function sendAndFlush(message: ClientMessage): Promise<void> {
  return new Promise<void>((resolve) => {
    if (process.send === undefined) resolve();
    else process.send(message, undefined, undefined, () => resolve());
  });
}

/** Main-thread CPU time in ms (what other processes on the cores do not inflate). */
function threadCpuMs(): number {
  const usage = process.threadCpuUsage();
  return (usage.user + usage.system) / 1000;
}

/**
 * Measures the longest event-loop stall (timer drift) while running, and the most main-thread
 * CPU time spent between two ticks: the same stall as the thread worked it, which other
 * processes sharing the cores do not lengthen (a GC pause waiting for helper threads counts less).
 */
class StallMonitor {
  private maxStall = 0;
  private maxStallCpu = 0;
  private last = performance.now();
  private lastCpu = threadCpuMs();
  private readonly timer: ReturnType<typeof setInterval>;
  private readonly onTick?: () => void;

  constructor(onTick?: () => void) {
    this.onTick = onTick;
    this.timer = setInterval(() => {
      this.tick();
      this.onTick?.();
    }, STALL_TICK_MS);
  }

  private tick(): void {
    const now = performance.now();
    const cpu = threadCpuMs();
    this.maxStall = Math.max(this.maxStall, now - this.last - STALL_TICK_MS);
    this.maxStallCpu = Math.max(this.maxStallCpu, cpu - this.lastCpu);
    this.last = now;
    this.lastCpu = cpu;
  }

  /** Stops; the longest stall in ms of wall time and of main-thread CPU time (counting the time since the last tick). */
  stop(): { wallMs: number; cpuMs: number } {
    clearInterval(this.timer);
    this.tick();
    return { wallMs: Math.max(0, this.maxStall), cpuMs: this.maxStallCpu };
  }
}

/**
 * Follows each handler's progress through a phase by the highest sequence number it has seen,
 * and resolves when every handler has seen the last one. Updates a handler never saw because
 * its queue coalesced them count as handled: the handler saw a newer state of the object.
 */
class Tracker {
  private seen: number[];
  private delivered = 0;
  private target = Number.POSITIVE_INFINITY;
  private resolveDone: (() => void) | undefined;
  private latencies: LatencyRecorder | undefined;
  private resolveMarker: ((arrivedAt: number) => void) | undefined;
  private acked = 0;

  constructor(readonly handlerCount: number) {
    this.seen = new Array<number>(handlerCount).fill(0);
  }

  /** The handler subscriptions: each reads the stamps, as a real handler reads its object. */
  handlers(): UpdateHandler[] {
    return Array.from({ length: this.handlerCount }, (_, index) => (object: KubeObject) => this.handle(index, object));
  }

  /** Notifications the first handler received in the phase (fewer than events when coalesced). */
  get deliveredCount(): number {
    return this.delivered;
  }

  private handle(index: number, object: KubeObject): void {
    const annotations = object.metadata.annotations;
    if (annotations === undefined) return;
    if (index === 0 && this.resolveMarker !== undefined && annotations[RELIST_MARKER_ANNOTATION] !== undefined) {
      const resolve = this.resolveMarker;
      this.resolveMarker = undefined;
      resolve(sharedClockMs());
      return;
    }
    const sequenceText = annotations[SEQUENCE_ANNOTATION];
    if (sequenceText === undefined) return;
    const sequence = Number(sequenceText);
    if (sequence <= this.seen[index]!) return;
    this.seen[index] = sequence;
    if (index === 0) {
      this.delivered++;
      this.latencies?.record(sharedClockMs() - Number(annotations[WRITTEN_AT_ANNOTATION]));
      if (sequence - this.acked >= ACK_EVERY) {
        this.acked = sequence;
        send({ type: 'server', request: { type: 'ack', handled: sequence } });
      }
    }
    if (sequence >= this.target && this.resolveDone !== undefined && this.seen.every((s) => s >= this.target)) {
      const resolve = this.resolveDone;
      this.resolveDone = undefined;
      resolve();
    }
  }

  /** Starts a phase: resolves when every handler has seen sequence number `target`. */
  expect(target: number, latencies?: LatencyRecorder): Promise<void> {
    this.seen = new Array<number>(this.handlerCount).fill(0);
    this.delivered = 0;
    this.acked = 0;
    this.target = target;
    this.latencies = latencies;
    return new Promise<void>((resolve) => {
      this.resolveDone = resolve;
    });
  }

  /** Resolves with the arrival time of the relist marker at the first handler. */
  expectMarker(): Promise<number> {
    return new Promise<number>((resolve) => {
      this.resolveMarker = resolve;
    });
  }
}

/** Requests to the server and their replies, matched in order (one request of a kind at a time). */
class ServerLink {
  private readonly waiting: ((reply: ServerReply) => void)[] = [];

  constructor() {
    process.on('message', (message: ClientCommand) => {
      if (message.type === 'reply') this.waiting.shift()?.(message.reply);
    });
  }

  request(request: ServerRequest): Promise<ServerReply> {
    return new Promise<ServerReply>((resolve) => {
      this.waiting.push(resolve);
      send({ type: 'server', request });
    });
  }

  detach(): void {
    process.removeAllListeners('message');
  }
}

function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('heap measurement needs --expose-gc');
  gc();
  gc();
}

async function measureSync(client: ClientUnderTest): Promise<SyncResult> {
  let peakHeap = 0;
  const sampleHeap = (): void => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  };
  const monitor = new StallMonitor(sampleHeap);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await client.start();
  const syncMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const stall = monitor.stop();
  sampleHeap();
  return { syncMs, cpuMs: (used.user + used.system) / 1000, peakRssBytes: process.resourceUsage().maxRSS * 1024, maxStallMs: stall.wallMs, maxStallCpuMs: stall.cpuMs, peakHeapBytes: peakHeap };
}

async function measureThroughput(server: ServerLink, tracker: Tracker, events: number): Promise<ThroughputResult> {
  const done = tracker.expect(events);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const produced = server.request({ type: 'produce', count: events, window: PRODUCE_WINDOW });
  await done;
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const stats = await produced;
  if (stats.type !== 'produced') throw new Error(`unexpected reply ${stats.type}`);
  return { events, delivered: tracker.deliveredCount, eventsPerSecond: (events * 1000) / elapsed, cpuShare: (cpu.user + cpu.system) / 1000 / elapsed, cpuMicrosPerEvent: (cpu.user + cpu.system) / events, serverEventsPerSecond: (stats.count * 1000) / Math.max(stats.busyMs, 1e-3) };
}

async function measureLatency(server: ServerLink, tracker: Tracker, events: number, ratePerSecond: number): Promise<LatencyResult> {
  const recorder = new LatencyRecorder(events);
  const done = tracker.expect(events, recorder);
  const paced = server.request({ type: 'pace', count: events, ratePerSecond });
  await done;
  await paced;
  const { p50, p99, max } = recorder.summary();
  return { events, p50Ms: p50, p99Ms: p99, maxMs: max };
}

async function measureRelist(server: ServerLink, tracker: Tracker): Promise<RelistResult> {
  let peakRss = 0;
  let peakHeap = 0;
  const sample = (): void => {
    const usage = process.memoryUsage();
    peakRss = Math.max(peakRss, usage.rss);
    peakHeap = Math.max(peakHeap, usage.heapUsed);
  };
  sample();
  const monitor = new StallMonitor(sample);
  const arrived = tracker.expectMarker();
  const reply = await server.request({ type: 'relist' });
  if (reply.type !== 'relist-triggered') throw new Error(`unexpected reply ${reply.type}`);
  const arrivedAt = await arrived;
  sample();
  const maxStallMs = monitor.stop().wallMs;
  const check = await server.request({ type: 'relist-check' });
  const listRequests = check.type === 'relist-checked' ? check.lists : 0;
  return { relistMs: arrivedAt - reply.at, listRequests, peakRssBytes: peakRss, peakHeapBytes: peakHeap, maxStallMs };
}

/** Runs the plan of argv[2] against the variant and reports to the parent process. */
export async function runClient(factory: VariantFactory): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? '') as ClientConfig;
  const server = new ServerLink();
  const tracker = new Tracker(Math.max(1, config.handlers));
  const { plan } = config;
  try {
    let baselineHeap = 0;
    if (plan.heap) {
      collectGarbage();
      baselineHeap = process.memoryUsage().heapUsed;
    }
    const client = factory(config, tracker.handlers());
    debug('starting');
    const sync = await measureSync(client);
    debug(`synced in ${sync.syncMs.toFixed(0)} ms`);
    let heapBytesPerObject: number | undefined;
    if (plan.heap) {
      collectGarbage();
      heapBytesPerObject = (process.memoryUsage().heapUsed - baselineHeap) / Math.max(1, config.pods);
    }
    debug('heap measured');
    const throughput = plan.throughputEvents > 0 ? await measureThroughput(server, tracker, plan.throughputEvents) : undefined;
    const latency = plan.latencyEvents > 0 ? await measureLatency(server, tracker, plan.latencyEvents, plan.latencyRate) : undefined;
    debug('throughput and latency measured');
    const relist = plan.relist ? await measureRelist(server, tracker) : undefined;
    const result: ClientResult = {
      sync,
      ...(heapBytesPerObject === undefined ? {} : { heapBytesPerObject }),
      ...(throughput === undefined ? {} : { throughput }),
      ...(latency === undefined ? {} : { latency }),
      ...(relist === undefined ? {} : { relist }),
    };
    await sendAndFlush({ type: 'result', result });
    await client.stop();
  } catch (error) {
    await sendAndFlush({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  } finally {
    server.detach();
    // Whatever the variant left open (keep-alive sockets, retry timers), the measurement is over.
    process.exit(0);
  }
}
