import { isQualifiedName, microTime, truncateNote } from '../../lib/writes/eventObjects';

/** The API server's checks on an Event's fields (`pkg/apis/core/validation/events.go`) and its time formats. */

describe('isQualifiedName (validation.IsQualifiedName, for reportingController)', () => {
  it.each(['kubelet', 'example.com/widget-controller', 'a.b-c.io/Name_1.x', 'x'])('accepts %s', (name) => expect(isQualifiedName(name)).toBe(true));
  it.each(['', '/name', 'Example.com/name', 'example.com/', 'a b', `example.com/${'n'.repeat(64)}`, '-start', 'end-', 'a/b/c'])('refuses %j', (name) =>
    expect(isQualifiedName(name)).toBe(false),
  );
});

describe('truncateNote (NoteLengthLimit counts bytes)', () => {
  it('keeps a note of 1024 bytes, and cuts a longer one to at most that with " ..."', () => {
    expect(truncateNote('a'.repeat(1024))).toBe('a'.repeat(1024));
    const cut = truncateNote('a'.repeat(1025));
    expect(cut).toBe(`${'a'.repeat(1020)} ...`);
    expect(Buffer.byteLength(truncateNote('€'.repeat(400)), 'utf8')).toBeLessThanOrEqual(1024);
  });
});

describe('microTime (metav1.MicroTime)', () => {
  it('writes six fractional digits in UTC', () => expect(microTime(Date.UTC(2024, 4, 1, 10, 0, 0, 250))).toBe('2024-05-01T10:00:00.250000Z'));
});
