/** One entry point of a package: a subpath of its `exports` map and the source file it is built from. */
export interface EntryPoint {
  /** The package's name: `rx-informer` or `rx-informer-apiserver`. */
  readonly package: string;
  /** `.`, `./pipeline`, ... as in the package.json's `exports`. */
  readonly subpath: string;
  /** The source file, relative to the repository (`lib/index.ts`, `apiserver/src/index.ts`). */
  readonly source: string;
}

/** One package of the repository. */
export interface Package {
  readonly name: string;
  /** Its folder, relative to the repository: `.` for rx-informer, `apiserver` for the server. */
  readonly folder: string;
  /** The folder its sources live in, relative to the repository (`lib`, `apiserver/src`). */
  readonly sourceRoot: string;
  readonly entryPoints: readonly EntryPoint[];
}

/** rx-informer's entry points, the root first. */
export const ENTRY_POINTS: readonly EntryPoint[];

/** Every package of the repository, rx-informer first. */
export const PACKAGES: readonly Package[];

/** Every entry point of every package, rx-informer's first. */
export const ALL_ENTRY_POINTS: readonly EntryPoint[];

/** The package an entry point belongs to. */
export function packageOf(entry: EntryPoint): Package;

/** The import specifier of an entry point: `rx-informer`, `rx-informer/pipeline`, ..., `rx-informer-apiserver`. */
export function specifierOf(entry: EntryPoint): string;

/** The built file of an entry point with extension `ext` (`.mjs`, `.cjs`, `.d.mts`, `.d.cts`), relative to its package's folder. */
export function distOf(entry: EntryPoint, ext: string): string;
