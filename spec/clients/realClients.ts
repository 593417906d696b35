import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { startApiServer, type ApiServer, type ApiServerOptions } from '../../apiserver/src/server';
import { eventually } from '../support/eventually';

/**
 * What the real-clients suites share: finding a client program on PATH, and a loopback API server
 * with a kubeconfig file for it in a temporary directory.
 */

/** Every executable called `command` on PATH, in PATH order, each real file once. */
export function allOnPath(command: string): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      const real = realpathSync(candidate);
      if (seen.has(real)) continue;
      seen.add(real);
      found.push(candidate);
    } catch {
      // not in this directory
    }
  }
  return found;
}

/** The first executable called `command` on PATH. */
export function onPath(command: string): string | undefined {
  return allOnPath(command)[0];
}

/** A loopback API server with its kubeconfig written to a file, in a temporary directory. */
export interface Cluster {
  readonly server: ApiServer;
  readonly dir: string;
  readonly kubeconfig: string;
}

export async function startCluster(options: ApiServerOptions, prefix: string): Promise<Cluster> {
  const server = await startApiServer(options);
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const kubeconfig = join(dir, 'kubeconfig.json');
  writeFileSync(kubeconfig, server.kubeConfig.exportConfig(), { mode: 0o600 });
  return { server, dir, kubeconfig };
}

export async function stopCluster(cluster: Cluster | undefined): Promise<void> {
  if (cluster === undefined) return;
  await cluster.server.close();
  rmSync(cluster.dir, { recursive: true, force: true });
}

/** Where a Python able to `import kubernetes` is, or why there is none. */
export type PythonClient = { readonly python: string; readonly version: string } | { readonly missing: string };

/**
 * The first `python3` on PATH (or `$PYTHON`) whose `kubernetes` module imports. Several may be on
 * PATH (a version manager's shim before the system one that Debian's `python3-kubernetes` serves):
 * each is asked in turn.
 */
export function findPythonClient(): PythonClient {
  const explicit = process.env['PYTHON'];
  const candidates = explicit !== undefined && explicit !== '' ? [explicit] : allOnPath('python3');
  if (candidates.length === 0) return { missing: 'python3 not found on PATH' };
  for (const python of candidates) {
    const probe = spawnSync(python, ['-c', 'import kubernetes; print(kubernetes.__version__)'], { encoding: 'utf8', timeout: 30_000 });
    if (probe.status === 0) return { python, version: probe.stdout.trim() };
  }
  const asked = explicit !== undefined && explicit !== '' ? `$PYTHON (${explicit}) has` : `no python3 on PATH (${candidates.join(', ')}) has`;
  return { missing: `${asked} the kubernetes module (Debian: apt-get install python3-kubernetes; or pip install kubernetes)` };
}

/** Resolves once the server has received a watch request for `resource`; fails after 20 s naming the watches it saw. */
export async function waitForWatch(server: ApiServer, resource: string): Promise<void> {
  const watched = (): (string | undefined)[] => server.requests.entries.filter((entry) => entry.verb === 'watch').map((entry) => entry.resource);
  await eventually(() => expect(watched()).toContain(resource), { timeoutMs: 20_000, intervalMs: 20 });
}

/** How a program run by {@link runProgram} ended, with everything it printed. */
export interface ProgramResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a program to its end (killed after 45 s): `input` goes to its stdin, `onLine` sees each
 * stdout line as it comes.
 */
export function runProgram(
  program: string,
  args: readonly string[],
  options: { readonly env?: NodeJS.ProcessEnv; readonly input?: string; readonly onLine?: (line: string) => void } = {},
): Promise<ProgramResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { env: options.env ?? process.env });
    let stdout = '';
    let stderr = '';
    let pending = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (options.onLine === undefined) return;
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) options.onLine(line);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const killer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input);
  });
}
