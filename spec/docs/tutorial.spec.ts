import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { againstRepository, fileBlocks, REPO, scratchFolder, typeErrors } from './snippets';

/**
 * The tutorial (docs/guides/first-controller.md) is a project, tutorial/first-controller: the page
 * shows each of its files word for word, and its sources type-check against this repository's
 * as an ES module program. compat/run.sh installs it from the packed packages, type-checks it
 * with its own tsconfig (nodenext) and runs its test under Vitest.
 */
const PAGE = 'docs/guides/first-controller.md';
const PROJECT = path.join(REPO, 'tutorial', 'first-controller');

function projectFiles(dir = ''): string[] {
  return readdirSync(path.join(PROJECT, dir), { withFileTypes: true }).flatMap((entry) => {
    const relative = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.name === 'node_modules') return [];
    return entry.isDirectory() ? projectFiles(relative) : [relative];
  });
}

describe('the tutorial', () => {
  const shown = fileBlocks(readFileSync(path.join(REPO, PAGE), 'utf8'));

  it('shows every file of its project, each once, as the project holds it', () => {
    expect(shown.map((block) => block.file).sort()).toEqual(projectFiles().sort());
    for (const block of shown) {
      expect({ file: block.file, code: block.code }).toEqual({ file: block.file, code: readFileSync(path.join(PROJECT, block.file), 'utf8') });
    }
  });

  it('is an ES module project that depends on every package its sources import', () => {
    const manifest = JSON.parse(readFileSync(path.join(PROJECT, 'package.json'), 'utf8')) as { type?: string; dependencies?: object; devDependencies?: object };
    expect(manifest.type).toBe('module');
    const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.devDependencies ?? {})]);
    const imported = shown
      .filter((block) => block.file.startsWith('src/'))
      .flatMap((block) => [...block.code.matchAll(/from '([^'.][^']*)'/g)].map((match) => match[1] ?? ''))
      .filter((specifier) => !specifier.startsWith('node:'))
      .map((specifier) => (specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0] ?? ''));
    expect(imported.length).toBeGreaterThan(5);
    expect([...new Set(imported)].filter((name) => !declared.has(name))).toEqual([]);
  });

  it("type-checks against this repository's sources, as ES modules", () => {
    const scratch = scratchFolder();
    try {
      const files = shown.filter((block) => block.file.startsWith('src/')).map((block) => scratch.write(path.basename(block.file), againstRepository(block.code)));
      expect(files.length).toBeGreaterThanOrEqual(3);
      expect(typeErrors(files, { esModules: true })).toEqual([]);
    } finally {
      scratch.remove();
    }
  }, 120_000);
});
