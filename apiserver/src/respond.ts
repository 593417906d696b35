import type { ServerResponse } from 'node:http';
import type { Status } from 'rx-informer';
import { GZIP_THRESHOLD_BYTES, ResponseBody } from './responseBody';

/** Writing answers: JSON bodies and Status errors with the API server's headers (B.7). */

/**
 * Sends a JSON body that is already serialized; `gzip` (the client accepts it) compresses one
 * longer than 128 KiB, as the API server does (`responseBody.ts`).
 */
export function sendJson(response: ServerResponse, code: number, body: string, headers: Readonly<Record<string, string>> = {}, gzip = false): void {
  if (response.headersSent || response.destroyed) return;
  const bytes = Buffer.byteLength(body);
  const common = { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', ...headers };
  if (gzip && bytes > GZIP_THRESHOLD_BYTES) {
    new ResponseBody(response, code, common, true).end(Buffer.from(body, 'utf8'));
    return;
  }
  response.writeHead(code, { ...common, 'Content-Length': bytes });
  response.end(body);
}

/** Sends a Status: `Retry-After` when details.retryAfterSeconds > 0, and `nosniff` as `RespondWithError` does. */
export function sendStatus(response: ServerResponse, status: Status, gzip = false): void {
  const retryAfter = status.details?.retryAfterSeconds;
  const headers = {
    'X-Content-Type-Options': 'nosniff',
    ...(retryAfter !== undefined && retryAfter > 0 ? { 'Retry-After': String(retryAfter) } : {}),
  };
  sendJson(response, status.code ?? 500, JSON.stringify(status), headers, gzip);
}

/** Sends a plain-text body (the priority-and-fairness 429, `/healthz`). */
export function sendText(response: ServerResponse, code: number, body: string, headers: Readonly<Record<string, string>> = {}): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', ...headers, 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}

const MIN_CHUNK_BYTES = 16 * 1024;

/**
 * Builds the chunks of a streamed body from many strings with one copy each: every string is
 * encoded straight into a chunk buffer, so a list page or a burst of watch events costs neither a
 * concatenated string per event nor a buffer per piece.
 */
export class ChunkBuilder {
  private readonly sealed: Buffer[] = [];
  private buffer: Buffer | undefined;
  private used = 0;
  private total = 0;
  /** Size of the next buffer: it follows what the last round needed, so a trickle of small bodies never allocates megabytes. */
  private nextSize = MIN_CHUNK_BYTES;

  /** `capacity`: the largest chunk, unless one string alone is longer. */
  constructor(private readonly capacity: number) {}

  /** Bytes added since the last {@link take}. */
  get size(): number {
    return this.total;
  }

  add(text: string): void {
    const room = this.buffer === undefined ? -1 : this.buffer.length - this.used;
    // UTF-8 takes at most three bytes per UTF-16 unit; count them exactly only when that bound
    // does not fit.
    if (text.length * 3 > room) {
      const bytes = Buffer.byteLength(text, 'utf8');
      if (bytes > room) {
        if (this.buffer !== undefined && this.used > 0) this.sealed.push(this.buffer.subarray(0, this.used));
        this.buffer = Buffer.allocUnsafe(Math.max(this.nextSize, bytes));
        this.nextSize = Math.min(this.capacity, this.nextSize * 2);
        this.used = 0;
      }
    }
    const written = this.buffer!.write(text, this.used, 'utf8');
    this.used += written;
    this.total += written;
  }

  /** The chunks built so far (usually one), in order; the builder starts afresh. */
  take(): Buffer[] {
    const out = this.sealed.splice(0);
    if (this.buffer !== undefined && this.used > 0) out.push(this.buffer.subarray(0, this.used));
    // The taken buffer now belongs to the socket: never write into it again.
    this.buffer = undefined;
    this.nextSize = Math.min(this.capacity, Math.max(MIN_CHUNK_BYTES, this.total));
    this.used = 0;
    this.total = 0;
    return out;
  }
}
