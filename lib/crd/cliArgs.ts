/** The arguments of the `rx-informer` command, parsed: pure, so the command's shell stays thin. */

/** What the command line asks for. */
export type CliCommand =
  /** `--help`, or `crd --help`: print the usage. */
  | { readonly kind: 'help' }
  /** `crd <file|->...`: CRDs from YAML or JSON files, `-` for standard input. */
  | { readonly kind: 'files'; readonly files: readonly string[]; readonly output: OutputOptions }
  /** `crd --from-cluster <name>...`: CRDs read from the cluster the kubeconfig points at. */
  | { readonly kind: 'cluster'; readonly names: readonly string[]; readonly context: string | undefined; readonly kubeconfig: string | undefined; readonly output: OutputOptions };

/** Where the generated module goes, and what it imports. */
export interface OutputOptions {
  /** A file to write; undefined for standard output. */
  readonly out: string | undefined;
  /** The module the generated code imports rx-informer from. */
  readonly importFrom: string;
}

/** The command line is not one the command takes; the message says why. */
export class CliArgsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliArgsError';
  }
}

/** The text `--help` prints. */
export const usage = `Usage:
  rx-informer crd [options] <file|->...                 types from CRD files (YAML or JSON; - reads stdin)
  rx-informer crd [options] --from-cluster <name>...    types from CRDs in the cluster (name: <plural>.<group>)

Writes one TypeScript module: for every served version of every CustomResourceDefinition, its
object type, the types nested in it, and its resource descriptor (defineResource).

Options:
  --out <file>            write the module to a file instead of standard output
  --import-from <module>  the module the generated code imports from (default: rx-informer)
  --context <name>        with --from-cluster: the kubeconfig context to use (default: the current one)
  --kubeconfig <file>     with --from-cluster: the kubeconfig to read (default: $KUBECONFIG, then ~/.kube/config)
  --help                  print this and exit
`;

const VALUED = new Set(['--out', '--import-from', '--context', '--kubeconfig']);

/**
 * Parses the arguments after the command name (`process.argv.slice(2)`).
 * @throws CliArgsError for anything the command does not take.
 */
export function parseCliArgs(argv: readonly string[]): CliCommand {
  if (argv.includes('--help') || argv.includes('-h')) return { kind: 'help' };
  const [command, ...rest] = argv;
  if (command === undefined) throw new CliArgsError('no command given (see --help)');
  if (command !== 'crd') throw new CliArgsError(`unknown command ${JSON.stringify(command)}: the command is crd (see --help)`);
  const values = new Map<string, string>();
  const positional: string[] = [];
  let fromCluster = false;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--from-cluster') {
      fromCluster = true;
      continue;
    }
    const equals = arg.indexOf('=');
    const flag = arg.startsWith('--') && equals > 0 ? arg.slice(0, equals) : arg;
    if (VALUED.has(flag)) {
      const value = flag === arg ? rest[++i] : arg.slice(equals + 1);
      if (value === undefined || value === '' || (flag === arg && value.startsWith('--'))) throw new CliArgsError(`${flag} expects a value`);
      values.set(flag, value);
      continue;
    }
    if (arg.startsWith('--')) throw new CliArgsError(`unknown option ${flag} (see --help)`);
    positional.push(arg);
  }
  const output: OutputOptions = { out: values.get('--out'), importFrom: values.get('--import-from') ?? 'rx-informer' };
  if (fromCluster) {
    if (positional.length === 0) throw new CliArgsError('--from-cluster expects the names of CustomResourceDefinitions (<plural>.<group>)');
    return { kind: 'cluster', names: positional, context: values.get('--context'), kubeconfig: values.get('--kubeconfig'), output };
  }
  for (const flag of ['--context', '--kubeconfig']) if (values.has(flag)) throw new CliArgsError(`${flag} goes with --from-cluster`);
  if (positional.length === 0) throw new CliArgsError('crd expects files of CustomResourceDefinitions, - for standard input, or --from-cluster <name>');
  return { kind: 'files', files: positional, output };
}
