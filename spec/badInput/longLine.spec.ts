import { ProtocolError, type InformerError } from '../../lib/base/errors';
import { defaultMaxLineBytes } from '../../lib/sources/lineSplitter';
import { contents, openWatch, pod, runInformer, startRawApiServer, twoPods, type RawApiServer, type RunningInformer } from './rawApiServer';

const MiB = 1024 * 1024;
/** The server gives up here if the client never stops reading: four times the limit. */
const SERVER_CAP_BYTES = 4 * defaultMaxLineBytes;

describe('bad input: a single watch line longer than 64 MiB', () => {
  let server: RawApiServer | undefined;
  let running: RunningInformer | undefined;
  afterEach(async () => {
    running?.stop();
    await server?.close();
  });

  it('fails with line-too-long, drops the connection near the limit with bounded memory, and keeps the cache', async () => {
    let bytesSent = 0;
    let closedAfter: number | undefined;
    server = await startRawApiServer({
      list: twoPods,
      watch: (request, response) => {
        if (request.index > 0) {
          openWatch(response).event('ADDED', pod('c', '4'));
          return;
        }
        const watch = openWatch(response);
        watch.event('MODIFIED', pod('a', '3'));
        // One endless line, written as fast as the client reads it (respecting backpressure).
        response.write('{"type":"ADDED","object":{"metadata":{"name":"huge","namespace":"default"},"data":"');
        const chunk = Buffer.alloc(MiB, 0x61);
        response.on('close', () => (closedAfter = bytesSent));
        const pump = (): void => {
          while (!response.destroyed && bytesSent < SERVER_CAP_BYTES) {
            bytesSent += chunk.length;
            if (!response.write(chunk)) {
              response.once('drain', pump);
              return;
            }
          }
        };
        pump();
      },
    });
    const before = process.memoryUsage();
    let peakGrowth = 0;
    const sampler = setInterval(() => {
      const now = process.memoryUsage();
      peakGrowth = Math.max(peakGrowth, now.rss - before.rss);
    }, 5);
    try {
      running = runInformer(server.kubeConfig);
      const isTooLong = (error: InformerError): error is ProtocolError => error instanceof ProtocolError && error.problem === 'line-too-long';
      const error = await running.errorReported(isTooLong, 15_000);
      expect(error.message).toBe(`pods: a watch line exceeds ${defaultMaxLineBytes} bytes`);
      expect(error.excerpt?.length ?? 0).toBeLessThanOrEqual(200);
      const after = await running.snapshotWhere((snapshot) => snapshot.has('default/c'), 15_000);
      expect(contents(after)).toEqual({ 'default/a': '3', 'default/b': '2', 'default/c': '4' });
    } finally {
      clearInterval(sampler);
    }
    // The client hung up soon after the limit, not after the server's cap.
    expect(closedAfter).toBeDefined();
    expect(closedAfter as number).toBeLessThan(defaultMaxLineBytes + 32 * MiB);
    // The pending line is held once (64 MiB) plus socket buffers; an unbounded reader would grow towards the 256 MiB cap.
    expect(peakGrowth).toBeLessThan(200 * MiB);
    expect(running.streamError()).toBeUndefined();
  }, 30_000);
});
