import { readFileSync } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { pods } from '../../lib/resources/builtins';
import { createChurn, startApiServer, type ApiServer, type Churn } from '../../apiserver/src';
import { againstRepository, quickstartBlock, REPO, runTypeScript, scratchFolder, typeErrors, type Scratch } from './snippets';
import { describeEachServerVersion } from '../support/serverVersions';

/**
 * The README as a newcomer meets it: its first screen says what the library is, gives the install
 * line and a quickstart that compiles and runs as written (with `rx-informer` pointing at this
 * repository's sources), then the repository's two commands, of which CI runs the test command.
 */
const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
const QUICKSTART_PODS = 30;
/** A screen: what a reader sees before scrolling. */
const FIRST_SCREEN_LINES = 60;

/** The commands of a ```sh block, comments and blank lines dropped. */
function shellCommands(block: string): string[] {
  return block.split('\n').map((line) => line.split('#')[0]?.trim() ?? '').filter((line) => line !== '');
}

describe('README.md', () => {
  const lines = readme.split('\n');
  const lineOf = (text: string): number => lines.findIndex((line) => line.includes(text)) + 1;
  const shellBlocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => ({ commands: shellCommands(match[1] ?? ''), line: readme.slice(0, match.index).split('\n').length }));

  it('opens with what it is, the install line, the quickstart, then the two commands, all on its first screen', () => {
    expect(lines[0]).toBe('# rx-informer');
    expect(lines[2]).toMatch(/^Kubernetes informers as RxJS streams/);
    const [install, commands] = shellBlocks;
    expect(install?.commands).toEqual(['npm install rx-informer rxjs @kubernetes/client-node']);
    expect(commands?.commands).toEqual(['npm start', 'npm test']);
    const quickstart = quickstartBlock(readme);
    expect(install!.line).toBeLessThan(quickstart.line);
    expect(quickstart.line).toBeLessThan(commands!.line);
    expect(commands!.line + 4).toBeLessThanOrEqual(FIRST_SCREEN_LINES);
    expect(lineOf('## ')).toBeGreaterThan(quickstart.line);
  });

  it('keeps the quickstart short: an informer, its sync, an index read and a reaction to changes', () => {
    const code = quickstartBlock(readme).code;
    expect(code.trimEnd().split('\n').length).toBeLessThanOrEqual(25);
    expect(code).toMatch(/waitForSync\(/);
    expect(code).toMatch(/\.byIndex\(/);
    expect(code).toMatch(/changes\$|handle\(/);
  });

  it('says that npm start runs until Ctrl-C, and how to bound it', () => {
    const start = readme.split('\n').find((line) => line.startsWith('npm start'));
    expect(start).toMatch(/Ctrl-C/);
    expect(start).toMatch(/--duration/);
  });

  it('gives the test command CI runs first', () => {
    const ci = readFileSync(path.join(REPO, '.ci', 'run'), 'utf8');
    const firstCommand = ci.split('\n').map((line) => line.trim()).find((line) => /^npm /.test(line));
    expect(firstCommand).toBe(shellBlocks[1]?.commands[1]);
  });

  it('keeps each cell of the problems table to one or two sentences, with a link for the details', () => {
    const section = readme.slice(readme.indexOf('## The informer problems it fixes') + 3);
    const table = section.slice(0, section.indexOf('\n## '));
    const rows = table.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| what users'));
    expect(rows.length).toBeGreaterThanOrEqual(8);
    const tooLong = rows.flatMap((row) => {
      const answer = row.split(' | ')[1] ?? '';
      // Sentences end at a full stop before a space and a capital; code spans and parentheses are not read.
      const sentences = answer.replace(/`[^`]*`/g, 'code').replace(/\([^)]*\)/g, '').split(/[.!?]\s+(?=[A-Z])/).length;
      const words = answer.split(/\s+/).length;
      return sentences <= 2 && words <= 60 ? [] : [`${row.slice(2, 50)}: ${sentences} sentences, ${words} words`];
    });
    expect(tooLong).toEqual([]);
    const withoutLink = rows.filter((row) => !/\]\([^)]+\)/.test(row));
    expect(withoutLink).toEqual([]);
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

    it('syncs, reads the app index, sees five updates and exits by itself with code 0', async () => {
      const webPods = server.store.list(pods).filter((pod) => pod.metadata.labels?.['app'] === 'web').length;
      churn.start();
      // Bound: ts-node starts in seconds on an idle machine; the quickstart itself needs < 1 s.
      const result = await runTypeScript(file, { KUBECONFIG: kubeconfig }, 150_000);

      expect({ ...result, stdout: result.stdout.split('\n') }).toEqual({ code: 0, signal: null, stderr: '', stdout: expect.arrayContaining([expect.stringMatching(/^updated: /)]) });
      const lines = result.stdout.trim().split('\n');
      expect(lines[0]).toBe(`synced: ${QUICKSTART_PODS} pods, ${webPods} with app=web`);
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
