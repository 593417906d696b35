import type { ServerResponse } from 'node:http';
import type { Fault } from './faults';
import type { WireLine } from './history';
import { ChunkBuilder } from './respond';

/**
 * Writes one watch's lines in order, batching a tick's lines into one chunk, and plays the
 * watch faults (PROTOCOL.md B.9, SERVER_API.md `Fault`) at exact event counts. Every event line
 * (BOOKMARK and ERROR included) counts; an injected garbage line does not.
 */

/** The line an injected `garbageLine` fault writes. */
export const GARBAGE_LINE = 'this is not json {\n';

/**
 * A chunk is written once it grows past this. Lines are encoded once, straight into the chunk,
 * which the socket then owns: a burst costs a copy per event and a few large writes.
 */
const MAX_CHUNK_BYTES = 256 * 1024;

interface WriterHooks {
  /** End the response cleanly (closeAfterEvents). */
  readonly endCleanly: () => void;
  /** Drop the connection (cutMidLine). */
  readonly destroy: () => void;
}

const NO_LINE: WireLine = [];

/** A line as one string (fault paths only: the hot path never joins a line by itself). */
function joined(line: WireLine): string {
  return line.join('');
}

/**
 * The outbound queue of one watch. Lines wait here, as references to the objects' shared JSON,
 * while the socket is full (`write` returned false): a slow client costs a queue of references
 * rather than megabytes of copies inside the socket.
 */
export class WatchWriter {
  private queue: WireLine[] = [];
  private head = 0;
  private written = 0;
  private started = false;
  private stopped = false;
  private paused = false;
  private awaitingDrain = false;
  private pumpScheduled = false;
  private endWhenDrained = false;
  private stallDone = false;
  private garbageDone = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly chunks = new ChunkBuilder(MAX_CHUNK_BYTES);

  constructor(
    private readonly response: ServerResponse,
    private readonly fault: Fault | undefined,
    private readonly hooks: WriterHooks,
  ) {}

  /** Queues a line; it is written on the next tick unless a fault or a full socket holds it. */
  send(line: WireLine): void {
    if (this.stopped) return;
    this.queue.push(line);
    this.schedule();
  }

  /** Starts writing; faults due after 0 events take effect now. */
  begin(): void {
    this.started = true;
    this.pump(false);
  }

  /** Starts writing and ends the response cleanly once the queue is written. */
  endAfterQueued(): void {
    this.endWhenDrained = true;
    this.begin();
  }

  /**
   * Writes what is queued now, full socket or not, unless a fault holds the stream (used right
   * before a clean end, which buffers the rest anyway).
   */
  finish(): void {
    if (this.stopped || this.paused) return;
    this.pump(true);
  }

  /** No more writes; clears the fault timer. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.queue = [];
    this.head = 0;
    this.chunks.take();
  }

  private schedule(): void {
    if (!this.started || this.paused || this.awaitingDrain || this.pumpScheduled) return;
    this.pumpScheduled = true;
    process.nextTick(() => {
      this.pumpScheduled = false;
      this.pump(false);
    });
  }

  private pending(): number {
    return this.queue.length - this.head;
  }

  private shift(): WireLine {
    const line = this.queue[this.head]!;
    this.queue[this.head++] = NO_LINE;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return line;
  }

  private hold(ms: number, then: () => void): void {
    this.paused = true;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.paused = false;
      if (this.stopped) return;
      then();
      this.pump(false);
    }, ms);
  }

  /** Writes what is batched; false when the socket asks us to wait for `drain`. */
  private flush(): boolean {
    let more = true;
    for (const chunk of this.chunks.take()) more = this.response.write(chunk);
    return more;
  }

  private waitForDrain(): void {
    this.awaitingDrain = true;
    this.response.once('drain', () => {
      this.awaitingDrain = false;
      this.pump(false);
    });
  }

  /** `force`: write everything now even if the socket is full (the response ends right after). */
  private pump(force: boolean): void {
    if (!this.started || this.stopped || this.paused || (this.awaitingDrain && !force)) return;
    const fault = this.fault;
    for (;;) {
      // Faults that fire once a number of events is out, whether or not another line is waiting.
      if (fault?.kind === 'closeAfterEvents' && this.written >= fault.events) {
        this.flush();
        this.stop();
        this.hooks.endCleanly();
        return;
      }
      if (fault?.kind === 'garbageLine' && !this.garbageDone && this.written >= (fault.afterEvents ?? 0)) {
        this.garbageDone = true;
        this.chunks.add(GARBAGE_LINE);
      }
      if (fault?.kind === 'stall' && !this.stallDone && this.written >= (fault.afterEvents ?? 0)) {
        this.stallDone = true;
        this.flush();
        this.hold(fault.ms, () => undefined);
        return;
      }
      if (this.pending() === 0) break;
      if (fault?.kind === 'cutMidLine' && this.written >= fault.afterEvents) {
        const line = joined(this.shift());
        this.flush();
        this.stopped = true;
        this.response.write(line.slice(0, Math.max(1, Math.floor(line.length / 2))), () => this.hooks.destroy());
        return;
      }
      if (fault?.kind === 'slowWrites') {
        this.flush();
        this.hold(fault.delayMs, () => {
          this.response.write(joined(this.shift()));
          this.written++;
        });
        return;
      }
      for (const piece of this.shift()) this.chunks.add(piece);
      this.written++;
      if (this.chunks.size >= MAX_CHUNK_BYTES && !this.flush() && !force) {
        this.waitForDrain();
        return;
      }
    }
    const drained = this.flush();
    if (this.endWhenDrained) {
      this.stop();
      this.hooks.endCleanly();
    } else if (!drained && !force) {
      this.waitForDrain();
    }
  }
}
