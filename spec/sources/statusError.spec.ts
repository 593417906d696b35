import { ProtocolError, StatusError } from '../../lib/base/errors';
import { errorFromWatchEvent, retryAfterSeconds, statusErrorFromResponse } from '../../lib/sources/statusError';

const status429 = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'too many requests',
  reason: 'TooManyRequests',
  details: { retryAfterSeconds: 3 },
  code: 429,
};

describe('statusErrorFromResponse', () => {
  it('turns a Status body into a StatusError with its code, reason, message and details', () => {
    const error = statusErrorFromResponse(429, {}, Buffer.from(JSON.stringify(status429)));
    expect(error).toBeInstanceOf(StatusError);
    expect(error).toMatchObject({ kind: 'status', code: 429, reason: 'TooManyRequests', retryAfterSeconds: 3 });
    expect(error.status.message).toBe('too many requests');
    expect(error.message).toContain('too many requests');
  });

  it('takes retryAfterSeconds from the Retry-After header over the Status details', () => {
    const error = statusErrorFromResponse(429, { 'retry-after': '7' }, Buffer.from(JSON.stringify(status429)));
    expect(error.retryAfterSeconds).toBe(7);
  });

  it('reads the plain-text 429 of priority-and-fairness with its Retry-After header', () => {
    const error = statusErrorFromResponse(429, { 'retry-after': '1' }, Buffer.from('Too many requests, please try again later.\n'));
    expect(error).toMatchObject({ code: 429, reason: 'TooManyRequests', retryAfterSeconds: 1 });
    expect(error.status.message).toBe('Too many requests, please try again later.');
  });

  it('reads an HTML error page as a StatusError with an excerpt for message', () => {
    const html = `<html><head><title>502 Bad Gateway</title></head><body>${'x'.repeat(1000)}</body></html>`;
    const error = statusErrorFromResponse(502, { 'content-type': 'text/html' }, Buffer.from(html));
    expect(error).toMatchObject({ code: 502, reason: 'Unknown' });
    expect(error.status.message?.startsWith('<html><head><title>502 Bad Gateway')).toBe(true);
    expect(error.status.message?.length).toBeLessThanOrEqual(200);
  });

  it('uses the HTTP code when the Status body lacks one', () => {
    const error = statusErrorFromResponse(403, {}, Buffer.from('{"kind":"Status","apiVersion":"v1","reason":"Forbidden","message":"no"}'));
    expect(error).toMatchObject({ code: 403, reason: 'Forbidden' });
  });

  it('describes an empty body', () => {
    const error = statusErrorFromResponse(500, {}, Buffer.alloc(0));
    expect(error).toMatchObject({ code: 500, reason: 'InternalError' });
    expect(error.status.message).toContain('500');
  });
});

describe('errorFromWatchEvent', () => {
  it('turns an ERROR event Status into a StatusError (410 whatever the reason)', () => {
    const error = errorFromWatchEvent({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'too old resource version: 1 (5)', reason: 'Gone', code: 410 });
    expect(error).toBeInstanceOf(StatusError);
    expect(error).toMatchObject({ code: 410, reason: 'Gone' });
  });

  it('turns an ERROR event whose object is not a Status into a ProtocolError', () => {
    const error = errorFromWatchEvent({ metadata: { name: 'x' } });
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({ problem: 'error-event-not-status' });
  });
});

describe('retryAfterSeconds', () => {
  it('reads delta-seconds', () => expect(retryAfterSeconds('5')).toBe(5));
  it('reads an HTTP date relative to now', () => expect(retryAfterSeconds('Wed, 02 Dec 2026 09:00:10 GMT', Date.parse('2026-12-02T09:00:00Z'))).toBe(10));
  it('ignores an absent or unreadable header', () => {
    expect(retryAfterSeconds(undefined)).toBeUndefined();
    expect(retryAfterSeconds('soon')).toBeUndefined();
    expect(retryAfterSeconds('-1')).toBeUndefined();
  });
});
