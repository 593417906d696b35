import type { IncomingMessage, ServerResponse } from 'node:http';
import * as zlib from 'node:zlib';
import { NetworkError, ProtocolError } from '../../lib/base/errors';
import { readListBody, type ListBodyOptions } from '../../lib/sources/listBody';
import { kubeRequest, responseBody } from '../../lib/sources/transport';
import { eventually, EVENTUALLY_MS, within } from '../support/eventually';
import { kubeConfigFor, startServer, type TestServer } from './support';

const path = '/api/v1/pods';
const pod = (name: string): string => JSON.stringify({ metadata: { name, namespace: 'default', annotations: { note: 'é☸😀'.repeat(20) } } });
const listOf = (names: readonly string[]): string => `{"kind":"PodList","metadata":{"resourceVersion":"4"},"items":[${names.map(pod).join(',')}]}`;
const names = (count: number): string[] => Array.from({ length: count }, (_, i) => `pod-${i}`);

describe('readListBody', () => {
  let server: TestServer;
  afterEach(async () => {
    await server?.close();
  });

  const open = async (write: (res: ServerResponse) => void): Promise<IncomingMessage> => {
    server = await startServer((_req, res) => write(res));
    return kubeRequest(kubeConfigFor({ server: server.url }), { path, query: '', signal: new AbortController().signal });
  };
  /** Reads the body; rejects naming it if it has neither ended nor failed after 10 s. */
  const read = (response: IncomingMessage, options: Partial<ListBodyOptions> = {}): Promise<unknown> =>
    within(readListBody(responseBody(response, path), { path, wholeBodyChars: 1 << 20, batchChars: 1 << 10, onItems: () => undefined, ...options }), EVENTUALLY_MS, 'the list body to be read to its end');
  const failure = async (promise: Promise<unknown>): Promise<unknown> => {
    try {
      await promise;
    } catch (error) {
      return error;
    }
    throw new Error('expected a failure');
  };
  /** Writes `bytes` in pieces of `size`, one per timer tick, cutting multi-byte characters. */
  const trickle = (res: ServerResponse, bytes: Buffer, size: number, end = true): void => {
    res.writeHead(200, { 'content-type': 'application/json' });
    let at = 0;
    const next = (): void => {
      if (at >= bytes.length) {
        if (end) res.end();
        return;
      }
      res.write(bytes.subarray(at, at + size));
      at += size;
      setTimeout(next, 1);
    };
    next();
  };

  it('parses a short body whole when it has arrived, showing the text so far to onProgress', async () => {
    const body = listOf(names(3));
    const seen: number[] = [];
    const onItems = jest.fn();
    const response = await open((res) => trickle(res, Buffer.from(body), 100));
    const list = await read(response, { onItems, onProgress: (text) => seen.push(text.length) });
    expect(list).toEqual(JSON.parse(body));
    expect(onItems).not.toHaveBeenCalled();
    expect(seen.length).toBeGreaterThan(1);
  });

  it('decodes a long body as it arrives, multi-byte characters cut between chunks, handing over items before the end', async () => {
    const body = listOf(names(60));
    let release: () => void = () => undefined;
    const handed: unknown[] = [];
    const response = await open((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const bytes = Buffer.from(body);
      const cut = bytes.indexOf(Buffer.from('pod-50')) + 1;
      for (let at = 0; at < cut; at += 997) res.write(bytes.subarray(at, Math.min(cut, at + 997)));
      release = () => res.end(bytes.subarray(cut));
    });
    const done = read(response, { wholeBodyChars: 2000, onItems: (items, head) => handed.push({ items: items.length, head }) });
    await eventually(() => expect(handed.length).toBeGreaterThan(0), { timeoutMs: 1_000, intervalMs: 5 });
    expect(handed[0]).toEqual({ items: expect.any(Number), head: { kind: 'PodList', metadata: { resourceVersion: '4' } } });
    release();
    const list = (await done) as { items: unknown[] };
    const all = [...handed.flatMap((batch) => Array.from({ length: (batch as { items: number }).items })), ...list.items];
    expect(all).toHaveLength(60);
    expect(list.items.at(-1)).toEqual(JSON.parse(pod('pod-59')));
  });

  it('hands over at most one batch per event-loop turn, however much text has arrived at once', async () => {
    const body = listOf(names(300));
    const response = await open((res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
    let inTurn = 0;
    let mostInOneTurn = 0;
    let batches = 0;
    const list = (await read(response, {
      wholeBodyChars: 20_000,
      batchChars: 1000,
      onItems: () => {
        batches++;
        if (inTurn === 0) setImmediate(() => (inTurn = 0));
        mostInOneTurn = Math.max(mostInOneTurn, ++inTurn);
      },
    })) as { items: unknown[] };
    expect(batches).toBeGreaterThan(20);
    expect(mostInOneTurn).toBe(1);
    expect(list.items.length).toBeGreaterThan(0);
  });

  it('decodes a gzip body as it arrives', async () => {
    const body = listOf(names(40));
    const response = await open((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(zlib.gzipSync(body));
    });
    const handed: unknown[][] = [];
    const list = (await read(response, { wholeBodyChars: 100, onItems: (items) => handed.push(items) })) as { items: unknown[] };
    expect([...handed.flat(), ...list.items]).toEqual((JSON.parse(body) as { items: unknown[] }).items);
    expect(handed.length).toBeGreaterThan(1);
  });

  it('holds a long body that is not its turn yet, paused, and decodes it once its turn comes', async () => {
    const body = listOf(names(200));
    let now = false;
    let begin: () => void = () => undefined;
    const turn = new Promise<void>((resolve) => (begin = resolve));
    const handed: unknown[][] = [];
    const response = await open((res) => trickle(res, Buffer.from(body), 4096));
    const done = read(response, { wholeBodyChars: 5000, turn: { now: () => now, promise: turn }, onItems: (items) => handed.push(items) });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(handed).toEqual([]);
    expect(response.isPaused()).toBe(true);
    now = true;
    begin();
    const list = (await done) as { items: unknown[] };
    expect([...handed.flat(), ...list.items]).toHaveLength(200);
  });

  it.each([
    ['a short body', 1 << 20],
    ['a long body', 100],
  ])('fails with a NetworkError when the connection closes inside %s', async (_name, wholeBodyChars) => {
    const response = await open((res) => {
      trickle(res, Buffer.from(listOf(names(10)).slice(0, 1500)), 200, false);
      setTimeout(() => res.destroy(), 60);
    });
    expect(await failure(read(response, { wholeBodyChars }))).toBeInstanceOf(NetworkError);
  });

  it('fails with ProtocolError non-json-body for a short body that is not JSON', async () => {
    const response = await open((res) => trickle(res, Buffer.from(`${listOf(names(3)).slice(0, 300)}}}}}`), 100));
    const error = await failure(read(response));
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).problem).toBe('non-json-body');
  });

  it('fails a long body with ProtocolError non-json-body as soon as it stops being JSON, dropping the connection', async () => {
    const broken = `${listOf(names(10)).slice(0, -2)},${pod('z')} ${'x'.repeat(20_000)}`; // never ends
    const response = await open((res) => trickle(res, Buffer.from(broken), 500, false));
    const error = await failure(read(response, { wholeBodyChars: 100 }));
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).problem).toBe('non-json-body');
    expect(response.destroyed).toBe(true);
  });
});
