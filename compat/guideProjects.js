'use strict';
/*
 * Lays out the testing guide's first example as a user's test, for compat/run.sh:
 *   node guideProjects.js GUIDE DIR [TUTORIAL]
 * GUIDE is the shipped docs/guides/testing.md (from the packed rx-informer); its first ```ts block
 * is copied verbatim into
 *   DIR/jest-cjs/guide.spec.ts      a CommonJS project ("type": "commonjs") under Jest with ts-jest;
 *   DIR/vitest-esm/guide.test.ts    an ES module project ("type": "module") under Vitest, with the
 *                                   `globals: true` setting the guide names for its describe/it/expect.
 * and, given TUTORIAL (the repository's tutorial/first-controller, the project of
 * docs/guides/first-controller.md), copies it into
 *   DIR/first-controller            an ES module project (its own package.json, tsconfig nodenext,
 *                                   vitest.config.ts), without its node_modules.
 * All resolve rx-informer and rx-informer-apiserver from DIR/node_modules (the packed tarballs).
 */
const fs = require('node:fs');
const path = require('node:path');

const [guide, dir, tutorial] = process.argv.slice(2);
const markdown = fs.readFileSync(guide, 'utf8');
const block = /^```ts[ \t]*\n([\s\S]*?)^```[ \t]*$/m.exec(markdown);
if (block === null) {
  console.error(`${guide} has no \`\`\`ts block`);
  process.exit(1);
}
const example = block[1];
if (!/from 'rx-informer-apiserver'/.test(example)) {
  console.error(`the guide's first example does not import rx-informer-apiserver:\n${example}`);
  process.exit(1);
}

function write(folder, files) {
  fs.mkdirSync(path.join(dir, folder), { recursive: true });
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, folder, name), typeof text === 'string' ? text : `${JSON.stringify(text, null, 2)}\n`);
}

write('jest-cjs', {
  'package.json': { name: 'guide-jest', private: true, type: 'commonjs' },
  // ts-jest compiles each file on its own (isolatedModules): the repository type-checks the guide.
  'tsconfig.json': { compilerOptions: { module: 'commonjs', moduleResolution: 'node10', target: 'ES2022', esModuleInterop: true, isolatedModules: true, types: ['jest', 'node'] } },
  'jest.config.js': "module.exports = { testEnvironment: 'node', transform: { '^.+\\\\.ts$': 'ts-jest' }, testMatch: ['**/*.spec.ts'] };\n",
  'guide.spec.ts': example,
});
write('vitest-esm', {
  'package.json': { name: 'guide-vitest', private: true, type: 'module' },
  'vitest.config.js': "export default { test: { globals: true, include: ['*.test.ts'] } };\n",
  'guide.test.ts': example,
});
if (tutorial !== undefined) {
  fs.cpSync(tutorial, path.join(dir, 'first-controller'), { recursive: true, filter: (source) => path.basename(source) !== 'node_modules' });
}
