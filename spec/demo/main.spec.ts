import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configMaps, type ConfigMap } from '../../lib';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { describeEachServerVersion } from '../support/serverVersions';

interface RunResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** Runs the demo the way `npm start` does (ts-node, transpile only), with the Node running jest. */
function runDemo(args: string[], onOutput?: (child: ChildProcess, stdout: string) => void, timeoutMs = 60_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const startedAt = Date.now();
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'demo/main.ts', ...args], {
      cwd: join(__dirname, '..', '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, KUBECONFIG: '/nonexistent/kubeconfig' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      onOutput?.(child, stdout);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - startedAt });
    });
  });
}

const summaries = (stdout: string): string[] => stdout.split('\n').filter((line) => /^\[\s*[\d.]+m?s\] \S+ objects=/.test(line));

describe('npm start (the demo) on the embedded loopback cluster', () => {
  it('lists with a synced line, prints counts by phase and events/s each refresh, and exits 0 after --duration', async () => {
    const result = await runDemo(['--pods', '200', '--namespaces', '4', '--churn', '40', '--duration', '3', '--refresh', '250', '--no-tty']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^starting the loopback cluster with 200 pods\.\.\.\nwatching pods on loopback http:\/\/127\.0\.0\.1:\d+ \(200 pods, churn 40\/s\)/);
    expect(result.stdout).toMatch(/\nsynced: \d+ pods listed in \d+ms at rv \d+\n/);
    const lines = summaries(result.stdout);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    const last = lines[lines.length - 1] as string;
    // 200 pods give or take the 1:8:1 churn, in the 4 namespaces, split by phase.
    expect(last).toMatch(/ pods objects=\d+ namespaces=4 (Pending=\d+ )?Running=\d+.* \| events\/s=[\d.]+ \| watching rv=\d+ \| last=(add|update|delete) ns-\d\/\S+ /);
    expect(Math.abs(Number(/objects=(\d+)/.exec(last)?.[1]) - 200)).toBeLessThan(30);
    expect(Number(/events\/s=([\d.]+)/.exec(last)?.[1])).toBeGreaterThan(0);
    expect(result.stdout).toMatch(/\nstopped \(duration reached\) after 3\.\ds: \d+ added, \d+ updated, \d+ deleted since sync\n$/);
    expect(result.stdout).not.toContain('\u001b[');
  }, 90_000);

  it('stops cleanly with exit code 0 on SIGINT, long before --duration', async () => {
    let sent = false;
    const result = await runDemo(['--pods', '50', '--churn', '20', '--duration', '120', '--no-tty'], (child, stdout) => {
      if (sent || !stdout.includes('synced:')) return;
      sent = true;
      child.kill('SIGINT');
    });
    expect(sent).toBe(true);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\nstopped \(SIGINT\) after [\d.]+s: /);
    expect(result.ms).toBeLessThan(60_000);
  }, 90_000);

  it('says what is wrong with the arguments and exits 2', async () => {
    const result = await runDemo(['--resource', 'gadgets']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('rx-informer demo: --resource expects one of pods, configmaps');
    expect(result.stderr).toContain('Usage: npm start -- [options]');
    expect(result.stdout).toBe('');
  }, 60_000);
});

describeEachServerVersion('npm start (the demo) against a kubeconfig', (serverVersion) => {
  let server: ApiServer;
  let dir: string;
  let kubeconfig: string;
  beforeAll(async () => {
    server = await startApiServer({ serverVersion });
    for (let i = 0; i < 7; i++) {
      const configMap: ConfigMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: i < 5 ? 'team-a' : 'team-b', name: `settings-${i}`, labels: { tier: i % 2 === 0 ? 'web' : 'db' } } };
      server.store.create(configMaps, configMap);
    }
    dir = mkdtempSync(join(tmpdir(), 'rx-informer-demo-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, server.kubeConfig.exportConfig(), { mode: 0o600 });
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('watches the cluster and context of --kubeconfig/--context with --resource, --namespace and --selector, live', async () => {
    let changed = false;
    const args = ['--kubeconfig', kubeconfig, '--context', 'loopback', '--resource', 'configmaps', '--namespace', 'team-a', '--selector', 'tier=web'];
    const result = await runDemo([...args, '--duration', '30', '--refresh', '100', '--no-tty'], (child, stdout) => {
      if (!changed && stdout.includes('synced:')) {
        changed = true;
        server.store.create(configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'team-b', name: 'elsewhere', labels: { tier: 'web' } } });
        server.store.create(configMaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'team-a', name: 'late', labels: { tier: 'web' } } });
      }
      if (/last=add team-a\/late /.test(stdout)) child.kill('SIGINT');
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`watching configmaps@team-a?tier=web on context loopback (${server.url})`);
    // settings-0, -2 and -4 are in team-a with tier=web; then 'late' joins them.
    expect(result.stdout).toMatch(/\nsynced: 3 configmaps listed in \d+ms/);
    expect(result.stdout).toMatch(/ objects=4 namespaces=1 \| events\/s=[\d.]+ \| watching rv=\d+ \| last=add team-a\/late rv \d+\n/);
    expect(result.stdout).toMatch(/stopped \(SIGINT\) after [\d.]+s: 1 added, 0 updated, 0 deleted since sync/);
    const watch = server.requests.entries.find((request) => request.verb === 'watch' && request.resource === 'configmaps');
    expect(watch).toMatchObject({ namespace: 'team-a', query: expect.objectContaining({ labelSelector: 'tier=web' }) });
  }, 90_000);
});
