import * as http from 'node:http';
import * as https from 'node:https';
import type { ApiServer } from '../../apiserver/src/server';
import { testCertificates } from '../../apiserver/src/tls';
import { withMessage, within } from '../support/eventually';

/** Plain node:http(s) clients for the loopback server tests: the wire, with nothing in between. */

export interface Reply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
  /** The body's bytes as received (still compressed when the server compressed them). */
  readonly body: Buffer;
  /** Parsed body (tests read arbitrary fields). */
  readonly json: any;
}

export interface RequestOptions {
  readonly body?: string | object;
  readonly headers?: Readonly<Record<string, string>>;
  readonly tls?: { readonly ca?: string; readonly cert?: string; readonly key?: string };
}

function transport(url: string): typeof http | typeof https {
  return url.startsWith('https:') ? https : http;
}

/** How long {@link call} waits for a whole reply: under jest's testTimeout, so that a hung reply names its request. */
const REPLY_MS = 10_000;

/** One request; resolves with the whole body, or rejects naming the request after 10 s. */
export function call(server: ApiServer | string, method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
  const base = typeof server === 'string' ? server : server.url;
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  let destroy: () => void = () => undefined;
  const reply = new Promise<Reply>((resolve, reject) => {
    const request = transport(base).request(
      `${base}${path}`,
      {
        method,
        agent: false,
        headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...options.headers },
        ca: options.tls?.ca ?? testCertificates.caCert,
        ...(options.tls?.cert === undefined ? {} : { cert: options.tls.cert, key: options.tls.key }),
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const bytes = Buffer.concat(chunks);
          const text = bytes.toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, body: bytes, json });
        });
        response.on('error', reject);
      },
    );
    destroy = () => request.destroy();
    request.on('error', reject);
    request.end(body);
  });
  return within(reply, REPLY_MS, `the whole reply to ${method} ${path}`).catch((error: unknown) => {
    destroy();
    throw error;
  });
}

/** A GET, parsed. */
export function get(server: ApiServer, path: string, options: RequestOptions = {}): Promise<Reply> {
  return call(server, 'GET', path, options);
}

/** One parsed watch line. */
export type WatchEvent = { type: string; object: any };

/** An open watch: raw bytes and parsed lines as they arrive. */
export class WatchStream {
  readonly lines: string[] = [];
  raw = '';
  status = 0;
  headers: http.IncomingHttpHeaders = {};
  /** 'end' when the server ended the body cleanly, 'aborted' when the connection dropped mid-body. */
  outcome: 'open' | 'end' | 'aborted' = 'open';
  private waiters: (() => void)[] = [];
  private request: http.ClientRequest | undefined;
  readonly opened: Promise<void>;

  constructor(server: ApiServer, path: string, options: RequestOptions = {}) {
    this.opened = new Promise((resolve, reject) => {
      this.request = transport(server.url).request(
        `${server.url}${path}`,
        { method: 'GET', agent: false, headers: options.headers, ca: testCertificates.caCert },
        (response) => {
          this.status = response.statusCode ?? 0;
          this.headers = response.headers;
          response.setEncoding('utf8');
          let partial = '';
          response.on('data', (chunk: string) => {
            this.raw += chunk;
            const parts = (partial + chunk).split('\n');
            partial = parts.pop()!;
            for (const part of parts) this.lines.push(part);
            this.wake();
          });
          response.on('end', () => this.finish('end'));
          response.on('aborted', () => this.finish('aborted'));
          response.on('error', () => this.finish('aborted'));
          response.on('close', () => this.finish(response.complete ? 'end' : 'aborted'));
          resolve();
        },
      );
      this.request.on('error', (error) => {
        this.finish('aborted');
        reject(error);
      });
      this.request.end();
    });
  }

  private finish(outcome: 'end' | 'aborted'): void {
    if (this.outcome === 'open') this.outcome = outcome;
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }

  /** Parsed complete lines so far. */
  get events(): WatchEvent[] {
    return this.lines.map((line) => JSON.parse(line) as WatchEvent);
  }

  /**
   * Resolves once `predicate` holds (checked on every arrival), or rejects after `timeoutMs` or at
   * the stream's end naming `expectation` (what the predicate checks) and what arrived instead.
   */
  until(predicate: (stream: WatchStream) => boolean, expectation: string, timeoutMs = 3_000): Promise<void> {
    const failed = new Error(`waiting for ${expectation}`); // made here, so that its stack shows the spec's line
    const fail = (why: string): Error => withMessage(failed, `expected ${expectation}, but ${why}; got ${this.lines.length} lines:\n${this.raw}`);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(fail(`it did not hold within ${timeoutMs} ms`)), timeoutMs);
      const check = (): void => {
        if (predicate(this)) {
          clearTimeout(timer);
          resolve();
        } else if (this.outcome !== 'open') {
          clearTimeout(timer);
          if (predicate(this)) resolve();
          else reject(fail(`the watch ended (${this.outcome}) first`));
        } else this.waiters.push(check);
      };
      check();
    });
  }

  /** Waits for at least `n` complete lines. */
  untilLines(n: number, timeoutMs?: number): Promise<void> {
    return this.until((s) => s.lines.length >= n, `at least ${n} watch lines`, timeoutMs);
  }

  /** Waits for the stream to end, however it ends. */
  untilClosed(timeoutMs?: number): Promise<void> {
    return this.until((s) => s.outcome !== 'open', 'the watch to end', timeoutMs);
  }

  close(): void {
    this.request?.destroy();
  }
}

/** Opens a watch and waits for its response headers. */
export async function openWatch(server: ApiServer, path: string, options: RequestOptions = {}): Promise<WatchStream> {
  const stream = new WatchStream(server, path, options);
  await within(stream.opened, REPLY_MS, `the response headers of the watch GET ${path}`).catch((error: unknown) => {
    stream.close();
    throw error;
  });
  return stream;
}
