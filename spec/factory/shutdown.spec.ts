import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { pods } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src';
import { REPO, scratchFolder, type Scratch } from '../docs/snippets';
import { describeEachServerVersion } from '../support/serverVersions';
import { within } from '../support/eventually';

/** How a child process ended, and what it printed. */
interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a TypeScript file with ts-node; sends it SIGTERM once it prints `synced`, and SIGKILL if it
 * has not exited `boundMs` after that (a process that does not exit by itself). If it has not
 * exited after `runMs` in all, kills it and rejects with what it printed.
 */
function runUntilSigterm(file: string, env: NodeJS.ProcessEnv, boundMs: number, runMs: number): Promise<Exit> {
  const tsNode = require.resolve('ts-node/dist/bin.js');
  const child = spawn(process.execPath, [tsNode, '--transpile-only', '--project', path.join(REPO, 'tsconfig.json'), file], { env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  let killer: NodeJS.Timeout | undefined;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    if (killer === undefined && stdout.includes('synced\n')) {
      child.kill('SIGTERM');
      killer = setTimeout(() => child.kill('SIGKILL'), boundMs);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolve) => {
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return within(exited, runMs, `${path.basename(file)} to print synced and exit`, () => ({ stdout, stderr })).catch((error: unknown) => {
    child.kill('SIGKILL');
    throw error;
  });
}

describeEachServerVersion('a process that calls factory.shutdown()', (serverVersion) => {
  let server: ApiServer;
  let scratch: Scratch;
  beforeEach(async () => {
    server = await startApiServer({ serverVersion });
    server.store.create(pods, { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'default', name: 'a' } });
    scratch = scratchFolder();
  });
  afterEach(async () => {
    scratch.remove();
    await server.close();
  });

  it('exits by itself once shutdown() resolves: handlers, streams, watches and timers all stopped', async () => {
    const kubeconfig = scratch.write('kubeconfig', server.kubeConfig.exportConfig());
    // The bound is what "by itself" means here: far above the few ms the exit takes.
    const exit = await runUntilSigterm(path.join(__dirname, 'fixtures/shutdownOnSigterm.ts'), { KUBECONFIG: kubeconfig }, 10_000, 140_000);
    expect(exit).toEqual({ code: 0, signal: null, stdout: 'synced\nshut down\n', stderr: '' });
  }, 150_000);
});
