import { ProtocolError, type InformerError } from '../../lib/base/errors';
import { checkBadListAnswer } from './catalogue';
import { pod, sendRaw } from './rawApiServer';

const isNotAList = (error: InformerError): error is ProtocolError => error instanceof ProtocolError && error.problem === 'not-a-list';
const isMissingMetadata = (error: InformerError): error is ProtocolError => error instanceof ProtocolError && error.problem === 'missing-metadata';
const json = (value: unknown) => JSON.stringify(value);

describe('bad input: a list response that is a single object', () => {
  checkBadListAnswer((response) => sendRaw(response, 200, 'application/json', json(pod('x', '3'))), isNotAList, (error) => expect(error.message).toMatch(/Pod, not a list/));
});

describe('bad input: a list response whose items is not an array', () => {
  checkBadListAnswer(
    (response) => sendRaw(response, 200, 'application/json', json({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '3' }, items: { a: 1 } })),
    isNotAList,
    (error) => expect(error.message).toMatch(/no items array/),
  );
});

describe('bad input: a list response that is a JSON array', () => {
  checkBadListAnswer((response) => sendRaw(response, 200, 'application/json', json([pod('x', '3')])), isNotAList, (error) => expect(error.message).toMatch(/items/));
});

describe('bad input: a list response that is a JSON number', () => {
  checkBadListAnswer((response) => sendRaw(response, 200, 'application/json', '42'), isNotAList, (error) => expect(error.message).toMatch(/number, not a list/));
});

describe('bad input: a list item without metadata', () => {
  checkBadListAnswer(
    (response) => sendRaw(response, 200, 'application/json', json({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '3' }, items: [pod('x', '3'), { kind: 'Pod' }] })),
    isMissingMetadata,
    (error) => expect(error.message).toMatch(/without metadata/),
  );
});

describe('bad input: a list item whose metadata has no name', () => {
  checkBadListAnswer(
    (response) => sendRaw(response, 200, 'application/json', json({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '3' }, items: [pod('x', '3'), { metadata: { namespace: 'default' } }] })),
    isMissingMetadata,
    (error) => expect(error.message).toMatch(/name/),
  );
});
