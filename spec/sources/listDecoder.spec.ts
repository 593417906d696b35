import { StringDecoder } from 'node:string_decoder';
import fc from 'fast-check';
import { ProtocolError } from '../../lib/base/errors';
import { ListDecoder } from '../../lib/sources/listDecoder';

interface Decoded {
  /** What JSON.parse gives for the body, the batches rejoined into `items`. */
  readonly value: unknown;
  readonly batches: unknown[][];
  readonly head: Record<string, unknown> | undefined;
}

/** Decodes `bytes` cut at `cuts` (byte offsets, any order), through a UTF-8 decoder as a socket's chunks are. */
function decode(bytes: Buffer, cuts: readonly number[], batchChars: number, maxChars = 1 << 28): Decoded {
  const batches: unknown[][] = [];
  let head: Record<string, unknown> | undefined;
  const decoder = new ListDecoder({ path: '/api/v1/pods', batchChars, maxChars, onItems: (items) => batches.push(items), onItemsStart: (members) => (head = members) });
  const utf8 = new StringDecoder('utf8');
  let from = 0;
  for (const at of [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b)) {
    decoder.push(utf8.write(bytes.subarray(from, at)));
    from = at;
  }
  decoder.push(utf8.write(bytes.subarray(from)));
  decoder.push(utf8.end());
  const end = decoder.end();
  if (head === undefined) return { value: end, batches, head };
  const list = end as Record<string, unknown>;
  return { value: { ...list, items: [...batches.flat(), ...(list['items'] as unknown[])] }, batches, head };
}

function decodeText(text: string, batchChars: number, cuts: readonly number[] = []): Decoded {
  return decode(Buffer.from(text), cuts, batchChars);
}

function failure(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

// Strings that look like structure, escapes, multi-byte characters (2, 3 and 4 UTF-8 bytes).
const trickyString = fc.oneof(
  fc.constantFrom('}', ']', '},{"apiVersion":', '},{"metadata":', '}, {"a":', '\\', '"', '\\"', '"]}', 'é', '☸', '😀', '\u2028', ''),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
);
const { value: jsonValue } = fc.letrec<{ value: unknown; array: unknown[]; object: Record<string, unknown> }>((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, trickyString, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(trickyString, tie('value'), { maxKeys: 4 }),
}));
const firstKey = fc.constantFrom('apiVersion', 'metadata', 'a');
/** An item whose nested objects start with the item's own first key, so boundaries repeat inside it. */
const item = fc.tuple(firstKey, jsonValue, fc.dictionary(trickyString, jsonValue, { maxKeys: 3 }), fc.array(jsonValue, { maxLength: 3 })).map(([key, first, rest, nested]) => ({
  [key]: first,
  ...rest,
  nested: nested.map((value) => ({ [key]: value })),
}));
const listBody = fc
  .record({
    items: fc.oneof({ weight: 8, arbitrary: fc.array(fc.oneof({ weight: 9, arbitrary: item }, { weight: 1, arbitrary: jsonValue }), { maxLength: 12 }) }, { weight: 1, arbitrary: fc.constant(null) }),
    metadata: fc.record({ resourceVersion: fc.string({ maxLength: 5 }), continue: fc.option(trickyString, { nil: undefined }) }),
    extra: fc.dictionary(trickyString.filter((key) => key !== 'items'), jsonValue, { maxKeys: 2 }),
    itemsAt: fc.constantFrom('last', 'first', 'middle'),
    indent: fc.constantFrom<string | number | undefined>(undefined, undefined, 0, 1, 2, '\t'),
  })
  .map(({ items, metadata, extra, itemsAt, indent }) => {
    const head = { kind: 'PodList', apiVersion: 'v1', ...extra };
    const list =
      itemsAt === 'first' ? { items, ...head, metadata } : itemsAt === 'middle' ? { ...head, items, metadata } : { ...head, metadata, items };
    return JSON.stringify(list, null, indent);
  });
const cuts = fc.array(fc.nat(), { maxLength: 6 });
const batchChars = fc.oneof(fc.integer({ min: 1, max: 300 }), fc.constant(1 << 20));

