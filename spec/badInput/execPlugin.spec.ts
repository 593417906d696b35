import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { ConfigError, InformerError } from '../../lib/base/errors';
import { loadClientNode } from '../../apiserver/src';
import { waitForSync } from '../../lib/informer/waitForSync';
import { contents, openWatch, pod, quietWatch, runInformer, startRawApiServer, twoPods, type RawApiServer, type RunningInformer } from './rawApiServer';

const PLUGIN_SECRET = 'plugin-refresh-secret-7f3a';
const EXEC_TOKEN = 'exec-issued-token-91c2';

/**
 * A credential plugin that fails (exit 3, a message on stderr that echoes a secret) while the
 * file `fail` exists next to it, and otherwise prints an ExecCredential that expired long ago,
 * so that client-node runs it again for every request.
 */
function writePlugin(directory: string): string {
  const script = path.join(directory, 'plugin.sh');
  fs.writeFileSync(
    script,
    [
      '#!/bin/sh',
      `if [ -e "${path.join(directory, 'fail')}" ]; then`,
      `  echo "error: refresh failed for token=${PLUGIN_SECRET}" >&2`,
      '  exit 3',
      'fi',
      `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${EXEC_TOKEN}","expirationTimestamp":"2000-01-01T00:00:00Z"}}'`,
    ].join('\n'),
    { mode: 0o755 },
  );
  return script;
}

function execKubeConfig(url: string, command: string, args: string[] = []): KubeConfig {
  const { KubeConfig: KubeConfigClass } = loadClientNode();
  const kubeConfig = new KubeConfigClass();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: url }],
    users: [{ name: 'u', exec: { apiVersion: 'client.authentication.k8s.io/v1', command, args, interactiveMode: 'Never' } }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kubeConfig;
}

const isPluginFailure = (error: InformerError): error is ConfigError => error instanceof ConfigError && error.problem === 'credential-plugin-failed';

describe('bad input: an exec credential plugin that fails', () => {
  let server: RawApiServer | undefined;
  let running: RunningInformer | undefined;
  let directory: string;
  beforeEach(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'rx-informer-exec-'));
  });
  afterEach(async () => {
    running?.stop();
    running = undefined;
    await server?.close();
    fs.rmSync(directory, { recursive: true, force: true });
  });

  async function rejectionOf(kubeConfig: KubeConfig): Promise<ConfigError> {
    running = runInformer(kubeConfig);
    const rejection: unknown = await waitForSync([running.informer], { timeout: 500 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(rejection).toBeInstanceOf(ConfigError);
    expect(isPluginFailure(rejection as ConfigError)).toBe(true);
    expect(running.healths.some((health) => health.lastError !== undefined && isPluginFailure(health.lastError))).toBe(true);
    return rejection as ConfigError;
  }

  it('exiting non-zero: credential-plugin-failed on health$ and from waitForSync, without the secret it printed', async () => {
    server = await startRawApiServer({ list: twoPods, watch: quietWatch });
    const plugin = writePlugin(directory);
    fs.writeFileSync(path.join(directory, 'fail'), '');
    const error = await rejectionOf(execKubeConfig(server.url, plugin));
    expect(error.message).toMatch(/refresh failed/);
    expect(error.message).not.toContain(PLUGIN_SECRET);
    expect(server.requests).toHaveLength(0);
  });

  it('printing output that is not JSON: credential-plugin-failed, without echoing the output', async () => {
    server = await startRawApiServer({ list: twoPods, watch: quietWatch });
    const error = await rejectionOf(execKubeConfig(server.url, 'sh', ['-c', `echo '{"status":{"token":"${PLUGIN_SECRET}"'`]));
    expect(error.message).toMatch(/not JSON/);
    expect(error.message).not.toContain(PLUGIN_SECRET);
  });

  it('missing from the PATH: credential-plugin-failed naming the command', async () => {
    server = await startRawApiServer({ list: twoPods, watch: quietWatch });
    const error = await rejectionOf(execKubeConfig(server.url, path.join(directory, 'no-such-plugin')));
    expect(error.message).toMatch(/ENOENT/);
  });

  it('starting to fail mid-run: reports it, keeps the cache, and resumes when the plugin works again', async () => {
    const failFlag = path.join(directory, 'fail');
    server = await startRawApiServer({
      list: twoPods,
      watch: (request, response) => {
        const watch = openWatch(response);
        if (request.index === 0) {
          watch.event('MODIFIED', pod('a', '3'));
          fs.writeFileSync(failFlag, '');
          watch.end();
        } else {
          watch.event('ADDED', pod('c', '4'));
        }
      },
    });
    running = runInformer(execKubeConfig(server.url, writePlugin(directory)));
    const error = await running.errorReported(isPluginFailure);
    expect(error.message).not.toContain(PLUGIN_SECRET);
    expect(contents(running.latest())).toEqual({ 'default/a': '3', 'default/b': '2' });
    fs.rmSync(failFlag);
    const after = await running.snapshotWhere((snapshot) => snapshot.has('default/c'));
    expect(contents(after)).toEqual({ 'default/a': '3', 'default/b': '2', 'default/c': '4' });
    expect(server.requests.every((request) => request.headers.authorization === `Bearer ${EXEC_TOKEN}`)).toBe(true);
    expect(server.requests.filter((r) => r.kind === 'list')).toHaveLength(1);
  });
});
