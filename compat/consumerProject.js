'use strict';
/*
 * Lays out one TypeScript consumer of the README quickstart, for compat/run.sh:
 *   node consumerProject.js README DIR cjs|esm SETUP
 * DIR gets a package.json (`"type": "commonjs"` or `"module"`), quickstart.ts (the README's
 * quickstart block, as written) and a tsconfig.json whose module options are the README's
 * `<!-- tsconfig: SETUP -->` block, exactly, plus `strict` and `skipLibCheck: false`. So the
 * settings the README documents are the settings that get checked.
 */
const fs = require('node:fs');
const path = require('node:path');

const [readmeFile, dir, kind, setup] = process.argv.slice(2);
const readme = fs.readFileSync(readmeFile, 'utf8');

/** The first fenced block of a language after a marker comment. */
function blockAfter(marker, language) {
  const at = readme.indexOf(marker);
  if (at < 0) throw new Error(`${readmeFile} has no ${marker}`);
  const block = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(readme.slice(at));
  if (block === null) throw new Error(`no \`\`\`${language} block after ${marker} in ${readmeFile}`);
  return block[1];
}

const moduleOptions = JSON.parse(blockAfter(`<!-- tsconfig: ${setup} -->`, 'json'));
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: kind === 'esm' ? 'module' : 'commonjs' }) + '\n');
fs.writeFileSync(path.join(dir, 'quickstart.ts'), blockAfter('<!-- quickstart', 'ts'));
const compilerOptions = {
  ...moduleOptions,
  target: 'ES2022',
  lib: ['ES2022'],
  types: ['node'],
  strict: true,
  skipLibCheck: false,
  outDir: 'out',
  // A bundler consumer's build is the bundler's (compat/run.sh bundles quickstart.ts with rolldown).
  noEmit: setup === 'bundler',
};
fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['quickstart.ts'] }, null, 2) + '\n');
