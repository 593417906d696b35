import { compareResourceVersions, ordersResourceVersions } from '../../lib/controller/resourceVersions';

/**
 * apimachinery's `pkg/util/resourceversion.CompareResourceVersions` (KEP-5504): a well-formed
 * resourceVersion is non-empty, digits only, without a leading 0, and two of them compare as the
 * integers they spell, of any length; anything else cannot be ordered (undefined here), and the
 * caller falls back to equality.
 */
describe('compareResourceVersions', () => {
  it.each([
    ['1', '2', -1],
    ['10', '9', 1],
    ['42', '42', 0],
    ['123456789012345678901234567890', '123456789012345678901234567891', -1],
    ['99999999999999999999', '100000000000000000000', -1],
  ])('orders %s and %s as integers: %d', (a, b, expected) => {
    expect(compareResourceVersions(a, b)).toBe(expected);
  });

  it.each([
    ['', '1'],
    ['1', ''],
    ['01', '2'],
    ['0', '1'],
    ['1a', '2'],
    ['-1', '2'],
    [' 1', '2'],
    ['1.5', '2'],
    ['abc', 'abd'],
  ])('cannot order %j and %j', (a, b) => {
    expect(compareResourceVersions(a, b)).toBeUndefined();
  });
});

describe('ordersResourceVersions', () => {
  it.each([
    [{ major: '1', minor: '35' }, true],
    [{ major: '1', minor: '36' }, true],
    [{ major: '1', minor: '35+' }, true],
    [{ major: '2', minor: '0' }, true],
    [{ major: '1', minor: '34' }, false],
    [{ major: '1', minor: '28+' }, false],
    [{ major: '', minor: '' }, false],
    [{ major: 'one', minor: '40' }, false],
  ])('says whether %j promises ordered resourceVersions (1.35 and later): %s', (version, expected) => {
    expect(ordersResourceVersions(version)).toBe(expected);
  });
});
