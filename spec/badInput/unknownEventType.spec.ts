import { ProtocolError, type InformerError } from '../../lib/base/errors';
import { checkBadWatchInput } from './catalogue';
import { pod } from './rawApiServer';

const isUnknownType = (error: InformerError): error is ProtocolError => error instanceof ProtocolError && error.problem === 'unknown-event-type';

describe('bad input: a watch event of an unknown type', () => {
  checkBadWatchInput(
    (watch) => watch.event('EXPLODED', pod('a', '9')),
    isUnknownType,
    (error) => expect(error.message).toContain('"EXPLODED"'),
  );
});

describe('bad input: a watch event without a type', () => {
  checkBadWatchInput((watch) => watch.line(JSON.stringify({ object: pod('a', '9') })), isUnknownType, (error) => expect(error.message).toMatch(/unknown watch event type/));
});
