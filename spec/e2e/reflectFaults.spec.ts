import type { Delta } from '../../lib/reflector/delta';
import type { ReflectConfig } from '../../lib/reflector/reflect';
import type { Pod } from '../../lib/resources/builtins';
import { IdleTimeoutError, NetworkError, ProtocolError, StatusError } from '../../lib/base/errors';
import type { InformerError } from '../../lib/base/errors';
import { NEWEST_SERVER_VERSION, startApiServer } from '../../apiserver/src';
import type { ApiServer, Fault, RequestRecord, ServerVersion } from '../../apiserver/src';
import { describeEachServerVersion } from '../support/serverVersions';
import { listStarts, PodMutator, podRequests, ReflectorProbe, serverVersions, startTcpProxy, versionsOf, waitFor } from './faultHarness';
import type { DeltaLedger, TcpProxy } from './faultHarness';

/**
 * Every Reflector rule of ANCHORS.md and every fault the loopback server can inject, end to end over
 * real HTTP: once the fault clears, the consumer of the delta stream holds exactly the server's
 * pods, no watch event was lost or delivered twice across reconnects, and the request log shows
 * the requests the rule calls for (a dropped watch re-watches without relisting; a 410 relists
 * once). Jitter is fixed (random 0.5) so backoff delays are known: 30, 60, 120 ... ms, capped at 300.
 * Lists are paged lists unless a test asks for streaming lists.
 *
 * Against which server: the list faults and the 410 relists against the oldest and the newest API
 * server; the watch faults and the streaming lists (which the oldest refuses) against the newest,
 * as a plain watch is answered alike by both; a continue token, or a list connection that dies
 * between pages, needs a first list in pages, which only an API server whose watch cache is off
 * sends (client-go's `reflector.go`, `paginatedResult`): the loopback server without a
 * `serverVersion` answers like one.
 */

const config: ReflectConfig = { backoff: { initialMs: 20, maxMs: 200 }, random: () => 0.5, streamingList: false };
/** [300, 600) drawn with random 0.5. */
const DEFAULT_TIMEOUT_SECONDS = '450';

/** Backoff with initialMs 20, maxMs 200, doubling, each wait in [d, 2d) drawn at 0.5: 30, 60, 120, 240, 300 ...; or the 1 s Retry-After. */
const expectedDelays = (count: number, retryAfter = false): number[] =>
  Array.from({ length: count }, (_, i) => (retryAfter ? 1000 : 1.5 * Math.min(200, 20 * 2 ** i)));

const statusCode = (code: number) => (error: InformerError | undefined) => error instanceof StatusError && error.code === code;

describeEachServerVersion('reflect under every loopback fault', faultSpecs);
describe('reflect under every loopback fault: an API server that pages lists at "0" (its watch cache off)', () => faultSpecs(undefined));

