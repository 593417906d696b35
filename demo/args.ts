/**
 * Command-line parsing for the demo (`npm start`), kept apart from the command so that it can be
 * tested without starting anything.
 */
import { configMaps, defineResource, deployments, namespaces, parseFieldSelector, parseLabelSelector, pods, SelectorSyntaxError, type KubeObject, type Resource } from '../lib';
import { widgets } from '../apiserver/src';
import { argvParser, CHURN_FLAG_RANGES } from '../apiserver/src/argv';

/** What the demo was asked to do, every default filled in. */
export interface DemoOptions {
  /** What to watch. Default `pods`. */
  readonly resource: Resource<KubeObject>;
  /** Watch one namespace. Default: all namespaces. */
  readonly namespace: string | undefined;
  /** Server-side label selector. */
  readonly labelSelector: string | undefined;
  /** Server-side field selector. */
  readonly fieldSelector: string | undefined;
  /** Watch the cluster of this kubeconfig file instead of the loopback one. */
  readonly kubeconfig: string | undefined;
  /** Use this context of the kubeconfig (the default one: `$KUBECONFIG` or `~/.kube/config`). */
  readonly context: string | undefined;
  /** Loopback cluster only: initial objects. Default 2000. */
  readonly pods: number;
  /** Loopback cluster only: namespaces the objects spread over. Default 10. */
  readonly namespaces: number;
  /** Loopback cluster only: mutations per second, 1:8:1 create:update:delete. Default 20. */
  readonly churn: number;
  /** Loopback cluster only: seed of the churn. Default 1. */
  readonly seed: number;
  /** Items per list page: smaller pages show the progress bar longer. Default 500. */
  readonly pageSize: number;
  /** Stop cleanly after this many seconds. Default: run until Ctrl-C. */
  readonly durationSeconds: number | undefined;
  /** Milliseconds between two refreshes of the view. Default 500. */
  readonly refreshMs: number;
  /** Redraw the screen (true) or print one summary line per refresh (false, `--no-tty`). Default: redraw when stdout is a terminal. */
  readonly redraw: boolean | undefined;
  /** True when the objects come from a real cluster (`--kubeconfig` or `--context`). */
  readonly external: boolean;
}

/** The parse result: run with options, or print the help. */
export type DemoCommand = { readonly kind: 'run'; readonly options: DemoOptions } | { readonly kind: 'help' };

/** The command line is wrong; the message names the flag and what was expected. */
export class DemoArgsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DemoArgsError';
  }
}

/** Resources known by name to `--resource`. */
export const namedResources: Readonly<Record<string, Resource<KubeObject>>> = {
  pods,
  configmaps: configMaps,
  deployments,
  namespaces,
  widgets,
};

/** The `--help` text. */
export const demoUsage = `Usage: npm start -- [options]

A live terminal view of an rx-informer: a progress bar while the initial list loads, then counts
by namespace and phase, events per second, the last events and the informer's health.
Without --kubeconfig or --context it watches an embedded loopback API server with churning pods.

Options:
  --resource R          pods | configmaps | deployments | namespaces | widgets,
                        or group/version/plural (v1/services, apps/v1/statefulsets) (default pods)
  --namespace NS        watch one namespace (default: all)
  --selector S          label selector, e.g. app=web,tier!=db
  --field-selector S    field selector, e.g. status.phase=Running
  --kubeconfig FILE     watch the cluster of this kubeconfig (its current context)
  --context NAME        watch this context (of --kubeconfig, or of $KUBECONFIG / ~/.kube/config)
  --pods N              loopback cluster: initial objects (default 2000)
  --namespaces N        loopback cluster: namespaces they spread over (default 10)
  --churn R             loopback cluster: mutations per second, 1:8:1 create:update:delete (default 20)
  --seed S              loopback cluster: seed of the churn (default 1)
  --page-size N         items per list page (default 500)
  --duration SECONDS    stop cleanly after this many seconds (default: until Ctrl-C)
  --refresh MS          milliseconds between refreshes (default 500)
  --no-tty              print one summary line per refresh instead of redrawing the screen
                        (the default when stdout is not a terminal)
  --replicas N          instead: N sharded informers (processes) splitting the loopback pods over
                        a ring of Leases; one is stopped once they settle (demo/replicas.ts has
                        --stop-after, --duration, --kill and --until-moved)
  --help                show this help
`;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const DEFAULTS: DemoOptions = {
  resource: pods,
  namespace: undefined,
  labelSelector: undefined,
  fieldSelector: undefined,
  kubeconfig: undefined,
  context: undefined,
  pods: 2000,
  namespaces: 10,
  churn: 20,
  seed: 1,
  pageSize: 500,
  durationSeconds: undefined,
  refreshMs: 500,
  redraw: undefined,
  external: false,
};

