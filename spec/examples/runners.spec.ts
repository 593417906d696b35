import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { configMaps, deployments, eventsV1, leases, namespaces, pods, services, type Deployment, type Namespace, type Pod } from '../../lib/resources/builtins';
import { createChurn, NEWEST_SERVER_VERSION, startApiServer, type ApiServer, type ApiServerOptions } from '../../apiserver/src';
import { apps, type App } from '../../examples/appOperator';
import { REPO, runTypeScript, scratchFolder, type Scratch } from '../docs/snippets';
import { Lines } from './lines';
import { createOwnedPods, ownedPod, SYNCED_OWNER_LINES } from './podOwnersFixtures';
import { eventually, within } from '../support/eventually';
import { describeEachServerVersion } from '../support/serverVersions';

/**
 * Each example is also a program (`npx ts-node examples/run/<name>.ts`): it reads the default
 * kubeconfig ($KUBECONFIG here) and runs the example's `main`. Over TLS, as client-node's typed
 * clients, which the controllers write through, refuse a plain-http cluster.
 */

/** How long a program may take to print its first line: ts-node compiles it and the library first, slowly on a busy machine. */
const FIRST_LINE_MS = 150_000;
/** Each launch's own limit: the first line's, and the rest. */
const LAUNCH_SPEC_MS = 180_000;

/** A program started as `npx ts-node examples/run/<name>.ts [args]` starts it, with $KUBECONFIG set. */
interface Program {
  /** Its stdout, line by line. */
  readonly lines: Lines;
  /** Its stderr so far. */
  stderr(): string;
  /** Resolves with its exit code; rejects after `ms` with the lines and stderr seen. */
  exit(description: string, ms?: number): Promise<number | null>;
  /** Ctrl-C. */
  interrupt(): void;
  /** For a `finally`: SIGKILL, harmless once it has exited. */
  kill(): void;
}

function launch(name: string, args: readonly string[], kubeconfig: string): Program {
  const tsNode = require.resolve('ts-node/dist/bin.js');
  const child = spawn(process.execPath, [tsNode, '--transpile-only', '--project', path.join(REPO, 'tsconfig.json'), path.join(REPO, `examples/run/${name}.ts`), ...args], {
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
  return {
    lines,
    stderr: () => stderr,
    // Within the 180 s of a launch after the 150 s the first line may take.
    exit: (description, ms = 25_000) => within(exited, ms, description, () => ({ lines: lines.seen, stderr })),
    interrupt: () => child.kill('SIGINT'),
    kill: () => child.kill('SIGKILL'),
  };
}

/** A TLS loopback server and a kubeconfig file that names it, fresh for each test. */
function serverPerTest(options: ApiServerOptions): { server(): ApiServer; kubeconfig(): string } {
  let server: ApiServer;
  let scratch: Scratch;
  let kubeconfig: string;
  beforeEach(async () => {
    server = await startApiServer({ ...options, tls: true });
    scratch = scratchFolder();
    kubeconfig = scratch.write('kubeconfig', server.kubeConfig.exportConfig());
  });
  afterEach(async () => {
    scratch.remove();
    await server.close();
  });
  return { server: () => server, kubeconfig: () => kubeconfig };
}

describeEachServerVersion('the examples as programs, through $KUBECONFIG', (serverVersion) => {
  const { server, kubeconfig } = serverPerTest({ serverVersion });

  it('podWatcher prints the synced cache and ten changes, then exits with code 0', async () => {
    const churn = createChurn(server().store, { pods: 20, namespaces: 2, updatesPerSecond: 40 });
    churn.populate();
    churn.start();
    try {
      const result = await runTypeScript(path.join(REPO, 'examples/run/podWatcher.ts'), { KUBECONFIG: kubeconfig() }, FIRST_LINE_MS);
      const lines = result.stdout.trim().split('\n');
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
      expect(lines).toContain('health: watching');
      expect(lines.find((line) => line.startsWith('synced: '))).toMatch(/^synced: 20 pods in 2 namespaces at resourceVersion \d+$/);
      expect(lines.filter((line) => /^update ns-[01]\/\S+$/.test(line))).toHaveLength(10);
    } finally {
      churn.stop();
    }
  }, LAUNCH_SPEC_MS);

  it('configMapPerDeployment reconciles until SIGINT, then stops cleanly with code 0', async () => {
    const deployment: Deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { namespace: 'shop', name: 'web' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } } },
    };
    server().store.create(deployments, deployment);
    const program = launch('configMapPerDeployment', ['shop'], kubeconfig());
    try {
      await program.lines.waitFor('created web-info for shop/web', 0, FIRST_LINE_MS);
      expect(server().store.get(configMaps, 'shop', 'web-info')?.data).toEqual({ replicas: '2', image: 'nginx:1.27' });
      program.interrupt();
      expect(await program.exit('the example to exit after SIGINT')).toBe(0);
      expect(program.lines.seen).toEqual(['caches synced', 'created web-info for shop/web', 'stopped']);
      expect(program.stderr()).toBe('');
    } finally {
      program.kill();
    }
  }, LAUNCH_SPEC_MS);
});