describe('ListDecoder', () => {
  it('hands over the items in batches as the text arrives, each at least batchChars long, the last kept for end', () => {
    const items = Array.from({ length: 10 }, (_, i) => ({ metadata: { name: `pod-${i}`, namespace: 'default' }, spec: { nodeName: 'n' } }));
    const body = JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items });
    const itemChars = JSON.stringify(items[0]).length;
    const batches: unknown[][] = [];
    const decoder = new ListDecoder({ path: '/api/v1/pods', batchChars: 2 * itemChars, maxChars: 1 << 20, onItems: (batch) => batches.push(batch) });
    const half = body.indexOf('pod-6');
    decoder.push(body.slice(0, half));
    expect(batches.flat()).toEqual(items.slice(0, 6)); // pod-6 has begun: pod-5 is known to have ended
    decoder.push(body.slice(half));
    const list = decoder.end() as { metadata: unknown; items: unknown[] };
    expect(batches.map((batch) => batch.length)).toEqual([2, 2, 2, 2]);
    expect(list).toEqual({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: items.slice(8) });
  });

  it('gives the members written before the items when the items array opens', () => {
    const heads: unknown[] = [];
    const decoder = new ListDecoder({ path: '/api/v1/pods', batchChars: 1, maxChars: 1 << 20, onItems: () => undefined, onItemsStart: (head) => heads.push(head) });
    decoder.push('{"kind":"PodList","metadata":{"resourceVersion":"3","continue":"t"},"items":[');
    expect(heads).toEqual([{ kind: 'PodList', metadata: { resourceVersion: '3', continue: 't' } }]);
  });

  it('decodes a body many times longer than it may hold, holding no more than a batch and a piece', () => {
    const item = JSON.stringify({ metadata: { name: 'x', annotations: { note: 'é☸'.repeat(200) } } });
    const count = 5000; // ~2.4 MB against a limit of 64 KB
    const bytes = Buffer.from(`{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[${Array.from({ length: count }, () => item).join(',')}]}`);
    const pieces = Array.from({ length: Math.ceil(bytes.length / 16_384) }, (_, i) => i * 16_384);
    const { value } = decode(bytes, pieces, 8 * 1024, 64 * 1024);
    expect((value as { items: unknown[] }).items).toHaveLength(count);
  });

  it('decodes exactly what JSON.parse decodes, whatever the chunks, the batch size, the layout and the strings', () => {
    fc.assert(
      fc.property(listBody, cuts, batchChars, (body, at, batch) => {
        expect(decodeText(body, batch, at).value).toEqual(JSON.parse(body));
      }),
      { numRuns: 400 },
    );
  });

  it('decodes a body cut at every byte, multi-byte characters included', () => {
    const body = JSON.stringify(
      { kind: 'PodList', metadata: { resourceVersion: '1' }, items: [{ a: 'é☸😀', b: [']', '}', { a: '},{"a":' }] }, { a: '\\"' }, { a: 1, n: [[], {}] }] },
      null,
      undefined,
    );
    const bytes = Buffer.from(body);
    for (let cut = 0; cut <= bytes.length; cut++) {
      for (const batch of [1, 20, 1000]) expect(decode(bytes, [cut], batch).value).toEqual(JSON.parse(body));
    }
  });

  it('fails where JSON.parse fails, with ProtocolError non-json-body, and agrees where it does not', () => {
    const mutation = fc.tuple(fc.nat(), fc.constantFrom('truncate', 'delete', ...'{}[],:"\\ x0'.split('')));
    fc.assert(
      fc.property(listBody, mutation, cuts, batchChars, (body, [position, change], at, batch) => {
        const k = position % (body.length + 1);
        const edited = change === 'truncate' ? body.slice(0, k) : change === 'delete' ? body.slice(0, k) + body.slice(k + 1) : body.slice(0, k) + change + body.slice(k);
        // As it survives UTF-8 (an edit may split a surrogate pair).
        const mutated = Buffer.from(edited).toString('utf8');
        let expected: unknown;
        try {
          expected = JSON.parse(mutated);
        } catch {
          const error = failure(() => decodeText(mutated, batch, at));
          expect(error).toBeInstanceOf(ProtocolError);
          expect((error as ProtocolError).problem).toBe('non-json-body');
          return;
        }
        expect(decodeText(mutated, batch, at).value).toEqual(expected);
      }),
      { numRuns: 600 },
    );
  });

  it.each([
    ['a truncated body', '{"kind":"PodList","items":[{"metadata":{"name":"a"}},{"meta', 'ends before its JSON does'],
    ['items without a comma between them', '{"items":[{"a":1} {"a":2}]}', 'unexpected'],
    ['a trailing comma', '{"items":[{"a":1},]}', 'not JSON'],
    ['text after the list', '{"items":[]} x', 'unexpected'],
    ['a broken item', '{"items":[{"a":1},{"a":tru}]}', 'not JSON'],
  ])('fails with non-json-body for %s', (_name, body, message) => {
    for (const batch of [1, 1000]) {
      const error = failure(() => decodeText(body, batch)) as ProtocolError;
      expect(error).toBeInstanceOf(ProtocolError);
      expect(error.problem).toBe('non-json-body');
      expect(error.message).toContain(message);
    }
  });

  it('refuses a second items array, having handed over the first (JSON.parse would keep the second)', () => {
    const error = failure(() => decodeText('{"items":[{"a":1}],"items":[{"a":2}]}', 1)) as ProtocolError;
    expect(error.problem).toBe('not-a-list');
  });

  it('keeps JSON.parse’s last-key-wins for an earlier items member that is not an array', () => {
    expect(decodeText('{"items":null,"items":[{"a":1},{"a":2}]}', 1).value).toEqual({ items: [{ a: 1 }, { a: 2 }] });
  });

  it('returns a body that is not an object as JSON.parse does', () => {
    expect(decodeText(' [1,2] ', 1).value).toEqual([1, 2]);
    expect(failure(() => decodeText('<html>', 1))).toBeInstanceOf(ProtocolError);
  });

  it('fails with body-too-large for one item longer than maxChars', () => {
    const body = `{"items":[{"a":"${'x'.repeat(5000)}"}]}`;
    const error = failure(() => decode(Buffer.from(body), [100, 200, 3000], 10, 1000)) as ProtocolError;
    expect(error.problem).toBe('body-too-large');
  });
});
