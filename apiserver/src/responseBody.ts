import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { createGzip } from 'node:zlib';

/**
 * Response bodies compressed as the API server compresses them (`APIResponseCompression`, on by
 * default since 1.16; `endpoints/handlers/responsewriters/writers.go`, `deferredResponseWriter`):
 *
 * - only when the request's `Accept-Encoding` lists the token `gzip` exactly (split on commas,
 *   trimmed: `gzip;q=1` and `GZIP` do not count);
 * - only bodies longer than 128 KiB: the first 128 KiB are held back until the body outgrows them
 *   (then it is compressed, at level 1) or ends (then it goes out as it is);
 * - compressed answers carry `Content-Encoding: gzip` and `Vary: Accept-Encoding`;
 * - objects, lists and Status errors are compressed alike; watch streams never are (they are
 *   written by their own writer).
 */

/** Bodies longer than this are compressed for clients that accept gzip (`defaultGzipThresholdBytes`). */
export const GZIP_THRESHOLD_BYTES = 128 * 1024;

/** `defaultGzipContentEncodingLevel`: the fastest level, "similar compression ratios". */
const GZIP_LEVEL = 1;

/** Whether a request accepts a gzip-compressed answer, as `negotiateContentEncoding` decides. */
export function acceptsGzip(headers: IncomingHttpHeaders): boolean {
  const value = headers['accept-encoding'];
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  return text.split(',').some((token) => token.trim() === 'gzip');
}

/**
 * One response body, written in chunks with backpressure, that decides to compress once it has
 * seen more than {@link GZIP_THRESHOLD_BYTES} (and the client accepts gzip).
 */
export class ResponseBody {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private target: Writable | undefined;

  constructor(
    private readonly response: ServerResponse,
    private readonly code: number,
    private readonly headers: OutgoingHttpHeaders,
    private readonly compressible: boolean,
  ) {}

  /** Writes a chunk (which the body then owns); false when the caller should await {@link drained}. */
  write(chunk: Buffer): boolean {
    if (this.target !== undefined) return this.target.write(chunk);
    if (!this.compressible) return this.start(false).write(chunk);
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    if (this.heldBytes <= GZIP_THRESHOLD_BYTES) return true;
    const target = this.start(true);
    let more = true;
    for (const held of this.takeHeld()) more = target.write(held);
    return more;
  }

  /** Resolves when the body can take more, or the client has gone. */
  drained(): Promise<void> {
    const target = this.target;
    if (target === undefined) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        target.off('drain', done);
        this.response.off('close', done);
        resolve();
      };
      target.on('drain', done);
      this.response.on('close', done);
    });
  }

  /** Writes `last` if given, then ends the body (short bodies go out uncompressed). */
  end(last?: Buffer): void {
    if (last !== undefined) this.write(last);
    const target = this.target ?? this.start(false);
    for (const held of this.takeHeld()) target.write(held);
    target.end();
  }

  private takeHeld(): Buffer[] {
    const held = this.held;
    this.held = [];
    this.heldBytes = 0;
    return held;
  }

  private start(compress: boolean): Writable {
    if (!compress) {
      this.response.writeHead(this.code, this.headers);
      this.target = this.response;
      return this.response;
    }
    this.response.writeHead(this.code, { ...this.headers, 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' });
    const gzip = createGzip({ level: GZIP_LEVEL });
    gzip.pipe(this.response);
    // A client that goes away mid-body must not leave the compressor holding its buffers, and
    // writes that were already on their way must not fail the process.
    gzip.on('error', () => undefined);
    this.response.once('close', () => gzip.destroy());
    this.target = gzip;
    return gzip;
  }
}