/**
 * The other programs, under the newest server version only. What a launch adds to each example's
 * own spec (which runs its `main` under every boundary version) is the program around it: the
 * kubeconfig read from $KUBECONFIG over TLS, the arguments, the output, Ctrl-C and the exit code,
 * none of which depends on the server's version; each launch costs seconds of ts-node compiling.
 */
describe(`the other examples as programs, through $KUBECONFIG: Kubernetes ${NEWEST_SERVER_VERSION}`, () => {
  const { server, kubeconfig } = serverPerTest({ serverVersion: NEWEST_SERVER_VERSION, resources: [apps] });

  const pod = (namespace: string, name: string, status?: Pod['status']): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { namespace, name }, ...(status === undefined ? {} : { status }) });
  const labelled = (current: Pod): Pod => ({ ...current, metadata: { ...current.metadata, labels: { touched: 'yes' } } });

  it('podOwners counts the pods of the namespace it is given per owner, prints five changes, then exits with code 0', async () => {
    createOwnedPods(server().store);
    server().store.create(pods, ownedPod('b', 'elsewhere', 'web-rs'));
    const program = launch('podOwners', ['a'], kubeconfig());
    try {
      await program.lines.waitFor('  ReplicaSet/web-rs: 2', 0, FIRST_LINE_MS); // the count's last line
      server().store.create(pods, ownedPod('a', 'web-3', 'web-rs'));
      server().store.create(pods, pod('b', 'not-counted'));
      server().store.delete(pods, 'a', 'db-1');
      server().store.update(pods, labelled(server().store.get(pods, 'a', 'loner')!));
      server().store.delete(pods, 'a', 'web-1');
      server().store.create(pods, pod('a', 'solo'));
      expect(await program.exit('podOwners to exit after five changes')).toBe(0);
      expect(program.lines.seen).toEqual([
        ...SYNCED_OWNER_LINES,
        'add a/web-3 (ReplicaSet/web-rs)',
        'delete a/db-1 (ReplicaSet/db-rs)',
        'update a/loner ((none))',
        'delete a/web-1 (ReplicaSet/web-rs)',
        'add a/solo ((none))',
      ]);
      expect(program.stderr()).toBe('');
    } finally {
      program.kill();
    }
  }, LAUNCH_SPEC_MS);

  it('customOperator prints the first five pods of its namespace that become Ready, then exits with code 0', async () => {
    const ready = (status: 'True' | 'False'): Pod['status'] => ({ phase: 'Running', conditions: [{ type: 'Ready', status }] });
    server().store.create(pods, pod('ns', 'already', ready('True')));
    for (const name of ['p1', 'p2', 'p3', 'p4']) server().store.create(pods, pod('ns', name, ready('False')));
    const program = launch('customOperator', ['ns'], kubeconfig());
    try {
      await program.lines.waitFor('synced: 5 pods', 0, FIRST_LINE_MS);
      const becomeReady = (name: string): void => {
        const current = server().store.get(pods, 'ns', name)!;
        server().store.update(pods, { ...current, status: ready('True') });
      };
      server().store.create(pods, pod('other', 'elsewhere', ready('True'))); // another namespace
      server().store.update(pods, labelled(server().store.get(pods, 'ns', 'already')!)); // Ready before and after: it did not become so
      for (const name of ['p1', 'p2', 'p3']) becomeReady(name);
      server().store.create(pods, pod('ns', 'born-ready', ready('True')));
      becomeReady('p4');
      server().store.create(pods, pod('ns', 'sixth', ready('True'))); // after the fifth: the program has stopped watching
      expect(await program.exit('customOperator to exit after five pods became Ready')).toBe(0);
      expect(program.lines.seen).toEqual(['synced: 5 pods', 'ready: ns/p1', 'ready: ns/p2', 'ready: ns/p3', 'ready: ns/born-ready', 'ready: ns/p4']);
      expect(program.stderr()).toBe('');
    } finally {
      program.kill();
    }
  }, LAUNCH_SPEC_MS);

  it('metricsEndpoint serves /metrics on the port it is given (0: a free one) until SIGINT, then exits with code 0', async () => {
    server().store.create(pods, pod('default', 'one'));
    server().store.create(pods, pod('default', 'two'));
    const program = launch('metricsEndpoint', ['0'], kubeconfig());
    try {
      const url = (await program.lines.waitFor(/^serving http:\/\/127\.0\.0\.1:\d+\/metrics$/, 0, FIRST_LINE_MS)).slice('serving '.length);
      // Nothing is printed once the list has been counted: scrape until it shows.
      const text = await eventually(
        async () => {
          const scraped = await (await fetch(url)).text();
          expect(scraped).toMatch(/^workqueue_adds_total\{name="pods"\} 2$/m);
          return scraped;
        },
        { timeoutMs: 10_000, intervalMs: 20 },
      );
      expect(text).toMatch(/^reflector_lists_total\{name="pods"\} 1$/m);
      // SIGINT closes the endpoint: the program exits only once its server and watch are released.
      program.interrupt();
      expect(await program.exit('metricsEndpoint to exit after SIGINT')).toBe(0);
      expect(program.lines.seen).toEqual([`serving ${url}`]);
      expect(program.stderr()).toBe('');
    } finally {
      program.kill();
    }
  }, LAUNCH_SPEC_MS);

  it('teamNamespaces leads, reconciles until SIGINT, then hands the Lease back and exits with code 0', async () => {
    const team = (name: string, labels?: Record<string, string>): Namespace => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(labels === undefined ? {} : { labels }) } });
    server().store.create(namespaces, team('shop', { team: 'payments' }));
    server().store.create(namespaces, team('plain'));
    const program = launch('teamNamespaces', ['replica-1'], kubeconfig());
    try {
      await program.lines.waitFor('created team in shop', 0, FIRST_LINE_MS);
      expect(server().store.get(configMaps, 'shop', 'team')?.data).toEqual({ team: 'payments' });
      expect(server().store.get(configMaps, 'plain', 'team')).toBeUndefined();
      expect(server().store.get(leases, 'default', 'team-namespaces')?.spec?.holderIdentity).toBe('replica-1');
      program.interrupt();
      expect(await program.exit('teamNamespaces to exit after SIGINT')).toBe(0);
      expect(program.lines.seen).toEqual(['caches synced', 'leading', 'created team in shop', 'work settled', 'stopped']);
      expect(program.stderr()).toBe('');
      // Released on the way out: another replica takes over at its next try, not a lease duration later.
      expect(server().store.get(leases, 'default', 'team-namespaces')?.spec?.holderIdentity).toBe('');
    } finally {
      program.kill();
    }
  }, LAUNCH_SPEC_MS);

  it('appOperator keeps an App of its namespace ready until SIGINT, then stops cleanly with code 0', async () => {
    const web: App = { apiVersion: 'example.com/v1', kind: 'App', metadata: { namespace: 'shop', name: 'web' }, spec: { port: 8080, config: { mode: 'fast' } } };
    server().store.create(apps, web);
    const program = launch('appOperator', ['shop'], kubeconfig());
    try {
      await program.lines.waitFor('registered shop/web at web.shop.svc:8080', 0, FIRST_LINE_MS);
      expect(server().store.get(configMaps, 'shop', 'web-config')?.data).toEqual({ mode: 'fast' });
      expect(server().store.get(services, 'shop', 'web')?.spec?.ports).toEqual([expect.objectContaining({ port: 8080 })]);
      // SIGINT at once, while the reconcile goes on to the Ready condition and a Registered Event
      // (which print nothing): the run completes only once that reconcile has settled, and the
      // recorder stops only after the run.
      program.interrupt();
      expect(await program.exit('appOperator to exit after SIGINT')).toBe(0);
      expect(program.lines.seen).toEqual(['caches synced', 'created ConfigMap shop/web-config', 'created Service shop/web', 'registered shop/web at web.shop.svc:8080', 'stopped']);
      expect(program.stderr()).toBe('');
      expect(server().store.get(apps, 'shop', 'web')?.status?.conditions).toEqual([expect.objectContaining({ type: 'Ready', status: 'True' })]);
      expect(server().store.list(eventsV1, 'shop').map((event) => event.reason)).toEqual(['Registered']);
    } finally {
      program.kill();
    }
  }, LAUNCH_SPEC_MS);
});
