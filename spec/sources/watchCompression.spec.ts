import * as zlib from 'node:zlib';
import type { ServerResponse } from 'node:http';
import { ProtocolError } from '../../lib/base/errors';
import type { WatchEvent } from '../../lib/sources/listerWatcher';
import { watch$ } from '../../lib/sources/watch';
import { defineResource } from '../../lib/resources/resource';
import { eventually, EVENTUALLY_MS, within } from '../support/eventually';
import { collect, kubeConfigFor, listedPod, startServer, type TestServer } from './support';

const pods = defineResource({ group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true });
const line = (type: string, name: string, resourceVersion: string): string => `${JSON.stringify({ type, object: listedPod(name, 'default', resourceVersion) })}\n`;

describe('watch$ compression', () => {
  let server: TestServer;
  afterEach(async () => {
    await server?.close();
  });

  /** Answers a watch with gzip, one gzip member per flush, as the API server's streaming list does. */
  const gzipWatch = (res: ServerResponse): ((text: string) => void) => {
    res.writeHead(200, { 'content-type': 'application/json;stream=watch', 'content-encoding': 'gzip', 'transfer-encoding': 'chunked' });
    return (text) => res.write(zlib.gzipSync(text));
  };

  it('asks for gzip by default, and not with compression off', async () => {
    server = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end());
    const kubeConfig = kubeConfigFor({ server: server.url });
    await collect(watch$(kubeConfig, pods, {}));
    await collect(watch$(kubeConfig, pods, { compression: false }));
    expect(server.requests.map((seen) => seen.headers['accept-encoding'])).toEqual(['gzip', undefined]);
  });

  it('delivers each event of a gzip stream as soon as its flush arrives', async () => {
    let send: (text: string) => void = () => undefined;
    let end: () => void = () => undefined;
    server = await startServer((_req, res) => {
      send = gzipWatch(res);
      end = () => res.end();
    });
    const events: WatchEvent[] = [];
    const done = new Promise<void>((resolve) => watch$(kubeConfigFor({ server: server.url }), pods, {}).subscribe({ next: (event) => events.push(event), complete: resolve }));
    await server.request(0);
    send(line('ADDED', 'a', '2'));
    await eventually(() => expect(events.length).toBeGreaterThan(0), { timeoutMs: 1_000, intervalMs: 5 });
    expect(events.map((event) => event.object.metadata.name)).toEqual(['a']);
    send(line('MODIFIED', 'a', '3') + line('DELETED', 'a', '4'));
    end();
    await within(done, EVENTUALLY_MS, 'the watch to complete once its body ends', () => events.map((event) => event.type));
    expect(events.map((event) => event.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
  });

  it('fails with ProtocolError non-json-body when the gzip stream is corrupt, after the events before it', async () => {
    server = await startServer((_req, res) => {
      const send = gzipWatch(res);
      send(line('ADDED', 'a', '2'));
      setTimeout(() => res.end(Buffer.from('garbage, not gzip')), 20);
    });
    const result = await collect(watch$(kubeConfigFor({ server: server.url }), pods, {}));
    expect(result.values.map((event) => event.object.metadata.name)).toEqual(['a']);
    expect(result.error).toBeInstanceOf(ProtocolError);
    expect((result.error as ProtocolError).problem).toBe('non-json-body');
  });

  it('fails with ProtocolError for a stream in an encoding it cannot undo', async () => {
    server = await startServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'br' }).end('xx'));
    const result = await collect(watch$(kubeConfigFor({ server: server.url }), pods, {}));
    expect(result.error).toBeInstanceOf(ProtocolError);
  });
});
