import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CliArgsError, parseCliArgs, usage, type CliOptions } from '../../apiserver/src/cliArgs';
import { NEWEST_SERVER_VERSION, SERVER_VERSIONS } from '../../apiserver/src/serverVersion';

function options(argv: string[]): CliOptions {
  const command = parseCliArgs(argv);
  if (command.kind !== 'run') throw new Error('expected a run command');
  return command.options;
}

describe('parseCliArgs', () => {
  it('fills every default when no flag is given', () => {
    expect(options([])).toEqual({
      port: 0,
      host: '127.0.0.1',
      tls: false,
      token: undefined,
      pods: 100,
      namespaces: 10,
      churn: 0,
      seed: 1,
      managedFields: true,
      kubeconfigOut: undefined,
      watch: false,
      durationSeconds: undefined,
      serverVersion: NEWEST_SERVER_VERSION,
    });
  });

  it('reads every flag, in both --flag value and --flag=value forms', () => {
    expect(
      options(['--port', '8080', '--host=0.0.0.0', '--tls', '--token', 's3cret', '--pods=200', '--namespaces', '3', '--churn', '20.5', '--seed', '42', '--no-managed-fields', '--kubeconfig-out', '/tmp/kc', '--watch', '--duration=2', '--server-version', '1.30']),
    ).toEqual({
      port: 8080,
      host: '0.0.0.0',
      tls: true,
      token: 's3cret',
      pods: 200,
      namespaces: 3,
      churn: 20.5,
      seed: 42,
      managedFields: false,
      kubeconfigOut: '/tmp/kc',
      watch: true,
      durationSeconds: 2,
      serverVersion: '1.30',
    });
  });

  it('returns the help command for --help whatever else is given', () => {
    expect(parseCliArgs(['--pods', '5', '--help'])).toEqual({ kind: 'help' });
    expect(usage).toContain('--kubeconfig-out FILE');
  });

  it.each([
    [['--bogus'], 'unknown option --bogus (see --help)'],
    [['pods'], 'unexpected argument "pods" (see --help)'],
    [['--pods'], '--pods expects a value'],
    [['--pods', '--watch'], '--pods expects a value'],
    [['--pods', 'many'], '--pods expects an integer >= 0, got "many"'],
    [['--pods', '1.5'], '--pods expects an integer >= 0, got "1.5"'],
    [['--port', '70000'], '--port expects an integer from 0 to 65535, got "70000"'],
    [['--namespaces', '0'], '--namespaces expects an integer >= 1, got "0"'],
    [['--churn', '-1'], '--churn expects a number >= 0, got "-1"'],
    [['--duration='], '--duration expects a number >= 0, got ""'],
    [['--watch=yes'], '--watch takes no value'],
    [['--token='], '--token expects a non-empty token'],
    [['--server-version', '1.25'], `--server-version expects one of ${SERVER_VERSIONS.join(', ')}, got "1.25"`],
  ])('rejects %j with a clear message', (argv, message) => {
    expect(() => parseCliArgs(argv)).toThrow(new CliArgsError(message));
  });
});

interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the command the way `npm start` does (ts-node, transpile only), with the Node running jest. */
function runCli(args: string[], timeoutMs = 45_000, onOutput?: (child: ChildProcess, stdout: string) => void): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'apiserver/src/cli.ts', ...args], {
      cwd: join(__dirname, '..', '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
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
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('rx-informer-apiserver', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rx-informer-cli-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('serves, churns, prints the URL and a watch summary every second, then exits 0 after --duration', async () => {
    const kubeconfig = join(dir, 'kubeconfig.json');
    const result = await runCli(['--pods', '30', '--namespaces', '3', '--churn', '50', '--watch', '--duration', '2', '--kubeconfig-out', kubeconfig, '--server-version', '1.27']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const url = /listening on (http:\/\/127\.0\.0\.1:(\d+)) \(Kubernetes 1\.27\)/.exec(result.stdout);
    expect(url?.[2]).not.toBe('0');
    expect(url?.[2]).toMatch(/^[1-9]\d*$/); // a port was printed at all, and not 0
    const summaries = result.stdout.split('\n').filter((line) => line.startsWith('watch: '));
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    // By the last summary the watch holds the 30 initial pods, give or take the 1:8:1 churn.
    const last = summaries[summaries.length - 1] as string;
    expect(last).toMatch(/^watch: objects=\d+ events\/s=\d+ last=(ADDED|MODIFIED|DELETED) ns-\d\/\S+ rv=\d+$/);
    expect(Number(/events\/s=(\d+)/.exec(last)?.[1])).toBeGreaterThan(10);
    const objects = Number(/objects=(\d+)/.exec(last)?.[1]);
    expect(objects).toBeGreaterThan(20);
    expect(objects).toBeLessThan(45);
    expect(result.stdout).toMatch(/stopped \(duration reached\): \d+ creates, \d+ updates, \d+ deletes/);
    const config = JSON.parse(readFileSync(kubeconfig, 'utf8')) as { clusters: { cluster: { server: string } }[] };
    expect(config.clusters[0]?.cluster.server).toBe(url?.[1]);
  }, 60_000);

  it('closes the server and exits 0 on SIGTERM and on SIGINT', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      let sent = false;
      const result = await runCli(['--pods', '3', '--churn', '10'], 45_000, (child, stdout) => {
        if (sent || !stdout.includes('listening on')) return;
        sent = true;
        child.kill(signal);
      });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`stopped (${signal})`);
    }
  }, 120_000);

  it('prints the usage on --help and exits 0', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(usage);
  }, 60_000);

  it('says what is wrong with the arguments and exits 2', async () => {
    const result = await runCli(['--pods', 'lots']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('rx-informer-apiserver: --pods expects an integer >= 0, got "lots"');
    expect(result.stdout).toBe('');
  }, 60_000);
});
