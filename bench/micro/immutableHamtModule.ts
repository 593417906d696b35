import Module from 'node:module';

const HAMT = require.resolve('../../lib/store/hamt');

/**
 * Registers `immutableHamt.ts` as the loaded module `lib/store/hamt`, so that modules required
 * afterwards get immutable.js's `Map` behind our API; returns a function that puts back what was
 * registered before (for a benchmark that loads both variants in one process).
 */
export function substituteHamt(): () => void {
  const previous = require.cache[HAMT];
  const substitute = new Module(HAMT, module);
  substitute.filename = HAMT;
  substitute.exports = require('./immutableHamt') as unknown;
  substitute.loaded = true;
  require.cache[HAMT] = substitute;
  return () => {
    if (previous === undefined) delete require.cache[HAMT];
    else require.cache[HAMT] = previous;
  };
}

/** A second, independent copy of `modulePath` (resolved from here) whose `lib/store/hamt` is immutable.js's. */
export function requireOnImmutableMap<T>(modulePath: string): T {
  const resolved = require.resolve(modulePath);
  const original = require.cache[resolved];
  delete require.cache[resolved];
  const restore = substituteHamt();
  try {
    return require(resolved) as T;
  } finally {
    restore();
    if (original === undefined) delete require.cache[resolved];
    else require.cache[resolved] = original;
  }
}
