import * as http from 'node:http';
import * as https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/**
 * The few writes the example controller needs, as plain JSON over HTTP(S) through a `KubeConfig`:
 * its TLS material and credentials come from `applyToHTTPSOptions`, as rx-informer's own requests
 * do. A real controller may use client-node's typed clients (`kubeConfig.makeApiClient(CoreV1Api)`)
 * instead; this helper keeps the examples free of client-node at run time.
 */

/** The API server answered with an error status; `body` is its Status object when it sent one. */
export class KubeApiError extends Error {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly code: number,
    readonly body: unknown,
  ) {
    super(`${method} ${path}: HTTP ${code}${statusMessage(body)}`);
    this.name = 'KubeApiError';
  }
}

/** Content types of the writes the examples make. */
export type ContentType = 'application/json' | 'application/merge-patch+json';

/**
 * Sends one request and resolves with the parsed JSON answer.
 *
 * @throws KubeApiError for an HTTP status >= 400.
 */
export async function kubeJson<R = unknown>(kubeConfig: KubeConfig, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown, contentType: ContentType = 'application/json'): Promise<R> {
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) throw new Error('the kubeconfig has no current cluster');
  const url = new URL(cluster.server);
  const secure = url.protocol === 'https:';
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const options: https.RequestOptions = {
    method,
    hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
    path: `${url.pathname.replace(/\/$/, '')}${path}`,
    headers: { Accept: 'application/json', ...(payload === undefined ? {} : { 'Content-Type': contentType, 'Content-Length': payload.length }) },
  };
  await kubeConfig.applyToHTTPSOptions(options);
  // client-node may hand out an https Agent whatever the scheme; node:http refuses it.
  if (!secure) options.agent = undefined;
  return new Promise<R>((resolve, reject) => {
    const request = (secure ? https : http).request(options, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = text === '' ? undefined : JSON.parse(text);
        } catch {
          // Not JSON (a proxy's error page): keep the text for the error message.
        }
        const code = response.statusCode ?? 0;
        if (code >= 400) reject(new KubeApiError(method, path, code, parsed));
        else resolve(parsed as R);
      });
    });
    request.on('error', reject);
    request.end(payload);
  });
}

function statusMessage(body: unknown): string {
  const message = typeof body === 'object' && body !== null ? (body as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? `: ${message}` : '';
}

/** Resolves when `signal` aborts (at once if it has); never without a signal. Examples run until then. */
export function aborted(signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return new Promise<void>(() => undefined);
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