/** The specs against one server; `undefined`: the loopback server's default, which pages lists at "0". */
function faultSpecs(serverVersion: ServerVersion | undefined): void {
  const onNewest = serverVersion === NEWEST_SERVER_VERSION;
  const pagesFirstList = serverVersion === undefined;
  let server: ApiServer;
  let pods: PodMutator;
  let probe: ReflectorProbe | undefined;
  let proxy: TcpProxy | undefined;

  beforeEach(async () => {
    server = await startApiServer({ serverVersion });
    pods = new PodMutator(server);
  });
  afterEach(async () => {
    probe?.stop();
    probe = undefined;
    await proxy?.close();
    proxy = undefined;
    await server.close();
  });

  const run = (extra: ReflectConfig = {}, options: { via?: TcpProxy; tap?: (delta: Delta<Pod>, ledger: DeltaLedger) => void } = {}): ReflectorProbe =>
    (probe = new ReflectorProbe(options.via?.kubeConfig ?? server.kubeConfig, { ...config, ...extra }, options.tap));
  const watches = (): RequestRecord[] => podRequests(server, 'watch');
  const lists = (): RequestRecord[] => podRequests(server, 'list');
  const failures = (p: ReflectorProbe) => p.health.filter((h) => h.phase === 'backingOff');
  const gapsMs = (records: readonly RequestRecord[]): number[] => records.slice(1).map((record, i) => record.time - records[i]!.time);

  /** The first Replace is in and the server has opened the watch that follows it. */
  const synced = async (p: ReflectorProbe): Promise<number> => {
    await waitFor(
      () => p.ledger.replaces >= 1 && !p.ledger.replacing && p.lastHealth?.phase === 'watching' && watches().length >= 1,
      () => `not synced: ${p.ledger.replaces} replaces, health ${p.lastHealth?.phase}, ${watches().length} watches`,
    );
    return p.ledger.segments[0]!.replaceRv;
  };

  /** Waits until the consumer equals the server and health is back to a clean 'watching', then audits the stream. */
  const converged = async (p: ReflectorProbe, timeoutMs = 5000): Promise<void> => {
    const same = (): boolean => {
      const mine = p.ledger.versions();
      const theirs = serverVersions(server);
      return !p.ledger.replacing && mine.size === theirs.size && [...theirs].every(([key, rv]) => mine.get(key) === rv);
    };
    const healthy = (): boolean => p.lastHealth?.phase === 'watching' && p.lastHealth.attempt === 0 && p.lastHealth.lastError === undefined;
    await waitFor(
      () => same() && healthy(),
      () =>
        `consumer ${JSON.stringify([...p.ledger.versions()])} vs server ${JSON.stringify([...serverVersions(server)])}; ` +
        `health ${p.lastHealth?.phase} attempt ${p.lastHealth?.attempt} ${p.lastHealth?.lastError?.message ?? ''}; violations ${JSON.stringify(p.ledger.violations)}`,
      timeoutMs,
    );
    expect(p.ledger.violations).toEqual([]);
    expect(p.ledger.audit(pods.versions)).toEqual({ missing: [], unexpected: [] });
    expect(Object.fromEntries(p.ledger.versions())).toEqual(Object.fromEntries(serverVersions(server)));
    // The stream vouched for every mutation made, so the audit above saw them all.
    expect(p.ledger.segments[p.ledger.segments.length - 1]!.coveredRv).toBeGreaterThanOrEqual(Math.max(...pods.versions));
    expect(p.lastHealth).toMatchObject({ phase: 'watching', attempt: 0, lastError: undefined });
  };

  if (onNewest) describe('a broken watch re-watches from the last delivered version and never relists', () => {
    interface RewatchCase {
      readonly title: string;
      /** Ends (or breaks) the first watch after its first event. */
      readonly breaker: Fault;
      /** Fails the re-watches that follow, `times` times. */
      readonly retry?: { readonly fault: Fault; readonly times: number };
      /** The error health must show while backing off; undefined: no backoff at all. */
      readonly shows?: (error: InformerError | undefined) => boolean;
      /** The server asked for Retry-After 1 s, longer than any backoff here. */
      readonly retryAfter?: boolean;
    }
    const closeAfterFirst: Fault = { kind: 'closeAfterEvents', events: 1 };
    const cases: RewatchCase[] = [
      { title: 'closeAfterEvents (a clean end after one event)', breaker: closeAfterFirst },
      { title: 'cutMidLine (half a line, then a reset)', breaker: { kind: 'cutMidLine', afterEvents: 1 }, shows: (e) => e instanceof NetworkError || e instanceof ProtocolError },
      { title: 'garbageLine (a line that is not JSON)', breaker: { kind: 'garbageLine', afterEvents: 1 }, shows: (e) => e instanceof ProtocolError && e.problem === 'malformed-json' },
      { title: 'status 500 on two re-watches', breaker: closeAfterFirst, retry: { fault: { kind: 'status', code: 500 }, times: 2 }, shows: statusCode(500) },
      { title: 'status 429 with Retry-After 1', breaker: closeAfterFirst, retry: { fault: { kind: 'status', code: 429, retryAfterSeconds: 1 }, times: 1 }, shows: statusCode(429), retryAfter: true },
      { title: 'plainText429 with Retry-After 1', breaker: closeAfterFirst, retry: { fault: { kind: 'plainText429', retryAfterSeconds: 1 }, times: 1 }, shows: statusCode(429), retryAfter: true },
      { title: 'status 401 on two re-watches', breaker: closeAfterFirst, retry: { fault: { kind: 'status', code: 401 }, times: 2 }, shows: statusCode(401) },
      { title: 'status 403 on two re-watches', breaker: closeAfterFirst, retry: { fault: { kind: 'status', code: 403 }, times: 2 }, shows: statusCode(403) },
      // A 404 is a resource not served: it relists at its own slower pace (spec/e2e/resourceGone.spec.ts).
      { title: 'tooLargeResourceVersion on a re-watch', breaker: closeAfterFirst, retry: { fault: { kind: 'tooLargeResourceVersion' }, times: 1 }, shows: statusCode(504), retryAfter: true },
      {
        title: 'three watches that close at once with no event (no spinning)',
        breaker: closeAfterFirst,
        retry: { fault: { kind: 'closeAfterEvents', events: 0 }, times: 3 },
        shows: (e) => e instanceof NetworkError,
      },
    ];

    it.each(cases)('$title', async ({ breaker, retry, shows, retryAfter }) => {
      pods.seed(6);
      server.faults.inject(breaker, { verb: 'watch' });
      if (retry !== undefined) server.faults.inject(retry.fault, { verb: 'watch', times: retry.times });
      const p = run();
      const listRv = await synced(p);
      const [firstEvent] = pods.burst(5);
      const retries = retry?.times ?? 0;
      await waitFor(() => watches().length >= retries + 2, () => `${watches().length} watches`, 4000);
      pods.burst(3);
      await converged(p);

      expect(lists().map((r) => r.query)).toEqual([{ resourceVersion: '0', limit: '500' }]);
      expect(versionsOf(watches())).toEqual([String(listRv), ...Array<string>(retries + 1).fill(String(firstEvent))]);
      expect(watches().map((r) => r.fault)).toEqual([breaker.kind, ...Array<string>(retries).fill(retry?.fault.kind ?? ''), undefined]);
      for (const record of watches()) expect(record.query).toMatchObject({ allowWatchBookmarks: 'true', timeoutSeconds: DEFAULT_TIMEOUT_SECONDS });
      expect(p.ledger.replaces).toBe(1);
      const shown = failures(p);
      if (shows === undefined) expect(shown).toEqual([]);
      else {
        expect(shown.length).toBe(breaker === closeAfterFirst ? retries : 1);
        expect(shown.map((h) => h.attempt)).toEqual(shown.map((_, i) => i + 1));
        for (const h of shown) expect(shows(h.lastError)).toBe(true);
        const delays = expectedDelays(shown.length, retryAfter);
        expect(shown.map((h) => h.retryInMs)).toEqual(delays);
        // Each failed attempt is followed by the next one no sooner than its delay.
        const failedAt = breaker === closeAfterFirst ? 1 : 0;
        gapsMs(watches().slice(failedAt)).forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(delays[i]! - 2));
      }
    });
  });

  if (!pagesFirstList) describe('a failing list is retried as the same list; a list too new or too old relists at ""', () => {
    interface ListCase {
      readonly title: string;
      readonly fault: Fault;
      readonly times: number;
      readonly shows: (error: InformerError | undefined) => boolean;
      /** resourceVersion of each list request. */
      readonly lists: readonly string[];
      /** The server asked for Retry-After 1 s. */
      readonly retryAfter?: boolean;
      /** The failed list is retried at once, without a backoff. */
      readonly atOnce?: boolean;
    }
    const cases: ListCase[] = [
      { title: 'status 500 twice', fault: { kind: 'status', code: 500 }, times: 2, shows: statusCode(500), lists: ['0', '0', '0'] },
      { title: 'status 429 with Retry-After 1', fault: { kind: 'status', code: 429, retryAfterSeconds: 1 }, times: 1, shows: statusCode(429), lists: ['0', '0'], retryAfter: true },
      { title: 'plainText429 with Retry-After 1', fault: { kind: 'plainText429', retryAfterSeconds: 1 }, times: 1, shows: statusCode(429), lists: ['0', '0'], retryAfter: true },
      { title: 'status 401 twice', fault: { kind: 'status', code: 401 }, times: 2, shows: statusCode(401), lists: ['0', '0', '0'] },
      { title: 'status 403 twice', fault: { kind: 'status', code: 403 }, times: 2, shows: statusCode(403), lists: ['0', '0', '0'] },
      { title: 'tooLargeResourceVersion, answered with a list at "" at once', fault: { kind: 'tooLargeResourceVersion' }, times: 1, shows: statusCode(504), lists: ['0', ''], atOnce: true },
    ];

    it.each(cases)('$title', async ({ fault, times, shows, lists: expected, retryAfter, atOnce }) => {
      pods.seed(6);
      server.faults.inject(fault, { verb: 'list', times });
      const p = run();
      const listRv = await synced(p);
      pods.burst(5);
      await converged(p);

      expect(versionsOf(lists())).toEqual(expected);
      expect(lists().map((r) => r.fault)).toEqual([...Array<string>(times).fill(fault.kind), undefined]);
      expect(versionsOf(watches())).toEqual([String(listRv)]);
      expect(p.ledger.replaces).toBe(1);
      if (atOnce === true) {
        expect(failures(p)).toEqual([]);
        expect(p.health.some((h) => h.phase === 'listing' && shows(h.lastError))).toBe(true);
        return;
      }
      const shown = failures(p);
      expect(shown.map((h) => h.attempt)).toEqual(expected.slice(1).map((_, i) => i + 1));
      for (const h of shown) expect(shows(h.lastError)).toBe(true);
      const delays = expectedDelays(shown.length, retryAfter);
      expect(shown.map((h) => h.retryInMs)).toEqual(delays);
      gapsMs(lists()).forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(delays[i]! - 2));
    });
  });

  if (!pagesFirstList) describe('410 Gone relists once, not in a loop', () => {
    it('a 410 on the watch relists once at the last delivered version, unpaged, which the server answers with its current state; then watches from there', async () => {
      pods.seed(6);
      server.faults.inject({ kind: 'closeAfterEvents', events: 1 }, { verb: 'watch' });
      server.faults.inject({ kind: 'status', code: 410, reason: 'Expired', message: 'too old resource version' }, { verb: 'watch' });
      const p = run();
      const listRv = await synced(p);
      const burst = pods.burst(5);
      await waitFor(() => p.ledger.replaces === 2 && watches().length === 3, () => `${p.ledger.replaces} replaces, ${watches().length} watches`);
      pods.burst(3);
      await converged(p);

      expect(versionsOf(lists())).toEqual(['0', String(burst[0])]);
      // Unpaged: "not older than", from the watch cache (with limit it would be an Exact read).
      expect(lists()[1]?.query).toEqual({ resourceVersion: String(burst[0]) });
      expect(versionsOf(watches())).toEqual([String(listRv), String(burst[0]), String(burst[4])]);
      expect(watches().map((r) => r.status)).toEqual([200, 410, 200]);
      expect(p.ledger.segments.map((s) => s.replaceRv)).toEqual([listRv, burst[4]]);
      expect(failures(p).map((h) => (h.lastError as StatusError).code)).toEqual([410]);
    });

    it('a relist answered "too large resource version" lists once more at "", at once', async () => {
      pods.seed(6);
      server.faults.inject({ kind: 'closeAfterEvents', events: 1 }, { verb: 'watch' });
      server.faults.inject({ kind: 'status', code: 410, reason: 'Expired' }, { verb: 'watch' });
      const p = run();
      const listRv = await synced(p);
      server.faults.inject({ kind: 'tooLargeResourceVersion' }, { verb: 'list' }); // for the relist, not the first list
      const burst = pods.burst(5);
      await waitFor(() => p.ledger.replaces === 2 && watches().length === 3, () => `${p.ledger.replaces} replaces, ${watches().length} watches`);
      pods.burst(3);
      await converged(p);

      expect(versionsOf(lists())).toEqual(['0', String(burst[0]), '']);
      expect(lists().map((r) => r.status)).toEqual([200, 504, 200]);
      expect(versionsOf(watches())).toEqual([String(listRv), String(burst[0]), String(burst[4])]);
      expect(p.ledger.segments.map((s) => s.replaceRv)).toEqual([listRv, burst[4]]);
      // Only the watch's 410 waited; the list at "" followed the 504 at once.
      expect(failures(p).map((h) => (h.lastError as StatusError).code)).toEqual([410]);
    });

    it('compaction while the watch is down: ERROR 410 on the watch, then a relist at the last version, which is answered "not older than" with the current state', async () => {
      pods.seed(6);
      const p = run();
      const listRv = await synced(p);
      const restarting = server.restart(); // drops the watch at once
      const burst = pods.burst(5);
      server.store.compact();
      await restarting;
      await waitFor(() => p.ledger.replaces === 2 && watches().length === 3, () => `${p.ledger.replaces} replaces, ${watches().length} watches`);
      pods.burst(3);
      await converged(p);

      expect(versionsOf(lists())).toEqual(['0', String(listRv)]);
      expect(lists().map((r) => [r.status, r.query['limit']])).toEqual([
        [200, '500'],
        [200, undefined],
      ]);
      // The watch ERROR travels in a 200 response.
      expect(versionsOf(watches())).toEqual([String(listRv), String(listRv), String(burst[4])]);
      expect(p.ledger.segments.map((s) => s.replaceRv)).toEqual([listRv, burst[4]]);
      const codes = failures(p).map((h) => (h.lastError instanceof StatusError ? h.lastError.code : h.lastError?.kind));
      expect(codes.filter((c) => c === 410)).toHaveLength(1);
    });
  });

  if (pagesFirstList) describe('an expired continue token, or a list connection that dies between pages', () => {
    it('an expired continue token lists once more at once, unpaged at the same version, as a fresh Replace (client-go\'s pager)', async () => {
      pods.seed(50);
      let expired = false;
      const p = run({ pageSize: 5 }, {
        tap: (delta, ledger) => {
          if (!expired && delta.type === 'Replace' && delta.first && !delta.last && ledger.replaces === 0) {
            expired = true;
            server.faults.expireContinueTokens();
          }
        },
      });
      const listRv = await synced(p);
      pods.burst(5);
      await converged(p);

      const requests = lists();
      expect(requests.map((r) => [r.query['resourceVersion'], r.query['limit'], r.query['continue'] !== undefined, r.status])).toEqual([
        ['0', '5', false, 200],
        [undefined, '5', true, 410],
        ['0', undefined, false, 200],
      ]);
      expect(p.ledger).toMatchObject({ replaces: 1, abandonedReplaces: 1 });
      expect(versionsOf(watches())).toEqual([String(listRv)]);
      expect(failures(p)).toEqual([]);
    });

    it('an expired continue token during a paged relist lists once more, unpaged at the same version, the old state kept until the new Replace ends', async () => {
      pods.seed(50);
      server.faults.inject({ kind: 'closeAfterEvents', events: 1 }, { verb: 'watch' });
      server.faults.inject({ kind: 'status', code: 410, reason: 'Expired' }, { verb: 'watch' });
      let expired = false;
      let sizeWhileRelisting = -1;
      const p = run({ pageSize: 5 }, {
        tap: (delta, ledger) => {
          if (!expired && delta.type === 'Replace' && delta.first && !delta.last && ledger.replaces === 1) {
            expired = true;
            sizeWhileRelisting = ledger.versions().size;
            server.faults.expireContinueTokens();
          }
        },
      });
      const listRv = await synced(p);
      const burst = pods.burst(5);
      await waitFor(() => p.ledger.replaces === 2 && watches().length === 3, () => `${p.ledger.replaces} replaces, ${watches().length} watches`);
      pods.burst(3);
      await converged(p);

      expect(sizeWhileRelisting).toBe(51); // 50 listed + the first burst event, a create
      // The first list came back in pages, so relists page too, asking NotOlderThan.
      expect(listStarts(server).map((r) => [r.query['resourceVersion'], r.query['resourceVersionMatch'], r.query['limit']])).toEqual([
        ['0', undefined, '5'],
        [String(burst[0]), 'NotOlderThan', '5'],
        [String(burst[0]), 'NotOlderThan', undefined],
      ]);
      expect(p.ledger).toMatchObject({ replaces: 2, abandonedReplaces: 1 });
      expect(versionsOf(watches())).toEqual([String(listRv), String(burst[0]), String(burst[4])]);
    });

    it('a list whose connection dies silently is abandoned after listPageTimeoutMs and retried, not waited on forever', async () => {
      proxy = await startTcpProxy(server);
      const frozenProxy = proxy;
      pods.seed(50);
      let frozen = false;
      const p = run({ pageSize: 5, listPageTimeoutMs: 1000 }, {
        via: frozenProxy,
        tap: (delta) => {
          // Page 1 is in: freeze the connection that will carry page 2.
          if (!frozen && delta.type === 'Replace' && delta.first) {
            frozen = true;
            frozenProxy.freezeNextConnection();
          }
        },
      });
      await converged(p, 10_000);
      const timedOut = p.health.filter((h) => h.lastError instanceof IdleTimeoutError);
      expect(timedOut.length).toBeGreaterThanOrEqual(1);
      expect(timedOut[0]!.lastError).toMatchObject({ request: 'list', idleMs: 1000 });
      // The abandoned list restarted from its first page at the same version.
      expect(versionsOf(listStarts(server))).toEqual(['0', '0']);
    }, 15_000);
  });

  if (onNewest) describe('a slow or stalled stream is waited for, not reconnected', () => {
    it.each<{ fault: Fault }>([{ fault: { kind: 'slowWrites', delayMs: 30 } }, { fault: { kind: 'stall', ms: 600, afterEvents: 1 } }])('$fault.kind', async ({ fault }) => {
      pods.seed(6);
      server.faults.inject(fault, { verb: 'watch' });
      const p = run();
      const listRv = await synced(p);
      pods.burst(5);
      await converged(p);

      expect(versionsOf(lists())).toEqual(['0']);
      expect(versionsOf(watches())).toEqual([String(listRv)]);
      expect(watches()[0]?.fault).toBe(fault.kind);
      expect(failures(p)).toEqual([]);
    });

    it('a stall outlasting the watch timeoutSeconds ends with the server closing the watch; the re-watch replays what was held', async () => {
      pods.seed(6);
      server.faults.inject({ kind: 'stall', ms: 3000, afterEvents: 1 }, { verb: 'watch' });
      const p = run({ watchTimeoutSeconds: { min: 1, max: 2 } });
      const listRv = await synced(p);
      const started = Date.now();
      const burst = pods.burst(5);
      await converged(p);
      const elapsedS = (Date.now() - started) / 1000;

      expect(versionsOf(lists())).toEqual(['0']);
      const rvs = versionsOf(watches());
      expect(rvs.slice(0, 2)).toEqual([String(listRv), String(burst[0])]);
      expect(watches()[0]?.fault).toBe('stall');
      for (const record of watches()) expect(record.query['timeoutSeconds']).toBe('1');
      // One watch per server timeout, no more.
      expect(rvs.length).toBeLessThanOrEqual(2 + Math.ceil(elapsedS));
    });

    it('a dead connection (no bytes, no close) is caught by the idle timeout (timeoutSeconds + 5 s) and re-watched without a relist', async () => {
      proxy = await startTcpProxy(server);
      pods.seed(6);
      const p = run({ watchTimeoutSeconds: { min: 1, max: 2 } }, { via: proxy });
      const listRv = await synced(p);
      expect(proxy.freezeWatches()).toBe(1);
      pods.burst(5);
      await converged(p, 10_000);

      expect(versionsOf(lists())).toEqual(['0']);
      const [dead, revived] = watches();
      expect(versionsOf([dead!, revived!])).toEqual([String(listRv), String(listRv)]);
      expect(revived!.time - dead!.time).toBeGreaterThanOrEqual(5900);
      const idle = p.health.filter((h) => h.lastError instanceof IdleTimeoutError);
      expect(idle.length).toBeGreaterThanOrEqual(1);
      expect((idle[0]!.lastError as IdleTimeoutError).idleMs).toBe(6000);
      // Reconnected at once: the wait was the timeout itself.
      expect(failures(p)).toEqual([]);
    }, 15_000);
  });

  if (onNewest) describe('a lost server or connection backs off and re-watches, with no relist storm', () => {
    it('restart(): the watch drops, mutations made meanwhile arrive on the re-watch from the same version', async () => {
      pods.seed(6);
      const p = run();
      const listRv = await synced(p);
      const restarting = server.restart();
      pods.burst(5);
      await restarting;
      await waitFor(() => watches().length >= 2, () => `${watches().length} watches`);
      pods.burst(3);
      await converged(p);

      expect(versionsOf(lists())).toEqual(['0']);
      expect(versionsOf(watches())).toEqual([String(listRv), String(listRv)]);
      expect(failures(p).length).toBeGreaterThanOrEqual(1);
      for (const h of failures(p)) expect(h.lastError).toBeInstanceOf(NetworkError);
    });

    it('connection refused: backs off within the cap and re-watches once the port answers again', async () => {
      proxy = await startTcpProxy(server);
      pods.seed(6);
      const p = run({}, { via: proxy });
      const listRv = await synced(p);
      await proxy.refuse();
      pods.burst(5);
      const refused = () => failures(p).filter((h) => h.lastError instanceof NetworkError && h.lastError.code === 'ECONNREFUSED');
      await waitFor(() => refused().length >= 3, () => `${refused().length} refusals`);
      await proxy.accept();
      await waitFor(() => watches().length >= 2, () => `${watches().length} watches`);
      pods.burst(3);
      await converged(p);

      expect(versionsOf(lists())).toEqual(['0']);
      expect(versionsOf(watches())).toEqual([String(listRv), String(listRv)]);
      for (const h of failures(p)) expect(h.retryInMs).toBeLessThanOrEqual(300);
      expect(failures(p).map((h) => h.attempt)).toEqual(failures(p).map((_, i) => i + 1));
    });
  });

  if (onNewest) describe('streaming lists', () => {
    const streaming: ReflectConfig = { streamingList: true };

    it('the initial events become one Replace and a reconnect is a plain watch from the last version, without sendInitialEvents', async () => {
      pods.seed(6);
      server.faults.inject({ kind: 'closeAfterEvents', events: 6 + 1 + 1 }, { verb: 'watch' }); // 6 ADDED, the bookmark, one event
      const p = run(streaming);
      await synced(p);
      const [firstEvent] = pods.burst(5);
      await waitFor(() => watches().length >= 2, () => `${watches().length} watches`);
      pods.burst(3);
      await converged(p);

      expect(lists()).toEqual([]);
      const [stream, rewatch] = watches();
      expect(stream?.query).toMatchObject({ sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: 'true' });
      expect(rewatch?.query['sendInitialEvents']).toBeUndefined();
      expect(rewatch?.query['resourceVersion']).toBe(String(firstEvent));
      expect(watches()).toHaveLength(2);
      expect(p.ledger.replaces).toBe(1);
    });

    it('a streaming list the server refuses (400) falls back to a paged list at "0"', async () => {
      pods.seed(6);
      server.faults.inject({ kind: 'status', code: 400, message: 'sendInitialEvents is forbidden' }, { verb: 'watch' });
      const p = run(streaming);
      const listRv = await synced(p);
      pods.burst(5);
      await converged(p);

      expect(versionsOf(lists())).toEqual(['0']);
      expect(watches().map((r) => [r.query['sendInitialEvents'], r.status])).toEqual([
        ['true', 400],
        [undefined, 200],
      ]);
      expect(watches()[1]?.query['resourceVersion']).toBe(String(listRv));
      expect(p.ledger.replaces).toBe(1);
    });

    it('a streaming list whose initial-events-end bookmark never comes falls back to a paged list after the bounded wait', async () => {
      pods.seed(6);
      server.faults.inject({ kind: 'stall', ms: 3000, afterEvents: 6 }, { verb: 'watch' }); // holds the bookmark
      const p = run({ ...streaming, initialEventsTimeoutMs: 300 });
      const listRv = await synced(p);
      pods.burst(5);
      await converged(p);

      expect(versionsOf(lists())).toEqual(['0']);
      expect(watches().map((r) => r.query['sendInitialEvents'])).toEqual(['true', undefined]);
      expect(watches()[1]?.query['resourceVersion']).toBe(String(listRv));
      expect(p.ledger).toMatchObject({ replaces: 1, abandonedReplaces: 0 });
    });

    it('a streaming list cut during its initial events lists in pages at once, at "0" (the initial events did not advance the version)', async () => {
      pods.seed(8);
      server.faults.inject({ kind: 'cutMidLine', afterEvents: 3 }, { verb: 'watch' });
      const p = run({ ...streaming, pageSize: 2 });
      const listRv = await synced(p);
      pods.burst(5);
      await converged(p);

      expect(versionsOf(listStarts(server))).toEqual(['0']);
      expect(watches().map((r) => [r.query['sendInitialEvents'], r.query['resourceVersion'] ?? ''])).toEqual([
        ['true', ''],
        [undefined, String(listRv)],
      ]);
      // The stream's first page opened a Replace that the list's first page abandoned.
      expect(p.ledger).toMatchObject({ replaces: 1, abandonedReplaces: 1 });
      expect(failures(p)).toEqual([]);
    });

    it('the initial events flow out as Replace pages of pageSize as they arrive', async () => {
      pods.seed(5);
      const pages: [number, boolean, boolean][] = [];
      const p = run({ ...streaming, pageSize: 2 }, { tap: (delta) => delta.type === 'Replace' && void pages.push([delta.items.length, delta.first, delta.last]) });
      await synced(p);
      await converged(p);

      expect(pages).toEqual([
        [2, true, false],
        [2, false, false],
        [1, false, true],
      ]);
      expect(lists()).toEqual([]);
    });
  });
}
