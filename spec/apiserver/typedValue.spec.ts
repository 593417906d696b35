import { field, FieldSet, keyed, pathString } from '../../apiserver/src/fieldPath';
import type { FieldType } from '../../apiserver/src/fieldTypes';
import { compareObjects, fieldSetOf, mergeObjects, removeFields, validationErrors } from '../../apiserver/src/typedValue';

/**
 * Objects walked with their field types, as structured-merge-diff's `typed` package walks them
 * (`tofieldset.go`, `compare.go`, `merge.go`, `remove.go`, `validate.go`).
 */

const items: FieldType = { fields: { items: { list: { type: 'map', keys: ['name'], patchMergeKey: 'name' } }, tags: { list: { type: 'set', patchMerge: true } }, ref: { atomic: true } } };
const item = (name: string, value?: string): object => ({ name, ...(value === undefined ? {} : { value }) });
const paths = (set: FieldSet): string[] => set.paths().map(pathString);

describe('the fields a value sets', () => {
  it('are its leaves, its list items, atomic members whole, and null or empty members', () => {
    expect(paths(fieldSetOf({ a: 1, b: { c: 'x' }, items: [item('p', 'v')], tags: ['t'], ref: { kind: 'Pod' }, list: [1, 2], empty: {}, nothing: null }, items))).toEqual([
      '.a',
      '.empty',
      '.list',
      '.nothing',
      '.ref',
      '.b.c',
      '.items[name="p"]',
      '.items[name="p"].name',
      '.items[name="p"].value',
      '.tags[="t"]',
    ]);
  });

  it('owns an item whose key appears twice whole, not field by field', () => {
    expect(paths(fieldSetOf({ items: [item('p', '1'), item('p', '2'), item('q')] }, items))).toEqual(['.items[name="p"]', '.items[name="q"]', '.items[name="q"].name']);
  });

  it('refuses, in an applied configuration, two items with one key and an item without its key', () => {
    expect(validationErrors({ items: [item('p'), item('p'), { value: 'v' }] }, items)).toEqual([
      '.items: duplicate entries for key [name="p"]',
      '.items: element 2: associative list with keys has an element that omits all key fields ["name"] (and doesn\'t have default values for any key fields)',
    ]);
  });
});

describe('what changed', () => {
  it('adds, modifies and removes leaves, and adds or removes a container only when it appears or goes whole', () => {
    const comparison = compareObjects({ a: 1, b: { c: 1 }, items: [item('p', '1'), item('q')] }, { a: 2, b: { c: 1, d: 1 }, items: [item('p', '2')], e: { f: 1 } }, items);
    expect([paths(comparison.added), paths(comparison.modified), paths(comparison.removed)]).toEqual([
      ['.e', '.b.d', '.e.f'],
      ['.a', '.items[name="p"].value'],
      ['.items[name="q"]', '.items[name="q"].name'],
    ]);
  });
});

describe('an applied configuration merged into the live object', () => {
  it.each([
    ['items both have follow the configuration, live-only items stay where they were', [item('a'), item('b'), item('c')], [item('c'), item('a')], ['b', 'c', 'a']],
    ['new items come where the configuration puts them', [item('a'), item('b')], [item('a'), item('n'), item('b')], ['a', 'n', 'b']],
  ])('%s', (_case, live, config, order) => {
    const merged = mergeObjects({ items: live }, { items: config }, items) as { items: { name: string }[] };
    expect(merged.items.map((i) => i.name)).toEqual(order);
  });

  it('merges item fields, unions sets, replaces atomic members and lists, and keeps what the configuration leaves out', () => {
    const live = { keep: 1, items: [item('a', 'old')], tags: ['x'], ref: { kind: 'Pod', name: 'p' }, list: [1, 2] };
    const config = { items: [{ name: 'a', extra: 'e' }], tags: ['y'], ref: { kind: 'Node' }, list: [3] };
    expect(mergeObjects(live, config, items)).toEqual({ keep: 1, items: [{ name: 'a', value: 'old', extra: 'e' }], tags: ['x', 'y'], ref: { kind: 'Node' }, list: [3] });
  });
});

describe('fields removed', () => {
  it('takes a member or item with everything under it, and an object or list it leaves empty', () => {
    const set = FieldSet.of([field('items'), keyed([{ name: 'name', value: 'a' }])], [field('b'), field('c')], [field('keep'), field('x')]);
    expect(removeFields({ items: [item('a'), item('b')], b: { c: 1 }, keep: { x: 1, y: 2 } }, set, items)).toEqual({ items: [item('b')], keep: { y: 2 } });
  });
});
