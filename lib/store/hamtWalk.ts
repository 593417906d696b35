/** Visiting every leaf under a node of the trie (`hamtNodes.ts`): by callback, or one at a time. */
import { Branch, entryKey, entryValue, isEntry, type Collision, type Entry, type Node } from './hamtNodes';

export function forEachLeaf<V>(node: Node<V> | undefined, visit: (value: V, key: string) => void): void {
  if (node === undefined) return;
  if (isEntry(node)) visit(entryValue(node), entryKey(node));
  else if (node instanceof Branch) for (const child of node.children) forEachLeaf(child, visit);
  else for (const leaf of node.leaves) visit(entryValue(leaf), entryKey(leaf));
}

/**
 * Walks the leaves depth-first with an explicit stack (the trie is at most 7 levels deep), one
 * projected item per `next()`: a generator with `yield*` per level resumes every generator on the
 * path for each item, which cost several times as much (`bench/micro/persistentMap.ts`, the
 * `entries` row).
 */
export class LeafIterator<V, T> implements IterableIterator<T> {
  private readonly path: (Branch<V> | Collision<V>)[] = [];
  /** Per level of `path`, the index of the next child to visit. */
  private readonly positions: number[] = [];
  private rootLeaf: Entry<V> | undefined;

  constructor(
    root: Node<V> | undefined,
    private readonly project: (leaf: Entry<V>) => T,
  ) {
    if (root !== undefined && isEntry(root)) this.rootLeaf = root;
    else if (root !== undefined) {
      this.path.push(root);
      this.positions.push(0);
    }
  }

  next(): IteratorResult<T, undefined> {
    const leaf = this.rootLeaf;
    if (leaf !== undefined) {
      this.rootLeaf = undefined;
      return { value: this.project(leaf), done: false };
    }
    for (let top = this.path.length - 1; top >= 0; top = this.path.length - 1) {
      const node = this.path[top]!;
      const items: readonly Node<V>[] = node instanceof Branch ? node.children : node.leaves;
      const at = this.positions[top]!;
      if (at === items.length) {
        this.path.pop();
        this.positions.pop();
        continue;
      }
      this.positions[top] = at + 1;
      const child = items[at]!;
      if (isEntry(child)) return { value: this.project(child), done: false };
      this.path.push(child);
      this.positions.push(0);
    }
    return { value: undefined, done: true };
  }

  [Symbol.iterator](): this {
    return this;
  }
}

/** Every leaf under `node`, depth-first. */
export function leaves<V>(node: Node<V> | undefined): IterableIterator<Entry<V>> {
  return new LeafIterator(node, (leaf: Entry<V>) => leaf);
}
