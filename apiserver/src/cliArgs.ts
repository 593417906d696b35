/**
 * Command-line parsing for `rx-informer-apiserver`, kept apart from the command so that it can be
 * tested without starting anything.
 */
import { argvParser, CHURN_FLAG_RANGES } from './argv';
import { isServerVersion, NEWEST_SERVER_VERSION, SERVER_VERSIONS, type ServerVersion } from './serverVersion';

/** What the command was asked to do, every default filled in. */
export interface CliOptions {
  /** Port to listen on; 0 picks a free one. Default 0. */
  readonly port: number;
  /** Interface to listen on. Default `127.0.0.1`. */
  readonly host: string;
  /** Serve HTTPS with the fixed test CA. Default false. */
  readonly tls: boolean;
  /** Require `Authorization: Bearer <token>`. Default: no authentication. */
  readonly token: string | undefined;
  /** Initial pods. Default 100. */
  readonly pods: number;
  /** Namespaces the pods spread over. Default 10. */
  readonly namespaces: number;
  /** Mutations per second, split 1:8:1 create:update:delete. Default 0 (a still cluster). */
  readonly churn: number;
  /** Seed of the churn generator. Default 1. */
  readonly seed: number;
  /** Give pods managedFields, most of a pod's JSON. Default true; `--no-managed-fields` leaves them out. */
  readonly managedFields: boolean;
  /** Write a kubeconfig for the server to this file. */
  readonly kubeconfigOut: string | undefined;
  /** Watch pods in process and print a one-line summary every second. Default false. */
  readonly watch: boolean;
  /** Stop cleanly after this many seconds. Default: run until SIGINT/SIGTERM. */
  readonly durationSeconds: number | undefined;
  /** The Kubernetes version to answer like. Default: the newest modelled. */
  readonly serverVersion: ServerVersion;
}

/** The parse result: run with options, or print the help. */
export type CliCommand = { readonly kind: 'run'; readonly options: CliOptions } | { readonly kind: 'help' };

/** The command line is wrong; the message names the flag and what was expected. */
export class CliArgsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliArgsError';
  }
}

/** The `--help` text. */
export const usage = `Usage: rx-informer-apiserver [options]

Runs the rx-informer loopback Kubernetes API server with a churning population of pods.

Options:
  --port N              port to listen on (default 0: a free port; the URL is printed)
  --host H              interface to listen on (default 127.0.0.1)
  --tls                 serve HTTPS with the fixed test CA (written into --kubeconfig-out)
  --token T             require "Authorization: Bearer T" (kubectl sends none over plain http)
  --pods N              initial pods (default 100)
  --namespaces N        namespaces ns-0 ... ns-(N-1) the pods spread over (default 10)
  --churn R             mutations per second, split 1:8:1 create:update:delete (default 0)
  --seed S              seed of the churn generator (default 1)
  --no-managed-fields   smaller pods (~1.5 KB instead of ~4.4 KB of JSON)
  --kubeconfig-out FILE write a kubeconfig pointing at the server (for kubectl and other tools)
  --watch               watch pods in process and print a summary line every second
  --duration SECONDS    stop cleanly after this many seconds (default: until Ctrl-C)
  --server-version V    answer like Kubernetes V, ${SERVER_VERSIONS[0]} to ${NEWEST_SERVER_VERSION} (default ${NEWEST_SERVER_VERSION})
  --help                show this help
`;

const DEFAULTS: CliOptions = {
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
};

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
const VALUE_FLAGS = ['port', 'host', 'token', 'pods', 'namespaces', 'churn', 'seed', 'kubeconfig-out', 'duration', 'server-version'] as const;
type ValueFlag = (typeof VALUE_FLAGS)[number];
const args = argvParser({ switches: ['tls', 'watch', 'help', 'no-managed-fields'], valueFlags: VALUE_FLAGS, error: CliArgsError });

function assign(options: Mutable<CliOptions>, flag: ValueFlag, value: string): void {
  switch (flag) {
    case 'port':
      options.port = args.number(flag, value, { integer: true, min: 0, max: 65535 });
      return;
    case 'host':
      if (value === '') throw new CliArgsError('--host expects a host name or address');
      options.host = value;
      return;
    case 'token':
      if (value === '') throw new CliArgsError('--token expects a non-empty token');
      options.token = value;
      return;
    case 'pods':
    case 'namespaces':
    case 'churn':
    case 'seed':
      options[flag] = args.number(flag, value, CHURN_FLAG_RANGES[flag]);
      return;
    case 'kubeconfig-out':
      if (value === '') throw new CliArgsError('--kubeconfig-out expects a file path');
      options.kubeconfigOut = value;
      return;
    case 'duration':
      options.durationSeconds = args.number(flag, value, { integer: false, min: 0 });
      return;
    case 'server-version':
      if (!isServerVersion(value)) throw new CliArgsError(`--server-version expects one of ${SERVER_VERSIONS.join(', ')}, got "${value}"`);
      options.serverVersion = value;
      return;
  }
}

/**
 * Parses the arguments after the script name (`process.argv.slice(2)`). Accepts `--flag value`
 * and `--flag=value`. Throws {@link CliArgsError} on an unknown flag, a missing value or a value
 * out of range.
 *
 * ## Example
 * ```ts
 * const command = parseCliArgs(['--pods', '200', '--churn=20', '--watch']);
 * if (command.kind === 'run') console.log(command.options.pods); // 200
 * ```
 */
export function parseCliArgs(argv: readonly string[]): CliCommand {
  const options: Mutable<CliOptions> = { ...DEFAULTS };
  for (const flag of args.flags(argv)) {
    if (flag.kind === 'value') assign(options, flag.flag, flag.value);
    else if (flag.flag === 'help') return { kind: 'help' };
    else if (flag.flag === 'tls') options.tls = true;
    else if (flag.flag === 'watch') options.watch = true;
    else options.managedFields = false; // --no-managed-fields
  }
  return { kind: 'run', options };
}
