import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CliArgsError, parseCliArgs, usage } from '../../lib/crd/cliArgs';
import { customResourceDefinitions, type CustomResourceDefinition } from '../../lib/resources/builtins';
import { startApiServer, type ApiServer } from '../../apiserver/src';

/** `rx-informer crd`: its arguments, and the command itself run as a process. */

const REPO = path.join(__dirname, '..', '..');
const fixture = (name: string): string => path.join(__dirname, 'fixtures', `${name}.yaml`);
const generated = (name: string): string => readFileSync(path.join(__dirname, 'generated', `${name}.ts`), 'utf8');

describe('parseCliArgs', () => {
  it('reads files, - and the output options, in both --flag value and --flag=value forms', () => {
    expect(parseCliArgs(['crd', 'a.yaml', '-', '--out', 'types.ts', '--import-from=@acme/rx'])).toEqual({ kind: 'files', files: ['a.yaml', '-'], output: { out: 'types.ts', importFrom: '@acme/rx' } });
    expect(parseCliArgs(['crd', 'a.yaml'])).toEqual({ kind: 'files', files: ['a.yaml'], output: { out: undefined, importFrom: 'rx-informer' } });
  });

  it('reads CRD names, a context and a kubeconfig with --from-cluster', () => {
    expect(parseCliArgs(['crd', '--from-cluster', 'certificates.cert-manager.io', 'issuers.cert-manager.io', '--context', 'staging', '--kubeconfig=/tmp/kc'])).toEqual({
      kind: 'cluster',
      names: ['certificates.cert-manager.io', 'issuers.cert-manager.io'],
      context: 'staging',
      kubeconfig: '/tmp/kc',
      output: { out: undefined, importFrom: 'rx-informer' },
    });
  });

  it('returns help for --help whatever else is given', () => {
    expect(parseCliArgs(['crd', 'x', '--help'])).toEqual({ kind: 'help' });
    expect(parseCliArgs(['--help'])).toEqual({ kind: 'help' });
    expect(usage).toContain('rx-informer crd [options] --from-cluster <name>...');
  });

  it.each([
    [[], 'no command given (see --help)'],
    [['types'], 'unknown command "types": the command is crd (see --help)'],
    [['crd'], 'crd expects files of CustomResourceDefinitions, - for standard input, or --from-cluster <name>'],
    [['crd', '--from-cluster'], '--from-cluster expects the names of CustomResourceDefinitions (<plural>.<group>)'],
    [['crd', 'a.yaml', '--context', 'x'], '--context goes with --from-cluster'],
    [['crd', 'a.yaml', '--out'], '--out expects a value'],
    [['crd', 'a.yaml', '--out', '--import-from'], '--out expects a value'],
    [['crd', 'a.yaml', '--bogus'], 'unknown option --bogus (see --help)'],
  ])('refuses %j with a clear message', (argv, message) => {
    expect(() => parseCliArgs(argv)).toThrow(new CliArgsError(message));
  });
});

interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the command as `npm start` runs the demo (ts-node, transpile only), with the Node running jest. */
function runCli(args: readonly string[], options: { readonly stdin?: string; readonly env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'lib/crd/cli.ts', ...args], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const killer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.stdin ?? '');
  });
}

describe('rx-informer crd', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'rx-informer-crd-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the module for a YAML file, as checked in', async () => {
    const result = await runCli(['crd', fixture('cert-manager-certificates')]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(generated('cert-manager-certificates'));
  }, 60_000);

  it('reads JSON from standard input, and writes to --out with the --import-from module', async () => {
    const [document] = parseAllDocuments(readFileSync(fixture('crossplane-compositions'), 'utf8'));
    const out = path.join(dir, 'compositions.ts');
    // A top-level JSON array holds documents.
    const result = await runCli(['crd', '-', '--out', out, '--import-from', '@acme/rx'], { stdin: JSON.stringify([document!.toJS()]) });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(readFileSync(out, 'utf8')).toBe(generated('crossplane-compositions').replace("from 'rx-informer';", "from '@acme/rx';"));
  }, 60_000);

  it('reads YAML in flow style, which looks like JSON and is not', async () => {
    const flow = path.join(dir, 'flow.yaml');
    writeFileSync(flow, '{ apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: { name: widgets.example.com }, spec: { group: example.com, names: { kind: Widget, plural: widgets }, scope: Namespaced, versions: [{ name: v1, served: true, storage: true }] } }\n');
    const result = await runCli(['crd', flow]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain("export const widgetsV1: Resource<WidgetV1> = defineResource<WidgetV1>({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });");
  }, 60_000);

  it('says what is wrong with a CRD and exits 1, and exits 2 on arguments it does not take', async () => {
    const broken = path.join(dir, 'broken.yaml');
    writeFileSync(broken, 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  scope: Everywhere\n');
    const bad = await runCli(['crd', broken]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('rx-informer: widgets.example.com: spec.names: expected an object, got nothing\n');
    const usageError = await runCli(['crd']);
    expect(usageError.code).toBe(2);
    expect(usageError.stderr).toContain('rx-informer: crd expects files');
  }, 60_000);

  describe('--from-cluster', () => {
    let server: ApiServer;
    let kubeconfig: string;
    beforeAll(async () => {
      server = await startApiServer({ resources: [customResourceDefinitions] });
      const [document] = parseAllDocuments(readFileSync(fixture('istio-gateways'), 'utf8'));
      server.store.create(customResourceDefinitions, document!.toJS() as CustomResourceDefinition);
      // The current context points nowhere: --context must pick the loopback one.
      const config = JSON.parse(server.kubeConfig.exportConfig()) as { clusters: object[]; contexts: object[]; 'current-context': string };
      config.clusters.push({ name: 'nowhere', cluster: { server: 'http://127.0.0.1:1', 'insecure-skip-tls-verify': true } });
      config.contexts.push({ name: 'nowhere', context: { cluster: 'nowhere', user: 'loopback' } });
      config['current-context'] = 'nowhere';
      kubeconfig = path.join(dir, 'kubeconfig.json');
      writeFileSync(kubeconfig, JSON.stringify(config));
    });
    afterAll(() => server.close());

    it('reads the CRDs named from the cluster of the context given, through the kubeconfig given', async () => {
      const result = await runCli(['crd', '--from-cluster', 'gateways.networking.istio.io', '--kubeconfig', kubeconfig, '--context', 'loopback']);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(generated('istio-gateways'));
    }, 60_000);

    it('reads the kubeconfig from $KUBECONFIG, and names the request that failed', async () => {
      const result = await runCli(['crd', '--from-cluster', 'missing.example.com', '--context', 'loopback'], { env: { KUBECONFIG: kubeconfig } });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^rx-informer: 404 NotFound on GET \/apis\/apiextensions\.k8s\.io\/v1\/customresourcedefinitions\/missing\.example\.com/);
    }, 60_000);
  });
});
