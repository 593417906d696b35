import fc from 'fast-check';
import { HeldText } from '../../lib/sources/heldText';

/** The text cut into pieces at `cuts`. */
function held(text: string, cuts: readonly number[]): HeldText {
  const window = new HeldText();
  let from = 0;
  for (const at of [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b)) {
    window.push(text.slice(from, at));
    from = at;
  }
  window.push(text.slice(from));
  return window;
}

const textAndCuts = fc.tuple(fc.string({ unit: fc.constantFrom('a', 'b', '}', ',', '{'), maxLength: 40 }), fc.array(fc.nat(), { maxLength: 12 }));

describe('HeldText', () => {
  it('finds a pattern as the joined text would, across any number of pieces', () => {
    fc.assert(
      fc.property(textAndCuts, fc.string({ unit: fc.constantFrom('a', 'b', '}', ',', '{'), minLength: 1, maxLength: 5 }), fc.nat(45), ([text, cuts], pattern, from) => {
        expect(held(text, cuts).indexOf(pattern, from)).toBe(text.indexOf(pattern, from));
      }),
    );
  });

  it('gives any stretch of the text, and keeps offsets when pieces before one are dropped', () => {
    fc.assert(
      fc.property(textAndCuts, fc.nat(45), fc.nat(45), ([text, cuts], a, b) => {
        const [from, to] = [Math.min(a, b) % (text.length + 1), Math.max(a, b) % (text.length + 1)].sort((x, y) => x - y) as [number, number];
        const window = held(text, cuts);
        window.dropBefore(from);
        expect(window.text(from, to)).toBe(text.slice(from, to));
        expect(window.end).toBe(text.length);
        expect(window.takeAfter(to).join('')).toBe(text.slice(to));
        expect(window.count).toBe(0);
      }),
    );
  });
});
