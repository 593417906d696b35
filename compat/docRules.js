'use strict';
/*
 * The two rules the shipped docs are held to, shared by compat/checkDocs.js (on the unpacked
 * tarball) and spec/docs/shippedDocs.spec.ts (on the repository, in npm test).
 */
const path = require('node:path');

/** The relative links of a Markdown file outside its code blocks, each resolved against the file's folder. */
function relativeLinks(file, text) {
  const prose = text.replace(/^```[\s\S]*?^```/gm, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1])
    .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target) && !target.startsWith('#'))
    .map((target) => ({ target, resolved: path.posix.normalize(path.posix.join(path.posix.dirname(file), target.split('#')[0])) }));
}

/** The ```ts block after the `<!-- quickstart` marker, or undefined when there is none. */
function quickstartBlock(text) {
  const marker = text.indexOf('<!-- quickstart');
  return marker < 0 ? undefined : /```ts\n([\s\S]*?)```/.exec(text.slice(marker))?.[1];
}

module.exports = { relativeLinks, quickstartBlock };
