import { ProtocolError, type InformerError } from '../../lib/base/errors';
import { checkBadWatchInput } from './catalogue';
import { pod } from './rawApiServer';

const isNotStatus = (error: InformerError): error is ProtocolError => error instanceof ProtocolError && error.problem === 'error-event-not-status';

describe('bad input: an ERROR watch event whose object is a Pod, not a Status', () => {
  checkBadWatchInput(
    (watch) => watch.event('ERROR', pod('a', '9')),
    isNotStatus,
    (error) => {
      expect(error.message).toMatch(/not a Status/);
      expect(error.excerpt).toContain('"kind":"Pod"');
    },
  );
});

describe('bad input: an ERROR watch event whose object is a string', () => {
  checkBadWatchInput((watch) => watch.event('ERROR', 'something broke'), isNotStatus, (error) => expect(error.excerpt).toContain('something broke'));
});
