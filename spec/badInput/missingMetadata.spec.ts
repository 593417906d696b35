import { ProtocolError, type InformerError } from '../../lib/base/errors';
import { checkBadWatchInput } from './catalogue';

const isMissingMetadata = (error: InformerError): error is ProtocolError => error instanceof ProtocolError && error.problem === 'missing-metadata';

describe('bad input: a watch object without metadata', () => {
  checkBadWatchInput((watch) => watch.event('ADDED', { kind: 'Pod', apiVersion: 'v1' }), isMissingMetadata, (error) => expect(error.message).toMatch(/without metadata/));
});

describe('bad input: a watch object whose metadata has no name', () => {
  checkBadWatchInput(
    (watch) => watch.event('ADDED', { kind: 'Pod', apiVersion: 'v1', metadata: { namespace: 'default', resourceVersion: '9' } }),
    isMissingMetadata,
    (error) => expect(error.message).toMatch(/name/),
  );
});

describe('bad input: a watch object whose name is not a string', () => {
  checkBadWatchInput(
    (watch) => watch.event('MODIFIED', { kind: 'Pod', apiVersion: 'v1', metadata: { name: 42, namespace: 'default', resourceVersion: '9' } }),
    isMissingMetadata,
    (error) => expect(error.message).toMatch(/name/),
  );
});

describe('bad input: a DELETED event whose metadata is null', () => {
  checkBadWatchInput((watch) => watch.event('DELETED', { kind: 'Pod', metadata: null }), isMissingMetadata, (error) => expect(error.message).toMatch(/without metadata/));
});
