import type { ReplaceDelta } from '../../lib/reflector/delta';
import { initialEventPages } from '../../lib/reflector/initialEventPages';
import { pod } from './reflectHarness';

function collect(pageSize: number) {
  const emitted: { page: ReplaceDelta; listedItems: number }[] = [];
  return { emitted, pages: initialEventPages(pageSize, (page, listedItems) => void emitted.push({ page, listedItems })) };
}

describe('initialEventPages', () => {
  it('emits a page as soon as it holds pageSize objects, and the rest as the last page at the bookmark', () => {
    const { emitted, pages } = collect(2);
    pages.put(pod('a', '1'));
    expect(emitted).toEqual([]);
    pages.put(pod('b', '2'));
    pages.put(pod('c', '3'));
    pages.end('9');
    expect(emitted).toEqual([
      { page: { type: 'Replace', items: [pod('a', '1'), pod('b', '2')], first: true, last: false, resourceVersion: '' }, listedItems: 2 },
      { page: { type: 'Replace', items: [pod('c', '3')], first: false, last: true, resourceVersion: '9' }, listedItems: 3 },
    ]);
  });

  it('emits one page that is both first and last when the bookmark comes before a page fills', () => {
    const { emitted, pages } = collect(500);
    pages.end('4');
    expect(emitted.map((e) => e.page)).toEqual([{ type: 'Replace', items: [], first: true, last: true, resourceVersion: '4' }]);
  });

  it('keeps the latest version of an object changed within a page, in its first place', () => {
    const { emitted, pages } = collect(3);
    pages.put(pod('a', '1'));
    pages.put(pod('b', '2'));
    pages.put(pod('a', '5'));
    pages.end('6');
    expect(emitted.map((e) => e.page.items)).toEqual([[pod('a', '5'), pod('b', '2')]]);
  });

  it('takes a deleted object out of its page and sends it in `deleted`, where an earlier page may hold it', () => {
    const { emitted, pages } = collect(3);
    pages.put(pod('a', '1'));
    pages.put(pod('b', '2'));
    pages.put(pod('d', '2'));
    pages.remove(pod('a', '1'));
    pages.put(pod('c', '3'));
    pages.remove(pod('c', '3'));
    pages.put(pod('c', '4'));
    pages.end('5');
    expect(emitted.map((e) => e.page)).toEqual([
      { type: 'Replace', items: [pod('a', '1'), pod('b', '2'), pod('d', '2')], first: true, last: false, resourceVersion: '' },
      // Deleted first, then the items: c, deleted and created again, stays.
      { type: 'Replace', items: [pod('c', '4')], first: false, last: true, resourceVersion: '5', deleted: [pod('a', '1'), pod('c', '3')] },
    ]);
  });

  it('bounds the deletes it holds by pageSize too', () => {
    const { emitted, pages } = collect(2);
    pages.remove(pod('a', '1'));
    pages.remove(pod('b', '1'));
    expect(emitted.map((e) => e.page)).toEqual([{ type: 'Replace', items: [], first: true, last: false, resourceVersion: '', deleted: [pod('a', '1'), pod('b', '1')] }]);
  });
});
