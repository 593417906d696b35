import { ProtocolError, type InformerError } from '../../lib/base/errors';
import { checkBadListAnswer, checkBadWatchInput } from './catalogue';
import { sendRaw } from './rawApiServer';

const LOGIN_PAGE = '<!DOCTYPE html><html><head><title>Sign in</title></head><body><form action="/login">Proxy login</form></body></html>';
const isNonJsonBody = (error: InformerError): error is ProtocolError => error instanceof ProtocolError && error.problem === 'non-json-body';

describe('bad input: HTTP 200 with an HTML body (text/html) on a list', () => {
  checkBadListAnswer(
    (response) => sendRaw(response, 200, 'text/html; charset=utf-8', LOGIN_PAGE),
    isNonJsonBody,
    (error) => {
      expect(error.message).toMatch(/text\/html/);
      expect(error.excerpt).toContain('<title>Sign in</title>');
    },
  );
});

describe('bad input: HTTP 200 with an HTML body labelled application/json on a list', () => {
  checkBadListAnswer((response) => sendRaw(response, 200, 'application/json', LOGIN_PAGE), isNonJsonBody, (error) => expect(error.message).toMatch(/not JSON/));
});

describe('bad input: an HTML page in the middle of a JSON watch', () => {
  checkBadWatchInput(
    (watch) => watch.line(LOGIN_PAGE),
    (error: InformerError): error is ProtocolError => error instanceof ProtocolError && error.problem === 'malformed-json',
    (error) => expect(error.excerpt).toContain('<!DOCTYPE html>'),
  );
});
