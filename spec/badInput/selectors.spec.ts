import { ConfigError } from '../../lib/base/errors';
import { SelectorSyntaxError } from '../../lib/store/selector';
import { eventually } from '../support/eventually';
import { contents, quietWatch, runInformer, startRawApiServer, twoPods, type RawApiServer, type RunningInformer } from './rawApiServer';

/**
 * A selector that does not parse can never be served: the informer refuses it when it is made,
 * with a ConfigError naming the informer and where the selector goes wrong, instead of retrying
 * it until a sync timeout.
 */
describe('bad input: a selector that does not parse', () => {
  let server: RawApiServer;
  beforeEach(async () => {
    server = await startRawApiServer({ list: twoPods, watch: quietWatch });
  });
  afterEach(async () => {
    await server.close();
  });

  it.each([
    ['labelSelector', 'app in (web', 'invalid-label-selector', `pods?app in (web: invalid labelSelector "app in (web" at 11: expected ',' or ')' in value list, found 'end of selector'`],
    ['labelSelector', 'app=web,', 'invalid-label-selector', `pods?app=web,: invalid labelSelector "app=web," at 8: expected a label key, found 'end of selector'`],
    ['fieldSelector', 'spec.nodeName', 'invalid-field-selector', 'pods?spec.nodeName: invalid fieldSelector "spec.nodeName" at 0: term "spec.nodeName" has no operator (=, ==, !=)'],
  ] as const)('%s %j: informer() throws ConfigError %s at once, and no request is sent', (option, selector, problem, message) => {
    let thrown: unknown;
    try {
      runInformer(server.kubeConfig, { [option]: selector });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect(thrown).toMatchObject({ kind: 'config', problem, message });
    expect((thrown as ConfigError).cause).toBeInstanceOf(SelectorSyntaxError);
    expect(server.requests).toHaveLength(0);
  });

  it('takes what the API server takes, > and < and in () included, and sends it as given on the list and the watch', async () => {
    const labelSelector = 'replicas>2,tier in (),!legacy';
    const fieldSelector = 'metadata.name!=x';
    let running: RunningInformer | undefined;
    expect(() => (running = runInformer(server.kubeConfig, { labelSelector, fieldSelector }))).not.toThrow();
    try {
      const sent = (): { kind: string; labelSelector: string | null; fieldSelector: string | null }[] =>
        server.requests.map((request) => ({ kind: request.kind, labelSelector: request.query.get('labelSelector'), fieldSelector: request.query.get('fieldSelector') }));
      await eventually(() =>
        expect(sent().slice(0, 2)).toEqual([
          { kind: 'list', labelSelector, fieldSelector },
          { kind: 'watch', labelSelector, fieldSelector },
        ]),
      );
      await eventually(() => expect(contents(running!.latest())).toEqual({ 'default/a': '1', 'default/b': '2' }));
    } finally {
      running?.stop();
    }
  });
});