const VALUE_FLAGS = [
  'resource',
  'namespace',
  'selector',
  'field-selector',
  'kubeconfig',
  'context',
  'pods',
  'namespaces',
  'churn',
  'seed',
  'page-size',
  'duration',
  'refresh',
] as const;
type ValueFlag = (typeof VALUE_FLAGS)[number];
const args = argvParser({ switches: ['no-tty', 'help'], valueFlags: VALUE_FLAGS, error: DemoArgsError });

/** A DNS-1123 label or subdomain, as Kubernetes names namespaces, groups and plurals. */
const DNS_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const VERSION = /^v\d+((alpha|beta)\d+)?$/;

function nonEmpty(flag: string, text: string, what: string): string {
  if (text.trim() === '') throw new DemoArgsError(`--${flag} expects ${what}`);
  return text;
}

/** A selector the library can parse: a typo fails here, not as a 400 from the server later. */
function selector(flag: string, text: string, parse: (text: string) => unknown): string {
  nonEmpty(flag, text, 'a selector');
  try {
    parse(text);
  } catch (error) {
    if (error instanceof SelectorSyntaxError) throw new DemoArgsError(`--${flag}: ${error.message}`);
    throw error;
  }
  return text;
}

/**
 * The resource named by `--resource`: a known name, `version/plural` (core group) or
 * `group/version/plural`. A resource given by path is taken as namespaced: listing it across all
 * namespaces uses the same URL as a cluster-scoped one, so only `--namespace` would tell them apart.
 */
export function resourceFromFlag(text: string): Resource<KubeObject> {
  const named = Object.hasOwn(namedResources, text) ? namedResources[text] : undefined;
  if (named !== undefined) return named;
  const parts = text.split('/');
  const [group, version, plural] = parts.length === 2 ? ['', parts[0] as string, parts[1] as string] : (parts as [string, string, string]);
  if ((parts.length !== 2 && parts.length !== 3) || !VERSION.test(version) || !DNS_NAME.test(plural) || (group !== '' && !DNS_NAME.test(group))) {
    throw new DemoArgsError(
      `--resource expects one of ${Object.keys(namedResources).join(', ')} or group/version/plural (like apps/v1/statefulsets), got "${text}"`,
    );
  }
  const singular = plural.endsWith('s') ? plural.slice(0, -1) : plural;
  return defineResource({ group, version, plural, kind: singular.charAt(0).toUpperCase() + singular.slice(1), namespaced: true });
}

function assign(options: Mutable<DemoOptions>, flag: ValueFlag, value: string): void {
  switch (flag) {
    case 'resource':
      options.resource = resourceFromFlag(value);
      return;
    case 'namespace':
      options.namespace = nonEmpty(flag, value, 'a namespace name');
      return;
    case 'selector':
      options.labelSelector = selector(flag, value, parseLabelSelector);
      return;
    case 'field-selector':
      options.fieldSelector = selector(flag, value, parseFieldSelector);
      return;
    case 'kubeconfig':
      options.kubeconfig = nonEmpty(flag, value, 'a file path');
      options.external = true;
      return;
    case 'context':
      options.context = nonEmpty(flag, value, 'a context name');
      options.external = true;
      return;
    case 'pods':
    case 'namespaces':
    case 'churn':
    case 'seed':
      options[flag] = args.number(flag, value, CHURN_FLAG_RANGES[flag]);
      return;
    case 'page-size':
      options.pageSize = args.number(flag, value, { integer: true, min: 1 });
      return;
    case 'duration':
      options.durationSeconds = args.number(flag, value, { integer: false, min: 0 });
      return;
    case 'refresh':
      options.refreshMs = args.number(flag, value, { integer: true, min: 50 });
      return;
  }
}

/**
 * Parses the arguments after the script name (`process.argv.slice(2)`). Accepts `--flag value`
 * and `--flag=value`. Throws {@link DemoArgsError} on an unknown flag, a missing value or a value
 * out of range.
 *
 * ## Example
 * ```ts
 * const command = parseDemoArgs(['--resource', 'configmaps', '--duration=10']);
 * if (command.kind === 'run') console.log(command.options.resource.plural); // 'configmaps'
 * ```
 */
export function parseDemoArgs(argv: readonly string[]): DemoCommand {
  const options: Mutable<DemoOptions> = { ...DEFAULTS };
  for (const flag of args.flags(argv)) {
    if (flag.kind === 'value') assign(options, flag.flag, flag.value);
    else if (flag.flag === 'help') return { kind: 'help' };
    else options.redraw = false; // --no-tty
  }
  return { kind: 'run', options };
}
