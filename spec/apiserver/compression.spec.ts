import * as http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { configMaps, pods } from '../../lib/resources/builtins';
import { GZIP_THRESHOLD_BYTES } from '../../apiserver/src/responseBody';
import { startApiServer, type ApiServer } from '../../apiserver/src/server';
import { within } from '../support/eventually';
import { get, openWatch, type Reply } from './httpHelpers';

/**
 * Compression as the API server does it (`responsewriters/writers.go`): bodies over 128 KiB, to
 * clients whose Accept-Encoding lists `gzip`, go out gzip-compressed; watch streams never do.
 */

let server: ApiServer;

beforeEach(async () => {
  server = await startApiServer({ serverVersion: '1.36', bookmarkIntervalMs: 0 });
});

afterEach(() => server.close());

const GZIP = { 'Accept-Encoding': 'gzip' };

/** One ConfigMap whose `data.pad` makes the list of the `ns` namespace exactly `bytes` long. */
async function listOfSize(bytes: number): Promise<void> {
  if (server.store.get(configMaps, 'ns', 'big') === undefined) server.store.create(configMaps, { metadata: { name: 'big', namespace: 'ns' }, data: { pad: '' } });
  const size = async (): Promise<number> => (await get(server, '/api/v1/namespaces/ns/configmaps')).body.length;
  // Each update may lengthen the resourceVersion by a digit: adjust until the size holds still.
  for (let measured = await size(); measured !== bytes; measured = await size()) {
    const current = server.store.get(configMaps, 'ns', 'big')!;
    server.store.update(configMaps, { ...current, data: { pad: 'x'.repeat(current.data!['pad']!.length + bytes - measured) } });
  }
}

function expectGzipped(reply: Reply, plain: Reply): void {
  expect([reply.status, reply.headers['content-encoding'], reply.headers['vary']]).toEqual([200, 'gzip', 'Accept-Encoding']);
  expect(gunzipSync(reply.body).equals(plain.body)).toBe(true);
}

function expectPlain(reply: Reply): void {
  expect([reply.headers['content-encoding'], reply.headers['vary']]).toEqual([undefined, undefined]);
  expect(reply.json.kind).toEqual(expect.any(String));
}

describe('lists', () => {
  it('compresses a list over 128 KiB for a client that accepts gzip, and only for it', async () => {
    for (let i = 0; i < 200; i++) server.store.create(pods, { metadata: { name: `pod-${i}`, namespace: 'ns', annotations: { note: 'y'.repeat(1_000) } } });
    const plain = await get(server, '/api/v1/namespaces/ns/pods');
    expect(plain.body.length).toBeGreaterThan(GZIP_THRESHOLD_BYTES);
    expectPlain(plain);
    const compressed = await get(server, '/api/v1/namespaces/ns/pods', { headers: GZIP });
    expectGzipped(compressed, plain);
    expect(compressed.body.length).toBeLessThan(plain.body.length / 10);
  });

  it('compresses from 128 KiB + 1 byte: a body of exactly 128 KiB goes out as it is', async () => {
    await listOfSize(GZIP_THRESHOLD_BYTES);
    expectPlain(await get(server, '/api/v1/namespaces/ns/configmaps', { headers: GZIP }));
    await listOfSize(GZIP_THRESHOLD_BYTES + 1);
    const plain = await get(server, '/api/v1/namespaces/ns/configmaps');
    expectGzipped(await get(server, '/api/v1/namespaces/ns/configmaps', { headers: GZIP }), plain);
  });

  it('compresses a list that is many write batches long, in order', async () => {
    for (let i = 0; i < 300; i++) server.store.create(pods, { metadata: { name: `pod-${String(i).padStart(3, '0')}`, namespace: 'ns', annotations: { note: `${i}`.repeat(4_000) } } });
    const plain = await get(server, '/api/v1/namespaces/ns/pods');
    expect(plain.body.length).toBeGreaterThan(2 << 20);
    expectGzipped(await get(server, '/api/v1/namespaces/ns/pods', { headers: GZIP }), plain);
  });
});

it('reads Accept-Encoding as negotiateContentEncoding does: the exact token gzip among comma-separated ones', async () => {
  await listOfSize(GZIP_THRESHOLD_BYTES + 1_000);
  const encodingOf = async (accept: string): Promise<string | undefined> =>
    (await get(server, '/api/v1/namespaces/ns/configmaps', { headers: { 'Accept-Encoding': accept } })).headers['content-encoding'];
  expect(await encodingOf('deflate, gzip')).toBe('gzip');
  expect(await encodingOf(' gzip ,br')).toBe('gzip');
  expect(await encodingOf('gzip;q=1.0')).toBeUndefined();
  expect(await encodingOf('GZIP')).toBeUndefined();
  expect(await encodingOf('br, deflate')).toBeUndefined();
  expect(await encodingOf('identity')).toBeUndefined();
});

it('compresses a single object over 128 KiB (a GET), as any serialized object', async () => {
  server.store.create(configMaps, { metadata: { name: 'big', namespace: 'ns' }, data: { pad: 'z'.repeat(GZIP_THRESHOLD_BYTES) } });
  const plain = await get(server, '/api/v1/namespaces/ns/configmaps/big');
  expectGzipped(await get(server, '/api/v1/namespaces/ns/configmaps/big', { headers: GZIP }), plain);
});

it('never compresses a watch, however large its events', async () => {
  server.store.create(configMaps, { metadata: { name: 'big', namespace: 'ns' }, data: { pad: 'z'.repeat(GZIP_THRESHOLD_BYTES * 2) } });
  const stream = await openWatch(server, '/api/v1/namespaces/ns/configmaps?watch=1', { headers: GZIP });
  await stream.untilLines(1);
  expect(stream.headers['content-encoding']).toBeUndefined();
  expect(stream.events[0]!.object.data.pad).toHaveLength(GZIP_THRESHOLD_BYTES * 2);
  stream.close();
});

it('survives a client that goes away in the middle of a compressed list', async () => {
  for (let i = 0; i < 300; i++) server.store.create(pods, { metadata: { name: `pod-${i}`, namespace: 'ns', annotations: { note: `${i}`.repeat(4_000) } } });
  const firstChunk = new Promise<void>((resolve, reject) => {
    const request = http.get(`${server.url}/api/v1/namespaces/ns/pods`, { headers: GZIP, agent: false }, (response) => {
      expect(response.headers['content-encoding']).toBe('gzip');
      response.once('data', () => {
        request.destroy();
        resolve();
      });
    });
    request.on('error', (error) => (request.destroyed ? undefined : reject(error)));
  });
  await within(firstChunk, 10_000, 'the first chunk of the compressed list');
  const after = await get(server, '/api/v1/namespaces/ns/pods?limit=1', { headers: GZIP });
  expect([after.status, after.json.items.length]).toEqual([200, 1]);
});
