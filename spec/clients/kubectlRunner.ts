import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiServerOptions } from '../../apiserver/src/server';
import { onPath, runProgram, startCluster, type Cluster, type ProgramResult } from './realClients';

/**
 * Running the real kubectl against a loopback cluster, and reading what it prints. Every command
 * gets a fresh --cache-dir, so discovery is really asked of the server each time.
 */

const kubectlPath = onPath('kubectl');
if (kubectlPath === undefined) console.warn('kubectl not found on PATH: kubectl suite not run');
/** Without kubectl every test is reported as skipped (never as passed), after the warning above. */
export const describeWithKubectl = kubectlPath === undefined ? describe.skip : describe;

export type Result = ProgramResult;

export const startKubectlCluster = (options: ApiServerOptions): Promise<Cluster> => startCluster(options, 'rx-informer-kubectl-');

function kubectlArgs(cluster: Cluster, args: readonly string[]): string[] {
  return ['--kubeconfig', cluster.kubeconfig, '--cache-dir', mkdtempSync(join(cluster.dir, 'cache-')), ...args];
}

/** Writes `object` as JSON to `name` in the cluster's folder, for `kubectl -f`; its path. */
export function manifestFile(cluster: Cluster, name: string, object: object): string {
  const path = join(cluster.dir, name);
  writeFileSync(path, JSON.stringify(object));
  return path;
}

/** Starts kubectl (for a command that runs until killed, as `get -w`). */
export function spawnKubectl(cluster: Cluster, args: readonly string[]): ChildProcessWithoutNullStreams {
  return spawn(kubectlPath ?? 'kubectl', kubectlArgs(cluster, args), { env: { ...process.env, KUBECONFIG: cluster.kubeconfig } });
}

/** Runs kubectl to its end; `input` is written to its stdin. */
export function kubectl(cluster: Cluster, args: readonly string[], input?: string): Promise<Result> {
  return runProgram(kubectlPath ?? 'kubectl', kubectlArgs(cluster, args), { env: { ...process.env, KUBECONFIG: cluster.kubeconfig }, ...(input === undefined ? {} : { input }) });
}

/** The whitespace-separated words of every row under the header (safe for the NAME and NAMESPACE columns). */
export function rows(output: string): string[][] {
  return output
    .trim()
    .split('\n')
    .slice(1)
    .filter((line) => line.trim() !== '')
    .map((line) => line.trim().split(/\s+/));
}

/** What a `kubectl get` printed: the column names, and each row's cells by column (cells may hold single spaces). */
export interface Printed {
  readonly columns: readonly string[];
  readonly rows: readonly Readonly<Record<string, string>>[];
}

/** Reads kubectl's aligned columns: names are separated by two or more spaces, and cells start where their names do. */
export function printed(output: string): Printed {
  const [header = '', ...lines] = output.split('\n').filter((line) => line.trim() !== '');
  const starts = [...header.matchAll(/\S+(?: \S+)*/g)].map((match) => ({ name: match[0], at: match.index }));
  const table = lines.map((line) =>
    Object.fromEntries(starts.map(({ name, at }, i) => [name, line.slice(at, i + 1 < starts.length ? starts[i + 1]!.at : undefined).trim()])),
  );
  return { columns: starts.map(({ name }) => name), rows: table };
}
