import { readFileSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { pods } from '../../lib/resources/builtins';
import { createChurn, startApiServer, type ApiServer, type Churn } from '../../apiserver/src';
import { againstRepository, quickstartBlock, REPO, runTypeScript, scratchFolder, typeErrors, type Scratch } from './snippets';
import { describeEachServerVersion } from '../support/serverVersions';

/**
 * The README as a newcomer meets it: the two commands come first, and the quickstart is a program
 * that compiles and runs as written (with `rx-informer` pointing at this repository's sources).
 */
const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
const QUICKSTART_PODS = 30;

describe('README.md', () => {
  it('opens with the two commands: npm start, then npm test', () => {
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const commands = firstBlock.split('\n').map((line) => line.split('#')[0]?.trim()).filter((line) => line !== '');
    expect(commands).toEqual(['npm start', 'npm test']);
    expect(readme.indexOf('```sh')).toBeLessThan(readme.indexOf('## '));
  });
});

describe('the README quickstart', () => {
  let scratch: Scratch;
  let file: string;

  beforeAll(() => {
    scratch = scratchFolder();
    file = scratch.write('quickstart.ts', againstRepository(quickstartBlock(readme).code));
  });
  afterAll(() => scratch.remove());

  it('imports rx-informer, so that rewriting the import is what points it at this repository', () => {
    expect(quickstartBlock(readme).code).toMatch(/from 'rx-informer'/);
    expect(readFileSync(file, 'utf8')).not.toMatch(/from 'rx-informer'/);
  });

  it('type-checks as written, under the repository compiler options (strict)', () => {
    expect(typeErrors([file])).toEqual([]);
  }, 120_000);

  describeEachServerVersion('run against a loopback API server through $KUBECONFIG', (serverVersion) => {
    let server: ApiServer;
    let churn: Churn;
    let kubeconfig: string;

    beforeEach(async () => {
      server = await startApiServer({ serverVersion });
      // Updates only, so that the population the quickstart reports stays what the test knows.
      churn = createChurn(server.store, { pods: QUICKSTART_PODS, namespaces: 3, updatesPerSecond: 40 });
      churn.populate();
      kubeconfig = scratch.write('kubeconfig', server.kubeConfig.exportConfig());
    });
    afterEach(async () => {
      churn.stop();
      await server.close();
    });

    it('syncs, reads the app index, syncs its handler, sees five watch updates and exits by itself with code 0', async () => {
      const webPods = server.store.list(pods).filter((pod) => pod.metadata.labels?.['app'] === 'web').length;
      churn.start();
      // Bound: ts-node starts in seconds on an idle machine; the quickstart itself needs < 1 s.
      const result = await runTypeScript(file, { KUBECONFIG: kubeconfig }, 150_000);

      expect({ ...result, stdout: result.stdout.split('\n') }).toEqual({ code: 0, signal: null, stderr: '', stdout: expect.arrayContaining([expect.stringMatching(/^updated: /)]) });
      const lines = result.stdout.trim().split('\n');
      expect(lines[0]).toBe(`synced: ${QUICKSTART_PODS} pods, ${webPods} with app=web`);
      expect(lines).toContain('handler synced');
      const updated = /^updated: 5 pods \((.*)\)$/.exec(lines[lines.length - 1] ?? '');
      expect(updated).not.toBeNull();
      const names = updated?.[1]?.split(', ') ?? [];
      const known = new Set(server.store.list(pods).map((pod) => pod.metadata.name));
      expect(names).toHaveLength(5);
      expect(names.filter((name) => !known.has(name))).toEqual([]);
    }, 180_000);
  });

  describe('run with no cluster', () => {
    it('stops by itself once its sync timeout passes, saying which informer failed on which request and why', async () => {
      // A port nothing listens on: what client-node's fallback (http://localhost:8080) meets without a cluster.
      const closed = await new Promise<number>((resolve) => {
        const probe = net.createServer().listen(0, '127.0.0.1', () => {
          const { port } = probe.address() as net.AddressInfo;
          probe.close(() => resolve(port));
        });
      });
      const kubeconfig = scratch.write('unreachable', kubeConfigYaml(`http://127.0.0.1:${closed}`, 'loopback'));
      const result = await runTypeScript(file, { KUBECONFIG: kubeconfig }, 150_000);
      expect({ ...result, stderr: undefined }).toEqual({ code: 1, signal: null, stdout: '', stderr: undefined });
      const stderr = result.stderr.split('\n');
      expect(stderr.slice(-2)).toEqual([`NetworkError: pods: GET /api/v1/pods failed: connect ECONNREFUSED 127.0.0.1:${closed}`, '']);
      // Before it, each retry, visible by default: a warning on stderr, one line each.
      const retries = stderr.slice(0, -2);
      expect(retries.length).toBeGreaterThan(0);
      for (const line of retries) expect(line).toMatch(/^\S+ WARN relisting.* informer=pods .*connect ECONNREFUSED/);
    }, 180_000);

    it('stops at once on a kubeconfig it cannot use, saying why', async () => {
      const kubeconfig = scratch.write('no-context', kubeConfigYaml('http://127.0.0.1:1', ''));
      const result = await runTypeScript(file, { KUBECONFIG: kubeconfig }, 150_000);
      expect(result).toEqual({ code: 1, signal: null, stdout: '', stderr: 'ConfigError: pods: the kubeconfig has no current context\n' });
    }, 180_000);
  });
});

/** A minimal kubeconfig for one cluster; `currentContext` '' leaves the current context unset. */
function kubeConfigYaml(server: string, currentContext: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    `clusters: [{ name: c, cluster: { server: '${server}' } }]`,
    'users: [{ name: u, user: {} }]',
    'contexts: [{ name: loopback, context: { cluster: c, user: u } }]',
    `current-context: '${currentContext}'`,
    '',
  ].join('\n');
}
