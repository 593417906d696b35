import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { configMaps, deployments, type Deployment } from '../../lib/resources/builtins';
import { createChurn, startApiServer, type ApiServer } from '../../apiserver/src';
import { REPO, runTypeScript, scratchFolder, type Scratch } from '../docs/snippets';
import { Lines } from './lines';
import { within } from '../support/eventually';
import { describeEachServerVersion } from '../support/serverVersions';

/**
 * Each example is also a program (`npx ts-node examples/run/<name>.ts`): it reads the default
 * kubeconfig ($KUBECONFIG here) and runs the example's `main`. Over TLS, as client-node's typed
 * clients, which the controllers write through, refuse a plain-http cluster.
 */
describeEachServerVersion('the examples as programs, through $KUBECONFIG', (serverVersion) => {
  let server: ApiServer;
  let scratch: Scratch;
  let kubeconfig: string;

  beforeEach(async () => {
    server = await startApiServer({ serverVersion, tls: true });
    scratch = scratchFolder();
    kubeconfig = scratch.write('kubeconfig', server.kubeConfig.exportConfig());
  });
  afterEach(async () => {
    scratch.remove();
    await server.close();
  });

  it('podWatcher prints the synced cache and ten changes, then exits with code 0', async () => {
    const churn = createChurn(server.store, { pods: 20, namespaces: 2, updatesPerSecond: 40 });
    churn.populate();
    churn.start();
    try {
      const result = await runTypeScript(path.join(REPO, 'examples/run/podWatcher.ts'), { KUBECONFIG: kubeconfig }, 150_000);
      const lines = result.stdout.trim().split('\n');
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      expect(lines).toContain('health: watching');
      expect(lines.find((line) => line.startsWith('synced: '))).toMatch(/^synced: 20 pods in 2 namespaces at resourceVersion \d+$/);
      expect(lines.filter((line) => /^update ns-[01]\/\S+$/.test(line))).toHaveLength(10);
    } finally {
      churn.stop();
    }
  }, 180_000);

  it('configMapPerDeployment reconciles until SIGINT, then stops cleanly with code 0', async () => {
    const deployment: Deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { namespace: 'shop', name: 'web' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } } },
    };
    server.store.create(deployments, deployment);
    const tsNode = require.resolve('ts-node/dist/bin.js');
    const child = spawn(process.execPath, [tsNode, '--transpile-only', '--project', path.join(REPO, 'tsconfig.json'), path.join(REPO, 'examples/run/configMapPerDeployment.ts'), 'shop'], {
      env: { ...process.env, KUBECONFIG: kubeconfig },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines = new Lines();
    let stderr = '';
    let pending = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const complete = pending.split('\n');
      pending = complete.pop() ?? '';
      complete.forEach(lines.log);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await lines.waitFor('created web-info for shop/web', 0, 150_000);
      expect(server.store.get(configMaps, 'shop', 'web-info')?.data).toEqual({ replicas: '2', image: 'nginx:1.27' });
      child.kill('SIGINT');
      // Within the 180 s of this spec after the 150 s the first line may take.
      expect(await within(exited, 25_000, 'the example to exit after SIGINT', () => ({ lines: lines.seen, stderr }))).toBe(0);
      expect(lines.seen).toEqual(['caches synced', 'created web-info for shop/web', 'stopped']);
      expect(stderr).toBe('');
    } finally {
      child.kill('SIGKILL');
    }
  }, 180_000);
});
