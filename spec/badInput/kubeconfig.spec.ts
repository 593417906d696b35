import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { ConfigError, InformerError, type ConfigProblem } from '../../lib/base/errors';
import { loadClientNode } from '../../apiserver/src';
import { waitForSync } from '../../lib/informer/waitForSync';
import { contents, openWatch, pod, quietWatch, runInformer, startRawApiServer, twoPods, type RawApiServer, type RunningInformer } from './rawApiServer';

type Options = Parameters<KubeConfig['loadFromOptions']>[0];

function kubeConfigFrom(options: Options): KubeConfig {
  const { KubeConfig: KubeConfigClass } = loadClientNode();
  const kubeConfig = new KubeConfigClass();
  kubeConfig.loadFromOptions(options);
  return kubeConfig;
}

describe('bad input: a kubeconfig with a missing context, cluster, user or file', () => {
  let server: RawApiServer;
  let running: RunningInformer | undefined;
  let directory: string;
  beforeEach(async () => {
    server = await startRawApiServer({ list: twoPods, watch: quietWatch });
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-informer-kubeconfig-'));
  });
  afterEach(async () => {
    running?.stop();
    running = undefined;
    await server.close();
    fs.rmSync(directory, { recursive: true, force: true });
  });

  /** What no retry can fix: informer() refuses the kubeconfig when the informer is made. */
  const unusable: readonly [string, ConfigProblem, (url: string) => Options, RegExp][] = [
    ['the current context does not exist', 'missing-context', (url) => ({ clusters: [{ name: 'c', server: url }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'staging' }), /^pods: the kubeconfig has no context named "staging"$/],
    ['there is no current context', 'no-current-context', (url) => ({ clusters: [{ name: 'c', server: url }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: '' }), /^pods: the kubeconfig has no current context$/],
    ['the context names a cluster that is missing', 'missing-cluster', () => ({ clusters: [], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'prod', user: 'u' }], currentContext: 'x' }), /cluster "prod"/],
    ['the context names a user that is missing', 'missing-user', (url) => ({ clusters: [{ name: 'c', server: url }], users: [], contexts: [{ name: 'x', cluster: 'c', user: 'admin' }], currentContext: 'x' }), /user "admin"/],
    ['the cluster server URL is not a URL', 'invalid-server-url', () => ({ clusters: [{ name: 'c', server: 'not a url' }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' }), /invalid server URL/],
  ];

  it.each(unusable)('when %s: informer() throws ConfigError %s at once, naming the informer, and no request is sent', (_label, problem, options, message) => {
    let thrown: unknown;
    try {
      runInformer(kubeConfigFrom(options(server.url)));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect(thrown).toMatchObject({ problem, informer: 'pods' });
    expect((thrown as ConfigError).message).toMatch(message);
    expect(server.requests).toHaveLength(0);
  });

  /** What may be fixed while the informer runs: a file the kubeconfig names. Reported per request. */
  const unreadable: readonly [string, ConfigProblem, (url: string) => Options, RegExp][] = [
    ['the CA file does not exist', 'unreadable-file', (url) => ({ clusters: [{ name: 'c', server: url.replace('http:', 'https:'), caFile: '/nonexistent/ca.crt' }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' }), /ENOENT.*\/nonexistent\/ca\.crt/],
    ['the client certificate file does not exist', 'unreadable-file', (url) => ({ clusters: [{ name: 'c', server: url.replace('http:', 'https:') }], users: [{ name: 'u', certFile: '/nonexistent/client.crt', keyFile: '/nonexistent/client.key' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' }), /ENOENT/],
  ];

  it.each(unreadable)('when %s: health$ shows ConfigError %s, waitForSync rejects with it, and no request is sent', async (_label, problem, options, message) => {
    running = runInformer(kubeConfigFrom(options(server.url)));
    const rejection: unknown = await waitForSync([running.informer], { timeout: 300 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(rejection).toBeInstanceOf(ConfigError);
    expect((rejection as ConfigError).problem).toBe(problem);
    expect((rejection as ConfigError).message).toMatch(message);
    expect((rejection as ConfigError).message).toMatch(/^pods: /);
    expect(running.healths.some((health) => health.lastError instanceof ConfigError && health.lastError.problem === problem)).toBe(true);
    expect(server.requests).toHaveLength(0);
    expect(running.streamError()).toBeUndefined();
  });

  it('when a file the kubeconfig names disappears mid-run: reports unreadable-file, keeps the cache, and resumes once it is back', async () => {
    const caFile = path.join(directory, 'ca.crt');
    fs.writeFileSync(caFile, 'not read over plain http, but read per request all the same');
    await server.close();
    server = await startRawApiServer({
      list: twoPods,
      watch: (request, response) => {
        const watch = openWatch(response);
        if (request.index === 0) {
          watch.event('MODIFIED', pod('a', '3'));
          // The file goes away, then the watch ends: the re-watch must read it again.
          fs.rmSync(caFile);
          watch.end();
        } else {
          watch.event('ADDED', pod('c', '4'));
        }
      },
    });
    running = runInformer(kubeConfigFrom({ clusters: [{ name: 'c', server: server.url, caFile }], users: [{ name: 'u' }], contexts: [{ name: 'x', cluster: 'c', user: 'u' }], currentContext: 'x' }));
    const error = await running.errorReported((e: InformerError): e is ConfigError => e instanceof ConfigError && e.problem === 'unreadable-file');
    expect(error.message).toContain('ca.crt');
    expect(contents(running.latest())).toEqual({ 'default/a': '3', 'default/b': '2' });
    fs.writeFileSync(caFile, 'back again');
    const after = await running.snapshotWhere((snapshot) => snapshot.has('default/c'));
    expect(contents(after)).toEqual({ 'default/a': '3', 'default/b': '2', 'default/c': '4' });
    expect(server.requests.filter((r) => r.kind === 'list')).toHaveLength(1);
    expect(running.streamError()).toBeUndefined();
  });
});
