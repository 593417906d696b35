import type { ServerResponse } from 'node:http';
import { InformerError } from '../../lib/base/errors';
import { waitForSync } from '../../lib/informer/waitForSync';
import { contents, openWatch, pod, quietWatch, runInformer, sendList, startRawApiServer, twoPods, type RawApiServer, type RunningInformer, type WatchStream } from './rawApiServer';

/**
 * The two checks every bad watch input of the catalogue gets:
 * - mid-watch, after the cache has synced: the typed error shows on health$, the cache keeps
 *   what it had, the informer re-watches from its last version (no relist) and goes on;
 * - during the initial sync through a streaming list: the typed error shows on health$ and the
 *   informer lists in pages at once instead (client-go's fallback), so it still syncs.
 */

/** What a catalogue case writes on the watch, after one good event. */
export type BadWrite = (watch: WatchStream) => void;

/** Runs both checks for one bad watch input. */
export function checkBadWatchInput<E extends InformerError>(badWrite: BadWrite, isExpected: (error: InformerError) => error is E, describeError: (error: E) => void): void {
  let server: RawApiServer | undefined;
  let running: RunningInformer | undefined;
  afterEach(async () => {
    running?.stop();
    await server?.close();
    running = undefined;
    server = undefined;
  });

  it('mid-watch: reports the typed error on health$, keeps the cache and re-watches from the last version', async () => {
    server = await startRawApiServer({
      list: twoPods,
      watch: (request, response) => {
        const watch = openWatch(response);
        if (request.index === 0) {
          watch.event('MODIFIED', pod('a', '3'));
          badWrite(watch);
        } else {
          watch.event('ADDED', pod('c', '4'));
        }
      },
    });
    running = runInformer(server.kubeConfig);
    const error = await running.errorReported(isExpected);
    describeError(error);
    const after = await running.snapshotWhere((snapshot) => snapshot.has('default/c'));
    expect(contents(after)).toEqual({ 'default/a': '3', 'default/b': '2', 'default/c': '4' });
    expect(running.streamError()).toBeUndefined();
    expect(server.requests.filter((r) => r.kind === 'list')).toHaveLength(1);
    expect(server.requests.filter((r) => r.kind === 'watch')[1]?.query.get('resourceVersion')).toBe('3');
  });

  it('during the initial sync through a streaming list: reports the typed error on health$ and lists in pages instead', async () => {
    server = await startRawApiServer({
      list: twoPods,
      watch: (request, response) => {
        if (request.query.get('sendInitialEvents') !== 'true') return quietWatch(request, response);
        const watch = openWatch(response);
        watch.event('ADDED', pod('a', '1'));
        badWrite(watch);
      },
    });
    running = runInformer(server.kubeConfig, { streamingList: true });
    const error = await running.errorReported(isExpected);
    describeError(error);
    const [snapshot] = await waitForSync([running.informer], { timeout: 2000 });
    expect(contents(snapshot)).toEqual({ 'default/a': '1', 'default/b': '2' });
    expect(server.requests.map((r) => `${r.kind}${r.query.get('sendInitialEvents') === 'true' ? ' streaming' : ''}`).slice(0, 2)).toEqual(['watch streaming', 'list']);
    expect(running.streamError()).toBeUndefined();
  });
}

/** Every message the informer's health reports carried, for "clear error" assertions. */
export function reportedMessages(running: RunningInformer): string[] {
  return running.healths.flatMap((health) => (health.lastError === undefined ? [] : [health.lastError.message]));
}

/** What a catalogue case answers to a list request. */
export type BadListAnswer = (response: ServerResponse) => void;

/**
 * The two checks every bad list answer of the catalogue gets:
 * - during the initial sync: waitForSync rejects with the typed error;
 * - on a relist (after a watch 410): the typed error shows on health$, the cache keeps what it
 *   had while the informer retries, and it takes the next good list.
 */
export function checkBadListAnswer<E extends InformerError>(badAnswer: BadListAnswer, isExpected: (error: InformerError) => error is E, describeError: (error: E) => void): void {
  let server: RawApiServer | undefined;
  let running: RunningInformer | undefined;
  afterEach(async () => {
    running?.stop();
    await server?.close();
    running = undefined;
    server = undefined;
  });

  it('during the initial sync: waitForSync rejects with the typed error', async () => {
    server = await startRawApiServer({ list: (_request, response) => badAnswer(response), watch: quietWatch });
    running = runInformer(server.kubeConfig);
    const rejection: unknown = await waitForSync([running.informer], { timeout: 400 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(rejection).toBeInstanceOf(InformerError);
    expect(isExpected(rejection as InformerError)).toBe(true);
    describeError(rejection as E);
    expect(running.streamError()).toBeUndefined();
  });

  it('on a relist: reports the typed error on health$, keeps the cache, and takes the next good list', async () => {
    server = await startRawApiServer({
      list: (request, response) => {
        if (request.index === 0) return twoPods(request, response);
        if (request.index <= 2) return badAnswer(response);
        sendList(response, [pod('a', '1'), pod('b', '2'), pod('c', '5')], '5');
      },
      watch: (request, response) => {
        const watch = openWatch(response);
        if (request.index === 0) {
          watch.event('ERROR', { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old resource version: 2 (4)', reason: 'Expired', code: 410 });
          watch.end();
        }
      },
    });
    running = runInformer(server.kubeConfig);
    const error = await running.errorReported(isExpected);
    describeError(error);
    expect(contents(running.latest())).toEqual({ 'default/a': '1', 'default/b': '2' });
    const after = await running.snapshotWhere((snapshot) => snapshot.has('default/c'));
    expect(contents(after)).toEqual({ 'default/a': '1', 'default/b': '2', 'default/c': '5' });
    expect(running.streamError()).toBeUndefined();
  });
}
