/** One entry point of the package: a subpath of its `exports` map and the lib/ file it is built from. */
export interface EntryPoint {
  /** `.`, `./pipeline`, ... as in package.json's `exports`. */
  readonly subpath: string;
  /** The source file, relative to the repository (`lib/index.ts`). */
  readonly source: string;
}

/** Every entry point of the package, the root first. */
export const ENTRY_POINTS: readonly EntryPoint[];

/** The import specifier of an entry point: `rx-informer`, `rx-informer/pipeline`, ... */
export function specifierOf(entry: EntryPoint): string;

/** The built file of an entry point with extension `ext` (`.mjs`, `.cjs`, `.d.mts`, `.d.cts`). */
export function distOf(entry: EntryPoint, ext: string): string;
