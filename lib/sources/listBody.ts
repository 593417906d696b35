import { constants as bufferConstants } from 'node:buffer';
import type { Readable } from 'node:stream';
import { NetworkError, ProtocolError } from '../base/errors';
import { ListDecoder } from './listDecoder';
import { excerptOf } from './statusError';
import { toReadError } from './transport';

/** The longest string V8 can build here (2^29 − 24 characters on 64-bit): a body longer than this cannot be parsed whole. */
const MAX_STRING_LENGTH = bufferConstants.MAX_STRING_LENGTH;

/** Text is fed to the decoder in pieces of at most this size (a socket read's), or of a batch when that is smaller. */
const FEED_CHARS = 64 * 1024;

/** Options of {@link readListBody}. */
export interface ListBodyOptions {
  /** The request path, for error messages. */
  readonly path: string;
  /** A body up to this many characters is parsed whole once it has arrived; a longer one is decoded as it arrives. */
  readonly wholeBodyChars: number;
  /** Items of a body decoded as it arrives are parsed in batches of about this many characters. */
  readonly batchChars: number;
  /** Sees the text so far after every chunk while the body is read whole (to act on its head early). */
  readonly onProgress?: (textSoFar: string) => void;
  /**
   * Every batch of items of a body decoded as it arrives, but the last, with the list's members
   * written before the items (its head: kind, apiVersion, metadata). May throw to fail the read.
   */
  readonly onItems: (items: unknown[], head: Readonly<Record<string, unknown>>) => void;
  /**
   * Whether the body may be read yet (`now`), and when it may (`promise`): a page read ahead waits
   * for the pages before it. Until then its body stays paused (TCP backpressure holds the server's
   * writes), so none of its text is kept or parsed before its turn. Default: at once.
   */
  readonly turn?: { readonly now: () => boolean; readonly promise: Promise<void> };
}

/**
 * Reads a list body: parsed whole with one `JSON.parse` when it is short, decoded item by item
 * as it arrives when it is long (see {@link ListDecoder}). Resolves with the list as `JSON.parse`
 * gives it, except that the items of a long body handed to `onItems` are not in its `items`
 * (which holds the last batch).
 *
 * A short body costs what it always did: the text is kept as the chunks arrive (decoded as UTF-8,
 * joined as V8 string ropes, no body-sized Buffer) and parsed once. Only a body longer than
 * `wholeBodyChars` switches to the decoder, so a list's ordinary 500-item pages never pay for
 * the scan, and a list of any size (the API server's watch cache answers a whole collection in
 * one response before Kubernetes 1.34) never becomes one string.
 *
 * Rejects with a NetworkError when the connection breaks first, a ProtocolError `non-json-body`
 * for text that is not JSON (or gzip that does not decompress), `body-too-large` for one member
 * or item beyond V8's string limit.
 *
 * ## Example
 * ```ts
 * const list = await readListBody(responseBody(response, path), {
 *   path, wholeBodyChars: 4 << 20, batchChars: 1 << 20,
 *   onItems: (items, head) => emit(items, head),
 * });
 * ```
 */
export function readListBody(body: Readable, options: ListBodyOptions): Promise<unknown> {
  const { path } = options;
  return new Promise((resolve, reject) => {
    let text = '';
    let decoder: ListDecoder | undefined;
    /** Text waiting for the decoder, in order, and how far into the first piece it has gone. */
    const queue: string[] = [];
    let queueAt = 0;
    /** Batches handed over since the body last yielded the event loop. */
    let handedOver = 0;
    /** The queue continues on the next turn. */
    let scheduled = false;
    let ended = false;
    let settled = false;
    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      body.destroy();
      reject(toReadError(error, path));
    };
    const finish = (value: () => unknown): void => {
      settled = true;
      try {
        resolve(value());
      } catch (error) {
        reject(error);
      }
    };
    // A piece no longer than a batch completes at most one batch.
    const pieceChars = Math.min(FEED_CHARS, options.batchChars);
    /**
     * Feeds the queue to the decoder; once a batch has been handed over, the rest waits for the
     * next event-loop turn (the body paused meanwhile), so one turn never handles more than one
     * batch, however much the socket had buffered.
     */
    const pump = (): void => {
      scheduled = false;
      try {
        while (queue.length > 0) {
          const pending = queue[0]!;
          const next = Math.min(pending.length, queueAt + pieceChars);
          decoder!.push(queueAt === 0 && next === pending.length ? pending : pending.slice(queueAt, next));
          queueAt = next;
          if (queueAt === pending.length) {
            queue.shift();
            queueAt = 0;
          }
          if (handedOver > 0) {
            handedOver = 0;
            body.pause();
            scheduled = true;
            setImmediate(() => !settled && pump());
            return;
          }
        }
      } catch (error) {
        fail(error);
        return;
      }
      // The body may end while paused: what it delivered is all in the queue, now decoded.
      if (ended) finish(() => decoder!.end());
      else body.resume();
    };
    const decode = (): void => {
      let head: Readonly<Record<string, unknown>> = {};
      decoder = new ListDecoder({
        path,
        batchChars: options.batchChars,
        maxChars: MAX_STRING_LENGTH,
        onItemsStart: (members) => (head = members),
        onItems: (items) => {
          handedOver++;
          options.onItems(items, head);
        },
      });
      queue.push(text);
      text = '';
      pump();
    };
    body.setEncoding('utf8');
    body.on('data', (chunk: string) => {
      if (settled) return;
      if (decoder !== undefined) {
        queue.push(chunk);
        if (!scheduled) pump();
        return;
      }
      text += chunk;
      try {
        options.onProgress?.(text);
      } catch (error) {
        fail(error);
        return;
      }
      if (text.length <= options.wholeBodyChars) return;
      body.pause();
      decode();
    });
    body.on('end', () => {
      if (settled) return;
      ended = true;
      if (decoder === undefined) finish(() => parseWhole(text, path));
      else if (decoder !== undefined && !scheduled) finish(() => decoder!.end());
    });
    body.on('error', fail);
    // A page read ahead is not read before its turn: while the pages before it are parsed and
    // indexed, its chunks, its text and its parsed items would survive scavenges and be promoted,
    // only to die in the old generation (docs/performance-notes.md, "The paged 100k sync's
    // longest stall").
    const turn = options.turn;
    if (turn !== undefined && !turn.now()) {
      body.pause();
      void turn.promise.then(() => {
        if (!settled) body.resume();
      });
    }
    body.on('close', () => {
      // After 'end' the body closes while the last of it may still be being decoded.
      if (!settled && !ended) fail(new NetworkError(`GET ${path} failed: the connection closed before the response ended`, 'ECONNRESET'));
    });
  });
}

function parseWhole(text: string, path: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ProtocolError('non-json-body', `the list of ${path} is not JSON`, excerptOf(text.slice(0, 1000)));
  }
}
