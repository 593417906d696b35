import { configMaps, pods } from '../../lib';
import { widgets } from '../../apiserver/src';
import { DemoArgsError, demoUsage, parseDemoArgs, resourceFromFlag, type DemoOptions } from '../../demo/args';

function options(argv: string[]): DemoOptions {
  const command = parseDemoArgs(argv);
  if (command.kind !== 'run') throw new Error('expected a run command');
  return command.options;
}

describe('parseDemoArgs', () => {
  it('watches pods on the loopback cluster with every default when no flag is given', () => {
    expect(options([])).toEqual({
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
    });
  });

  it('reads every flag, in both --flag value and --flag=value forms', () => {
    expect(
      options([
        '--resource=configmaps',
        '--namespace',
        'kube-system',
        '--selector',
        'app=web,tier!=db',
        '--field-selector=metadata.name!=x',
        '--kubeconfig',
        '/tmp/kc',
        '--context=prod',
        '--pods',
        '50',
        '--namespaces=3',
        '--churn',
        '7.5',
        '--seed',
        '9',
        '--page-size',
        '100',
        '--duration=2.5',
        '--refresh',
        '250',
        '--no-tty',
      ]),
    ).toEqual({
      resource: configMaps,
      namespace: 'kube-system',
      labelSelector: 'app=web,tier!=db',
      fieldSelector: 'metadata.name!=x',
      kubeconfig: '/tmp/kc',
      context: 'prod',
      pods: 50,
      namespaces: 3,
      churn: 7.5,
      seed: 9,
      pageSize: 100,
      durationSeconds: 2.5,
      refreshMs: 250,
      redraw: false,
      external: true,
    });
  });

  it('switches to a real cluster with --context alone (the default kubeconfig)', () => {
    expect(options(['--context', 'kind-dev'])).toMatchObject({ context: 'kind-dev', kubeconfig: undefined, external: true });
  });

  it('returns the help command for --help whatever else is given', () => {
    expect(parseDemoArgs(['--pods', '5', '--help'])).toEqual({ kind: 'help' });
    for (const flag of ['--resource', '--namespace', '--selector', '--field-selector', '--kubeconfig', '--context', '--duration', '--refresh', '--no-tty']) {
      expect(demoUsage).toContain(flag);
    }
  });

  it.each([
    [['--bogus'], 'unknown option --bogus (see --help)'],
    [['pods'], 'unexpected argument "pods" (see --help)'],
    [['--resource'], '--resource expects a value'],
    [['--duration', '--no-tty'], '--duration expects a value'],
    [['--pods', '1.5'], '--pods expects an integer >= 0, got "1.5"'],
    [['--churn', '-1'], '--churn expects a number >= 0, got "-1"'],
    [['--refresh', '10'], '--refresh expects an integer >= 50, got "10"'],
    [['--page-size', '0'], '--page-size expects an integer >= 1, got "0"'],
    [['--duration='], '--duration expects a number >= 0, got ""'],
    [['--no-tty=yes'], '--no-tty takes no value'],
    [['--namespace='], '--namespace expects a namespace name'],
    [['--kubeconfig', ' '], '--kubeconfig expects a file path'],
    [['--resource', 'gadgets'], '--resource expects one of pods, configmaps, deployments, namespaces, widgets or group/version/plural (like apps/v1/statefulsets), got "gadgets"'],
  ])('rejects %j with a clear message', (argv, message) => {
    expect(() => parseDemoArgs(argv)).toThrow(new DemoArgsError(message));
  });

  it('rejects a label or field selector the library cannot parse, naming the flag', () => {
    expect(() => parseDemoArgs(['--selector', 'app in (web'])).toThrow(/^--selector: invalid selector "app in \(web" at \d+/);
    expect(() => parseDemoArgs(['--field-selector', 'status.phase'])).toThrow(/^--field-selector: invalid selector/);
  });
});

describe('resourceFromFlag', () => {
  it('knows the built-in names, widgets included', () => {
    expect(resourceFromFlag('pods')).toBe(pods);
    expect(resourceFromFlag('widgets')).toBe(widgets);
  });

  it('reads group/version/plural and version/plural (the core group) as namespaced resources', () => {
    expect(resourceFromFlag('apps/v1/statefulsets')).toEqual({ group: 'apps', version: 'v1', plural: 'statefulsets', kind: 'Statefulset', namespaced: true });
    expect(resourceFromFlag('v1/services')).toEqual({ group: '', version: 'v1', plural: 'services', kind: 'Service', namespaced: true });
    expect(resourceFromFlag('example.com/v1beta1/gadgets')).toMatchObject({ group: 'example.com', version: 'v1beta1', plural: 'gadgets' });
  });

  it.each(['apps/statefulsets', 'apps/v1/StatefulSets', 'a/b/c/d', 'apps/v1/', '../v1/pods', 'toString'])('rejects %j', (text) => {
    expect(() => resourceFromFlag(text)).toThrow(DemoArgsError);
  });
});
