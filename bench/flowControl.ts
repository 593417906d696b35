import type { ServerReply } from './protocol';

/** Updates written in one turn before yielding to the event loop. */
const BATCH = 64;

/** A producer of watch events paced by the client's acknowledgements. */
export interface FlowControlledProducer {
  /** Produces `count` events, never more than `windowSize` ahead of the client's acknowledgements. */
  produce(count: number, windowSize: number): Promise<ServerReply>;
  /** The client has handled `handled` events: production resumes if it was waiting on the window. */
  onAck(handled: number): void;
}

/**
 * The benchmark servers' flow control (bench/server.ts and bench/million/generatorServer.ts):
 * `update(n)` writes the n-th event of a run, `BATCH` per event-loop turn, and production waits
 * whenever it is a window ahead of what the client acknowledged, so that a slower client measures
 * its own throughput rather than a socket's buffer.
 */
export function flowControlledProducer(update: (sequence: number) => void): FlowControlledProducer {
  let acked = 0;
  let produced = 0;
  let window = 0;
  let resumeAfterAck: (() => void) | undefined;
  return {
    produce(count, windowSize) {
      acked = 0;
      produced = 0;
      window = windowSize;
      const started = performance.now();
      const cpu = process.cpuUsage();
      return new Promise<ServerReply>((resolve) => {
        const turn = (): void => {
          for (let i = 0; i < BATCH && produced < count && produced - acked < window; i++) update(++produced);
          if (produced >= count) {
            // CPU time of the whole server process (updates, socket writes, GC), not just this loop.
            const used = process.cpuUsage(cpu);
            resolve({ type: 'produced', count, busyMs: (used.user + used.system) / 1000, elapsedMs: performance.now() - started });
          } else if (produced - acked >= window) {
            resumeAfterAck = turn;
          } else {
            setImmediate(turn);
          }
        };
        turn();
      });
    },
    onAck(handled) {
      acked = Math.max(acked, handled);
      if (resumeAfterAck !== undefined && produced - acked < window) {
        const resume = resumeAfterAck;
        resumeAfterAck = undefined;
        setImmediate(resume);
      }
    },
  };
}
