#!/usr/bin/env node
/**
 * `rx-informer`: the package's command. `rx-informer crd` turns CustomResourceDefinitions (from
 * YAML or JSON files, or from a cluster) into TypeScript types and resource descriptors. A thin
 * shell: arguments (`cliArgs.ts`), reading the input, and `crdToTypeScript`, which does the work.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node' with { 'resolution-mode': 'import' };
import { CliArgsError, parseCliArgs, usage, type CliCommand, type OutputOptions } from './cliArgs';
import { crdToTypeScript } from './crdToTypeScript';
import { fetchCustomResourceDefinition } from './fetchCustomResourceDefinition';
import { inContext } from '../sources/transport';

/** Parsed documents of one file or of standard input. */
async function documentsOf(file: string): Promise<unknown[]> {
  const text = file === '-' ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  // JSON needs no YAML parser (and JSON.parse is exact about JSON); a top-level array holds documents.
  if (/^\s*[[{]/.test(text)) {
    const json = parseJson(text);
    if (json !== undefined) return Array.isArray(json) ? (json as unknown[]) : [json];
  }
  // YAML needs a parser, and a well-kept one (`yaml`: YAML 1.2, multi-document streams, the
  // anchors and block scalars CRDs are written with) rather than one of our own. It is loaded here
  // and only here, so that the library proper never loads it: an informer needs no YAML.
  const { parseAllDocuments } = await import('yaml');
  return parseAllDocuments(text).map((document) => {
    if (document.errors.length > 0) throw new Error(`${file === '-' ? 'standard input' : file}: ${document.errors[0]!.message}`);
    return document.toJS() as unknown;
  });
}

/** The value of a JSON text; undefined when it is not JSON (YAML in flow style, say). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The user's kubeconfig, as kubectl would read it, in the context asked for. */
async function kubeConfigOf(command: Extract<CliCommand, { kind: 'cluster' }>): Promise<KubeConfig> {
  // client-node is the user's (a peer dependency), loaded only for --from-cluster.
  const { KubeConfig: KubeConfigClass } = await import('@kubernetes/client-node');
  const kubeConfig = new KubeConfigClass();
  if (command.kubeconfig === undefined) kubeConfig.loadFromDefault();
  else kubeConfig.loadFromFile(command.kubeconfig);
  return command.context === undefined ? kubeConfig : inContext(kubeConfig, command.context);
}

async function documentsFor(command: Exclude<CliCommand, { kind: 'help' }>): Promise<unknown[]> {
  if (command.kind === 'files') return (await Promise.all(command.files.map(documentsOf))).flat();
  const kubeConfig = await kubeConfigOf(command);
  return Promise.all(command.names.map((name) => fetchCustomResourceDefinition(kubeConfig, name)));
}

function write(text: string, output: OutputOptions): void {
  if (output.out === undefined) process.stdout.write(text);
  else writeFileSync(output.out, text);
}

async function main(argv: readonly string[]): Promise<number> {
  let command: CliCommand;
  try {
    command = parseCliArgs(argv);
  } catch (error) {
    if (!(error instanceof CliArgsError)) throw error;
    process.stderr.write(`rx-informer: ${error.message}\n`);
    return 2;
  }
  if (command.kind === 'help') {
    process.stdout.write(usage);
    return 0;
  }
  try {
    write(crdToTypeScript(await documentsFor(command), { importFrom: command.output.importFrom }), command.output);
    return 0;
  } catch (error) {
    process.stderr.write(`rx-informer: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

void main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
