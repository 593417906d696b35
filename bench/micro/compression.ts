/**
 * What gzip costs and saves on loopback, for a list of N pods (~4.4 KB each, managedFields
 * included) in one response and for a streaming list's N initial events: the bytes on the wire
 * and the CPU time of the server (compressing) and of the client (`list$`/`watch$`, decompressing
 * as the response arrives), with `compression` on and off, interleaved.
 *
 * The server is a child process that compresses as the API server does (gzip level 1,
 * `compress.go`; a list response over 128 KB, `writers.go`; a streaming list one gzip member per
 * flush, `watch.go`). The watch flushes every FLUSH_EVENTS events (default 64; the API server
 * flushes whenever its queue of events is empty, so a client that keeps up sees smaller flushes).
 *
 *   node -r ts-node/register/transpile-only bench/micro/compression.ts 100000 [reps]
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { KubeConfig } from '@kubernetes/client-node';
import { lastValueFrom, reduce } from 'rxjs';
import { pods } from '../../lib/resources/builtins';
import { list$ } from '../../lib/sources/list';
import { watch$ } from '../../lib/sources/watch';
import { makePod, seededRandom } from '../../apiserver/src/churn';

const [countText = '100000', repsText = '3', role] = process.argv.slice(2);
const count = Number(countText);
const FLUSH_EVENTS = Number(process.env['FLUSH_EVENTS'] ?? 64);
/** The API server compresses a response only past this many bytes (`defaultGzipThresholdBytes`). */
const GZIP_THRESHOLD = 128 * 1024;

interface ServerReport {
  readonly cpuMs: number;
  readonly bytes: number;
}

function podTexts(): string[] {
  const random = seededRandom(7);
  return Array.from({ length: count }, (_, i) => {
    const { apiVersion: _apiVersion, kind: _kind, ...pod } = makePod(random, `ns-${i % 10}`, `pod-${i}`);
    return JSON.stringify({ ...pod, metadata: { ...pod.metadata, uid: `uid-${i}`, resourceVersion: String(i + 1) } });
  });
}

/** The child: serves the list and the watch, reporting its CPU time and bytes written per request. */
function serve(): void {
  const items = podTexts();
  const server = http.createServer((request, response) => {
    const cpu = process.cpuUsage();
    const gzip = /\bgzip\b/.test(request.headers['accept-encoding'] ?? '');
    const watch = (request.url ?? '').includes('watch=');
    let bytes = 0;
    const sink = (chunk: Buffer): boolean => {
      bytes += chunk.length;
      return response.write(chunk);
    };
    response.writeHead(200, { 'content-type': watch ? 'application/json;stream=watch' : 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
    const pieces: string[] = [];
    if (watch) {
      for (let i = 0; i < items.length; i += FLUSH_EVENTS) {
        pieces.push(items.slice(i, i + FLUSH_EVENTS).map((item) => `{"type":"ADDED","object":${item}}\n`).join(''));
      }
    } else {
      const head = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"${count}"},"items":[`;
      // ~1 MB pieces, as the loopback server writes a list.
      let piece = head;
      items.forEach((item, i) => {
        piece += (i === 0 ? '' : ',') + item;
        if (piece.length > 1 << 20) {
          pieces.push(piece);
          piece = '';
        }
      });
      pieces.push(`${piece}]}`);
    }
    const compressor = gzip && !watch ? zlib.createGzip({ level: 1 }) : undefined;
    compressor?.on('data', sink);
    let next = 0;
    const finish = (): void => {
      const used = process.cpuUsage(cpu);
      process.send?.({ cpuMs: (used.user + used.system) / 1000, bytes } satisfies ServerReport);
    };
    const write = (): void => {
      while (next < pieces.length) {
        const text = Buffer.from(pieces[next++]!);
        // A streaming list: one gzip member per flush. A list: one stream, compressed past the threshold.
        const more = gzip && watch ? sink(zlib.gzipSync(text, { level: 1 })) : compressor !== undefined ? compressor.write(text) : sink(text);
        if (!more) {
          (compressor ?? response).once('drain', write);
          return;
        }
      }
      // The compressed stream ends after its last output has gone to the response.
      if (compressor !== undefined) compressor.end();
      else response.end(finish);
    };
    compressor?.on('end', () => response.end(finish));
    write();
  });
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
}

async function client(): Promise<void> {
  const child = fork(__filename, [countText, repsText, 'serve'], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const reports: ServerReport[] = [];
  const waiters: ((report: ServerReport) => void)[] = [];
  const port = await new Promise<number>((resolve) =>
    child.on('message', (message: { port?: number } & Partial<ServerReport>) => {
      if (message.port !== undefined) resolve(message.port);
      else {
        const report = message as ServerReport;
        const waiter = waiters.shift();
        if (waiter === undefined) reports.push(report);
        else waiter(report);
      }
    }),
  );
  const serverReport = (): Promise<ServerReport> => (reports.length > 0 ? Promise.resolve(reports.shift()!) : new Promise((resolve) => waiters.push(resolve)));
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  process.stdout.write(`${count} pods; the server compresses at gzip level 1 (lists past ${GZIP_THRESHOLD / 1024} KB; watch: one member per ${FLUSH_EVENTS} events)\n`);
  try {
    await measure(kubeConfig, serverReport);
  } finally {
    child.kill();
  }
}

async function measure(kubeConfig: KubeConfig, serverReport: () => Promise<ServerReport>): Promise<void> {
  for (let rep = 0; rep < Number(repsText); rep++) {
    for (const what of ['list', 'watch'] as const) {
      for (const compression of [true, false]) {
        (globalThis as { gc?: () => void }).gc?.();
        const cpu = process.cpuUsage();
        const started = performance.now();
        const received =
          what === 'list'
            ? await lastValueFrom(list$(kubeConfig, pods, { limit: 0, compression }).pipe(reduce((sum, page) => sum + page.items.length, 0)))
            : await lastValueFrom(watch$(kubeConfig, pods, { compression }).pipe(reduce((sum) => sum + 1, 0)));
        const wall = performance.now() - started;
        const used = process.cpuUsage(cpu);
        const server = await serverReport();
        process.stdout.write(
          `${what.padEnd(5)} gzip ${compression ? 'on ' : 'off'}: ${received} objects, ${(server.bytes / 2 ** 20).toFixed(1).padStart(6)} MiB on the wire, ` +
            `${wall.toFixed(0).padStart(6)} ms, client cpu ${((used.user + used.system) / 1000).toFixed(0).padStart(6)} ms, server cpu ${server.cpuMs.toFixed(0).padStart(6)} ms\n`,
        );
      }
    }
  }
}

if (role === 'serve') serve();
else void client();
