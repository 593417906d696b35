import { ProtocolError, type InformerError } from '../../lib/base/errors';
import { checkBadWatchInput } from './catalogue';

const isMalformedJson = (error: InformerError): error is ProtocolError => error instanceof ProtocolError && error.problem === 'malformed-json';

describe('bad input: a malformed JSON line on the watch', () => {
  checkBadWatchInput(
    (watch) => watch.line('{"type":"MODIFIED","object":{"metadata":{"name":"a"'),
    isMalformedJson,
    (error) => {
      expect(error.message).toMatch(/not JSON/);
      expect(error.excerpt).toContain('"type":"MODIFIED"');
    },
  );
});

describe('bad input: a JSON line that is not an object', () => {
  checkBadWatchInput((watch) => watch.line('"just a string"'), isMalformedJson, (error) => expect(error.message).toMatch(/not a JSON object/));
});
