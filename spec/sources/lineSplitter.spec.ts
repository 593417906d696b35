import * as fc from 'fast-check';
import { ProtocolError } from '../../lib/base/errors';
import { LineSplitter } from '../../lib/sources/lineSplitter';

function splitAll(chunks: readonly Buffer[], maxLineBytes?: number): { lines: string[]; splitter: LineSplitter } {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => lines.push(line), maxLineBytes);
  for (const chunk of chunks) splitter.push(chunk);
  return { lines, splitter };
}

describe('LineSplitter', () => {
  it('delivers every line of a chunk that holds many', () => {
    const { lines, splitter } = splitAll([Buffer.from('{"a":1}\n{"b":2}\n{"c":3}\n')]);
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
    expect(splitter.pendingBytes).toBe(0);
  });

  it('joins a line that spans several chunks', () => {
    const { lines } = splitAll([Buffer.from('{"a"'), Buffer.from(':"x'), Buffer.from('yz"}\n{"b":'), Buffer.from('2}\n')]);
    expect(lines).toEqual(['{"a":"xyz"}', '{"b":2}']);
  });

  it('decodes a multi-byte UTF-8 character split across chunks at every byte offset', () => {
    const text = '{"name":"café ☃ 𝄞"}\n';
    const bytes = Buffer.from(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      const { lines } = splitAll([bytes.subarray(0, cut), bytes.subarray(cut)]);
      expect(lines).toEqual([text.slice(0, -1)]);
    }
  });

  it('yields the same lines however the byte stream is cut into chunks', () => {
    const line = fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => s.replace(/[\n\r]/g, ''));
    fc.assert(
      fc.property(fc.array(line.filter((s) => s !== ''), { maxLength: 20 }), fc.array(fc.nat(), { maxLength: 10 }), (lines, cuts) => {
        const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(''));
        const points = [...new Set(cuts.map((c) => (bytes.length === 0 ? 0 : c % bytes.length)))].sort((a, b) => a - b);
        const chunks: Buffer[] = [];
        let from = 0;
        for (const point of points) {
          chunks.push(bytes.subarray(from, point));
          from = point;
        }
        chunks.push(bytes.subarray(from));
        expect(splitAll(chunks).lines).toEqual(lines);
      }),
    );
  });

  it('skips empty lines and tolerates CRLF', () => {
    const { lines } = splitAll([Buffer.from('\n{"a":1}\r\n\r\n\n{"b":2}\n')]);
    expect(lines).toEqual(['{"a":1}\r', '{"b":2}']);
  });

  it('reports the bytes of an unfinished last line', () => {
    const { lines, splitter } = splitAll([Buffer.from('{"a":1}\n{"b":')]);
    expect(lines).toEqual(['{"a":1}']);
    expect(splitter.pendingBytes).toBe(5);
    expect(splitter.pendingExcerpt()).toBe('{"b":');
  });

  it('fails with line-too-long before buffering past the limit, and drops what it held', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => lines.push(line), 10);
    splitter.push(Buffer.from('{"a":1}\n12345'));
    let caught: unknown;
    try {
      splitter.push(Buffer.from('678901'));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ProtocolError);
    expect((caught as ProtocolError).problem).toBe('line-too-long');
    expect(splitter.pendingBytes).toBe(0);
    expect(lines).toEqual(['{"a":1}']);
  });

  it('fails with line-too-long for an over-long line inside one chunk', () => {
    expect(() => splitAll([Buffer.from('x'.repeat(20) + '\n')], 10)).toThrow(expect.objectContaining({ problem: 'line-too-long' }));
  });

  it('accepts a line of exactly the limit', () => {
    expect(splitAll([Buffer.from('12345'), Buffer.from('67890\n')], 10).lines).toEqual(['1234567890']);
  });

  it('delivers no further line once stopped, even from the chunk being scanned', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => {
      lines.push(line);
      splitter.stop();
    });
    splitter.push(Buffer.from('a\nb\nc\nd'));
    expect(lines).toEqual(['a']);
    expect(splitter.pendingBytes).toBe(0);
  });

  it('lets an exception from the line handler leave push', () => {
    const splitter = new LineSplitter(() => {
      throw new Error('bad line');
    });
    expect(() => splitter.push(Buffer.from('a\n'))).toThrow('bad line');
  });
});
