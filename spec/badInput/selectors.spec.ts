import { ConfigError } from '../../lib/base/errors';
import { SelectorSyntaxError } from '../../lib/store/selector';
import { quietWatch, runInformer, startRawApiServer, twoPods, type RawApiServer } from './rawApiServer';

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

  it('takes what the API server takes, > and < and in () included', () => {
    expect(() => runInformer(server.kubeConfig, { labelSelector: 'replicas>2,tier in (),!legacy', fieldSelector: 'metadata.name!=x' }).stop()).not.toThrow();
  });
});
