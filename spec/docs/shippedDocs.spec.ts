import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { quickstartBlock, relativeLinks } from '../../compat/docRules';
import { REPO } from './snippets';

/**
 * The Markdown the package ships (docs/, examples/, and package-readme.md as its README), read as
 * the package's users read it: without spec/, DEVELOPERS.md or the repository README. compat/run.sh
 * checks the packed tarball the same way; this spec catches the drift in `npm test`, minutes earlier.
 */
const SHIPPED_FOLDERS = ['docs', 'examples'];
/** Top-level files every package carries (its README is package-readme.md, swapped in at pack). */
const SHIPPED_FILES = new Set(['README.md', 'LICENSE', 'package.json']);

function shippedMarkdown(): string[] {
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(REPO, dir))) {
      const relative = path.posix.join(dir, entry);
      if (relative === 'docs/api') continue;
      if (statSync(path.join(REPO, relative)).isDirectory()) walk(relative);
      else if (entry.endsWith('.md')) files.push(relative);
    }
  };
  SHIPPED_FOLDERS.forEach(walk);
  return files;
}

function quickstart(file: string): string | undefined {
  return quickstartBlock(readFileSync(path.join(REPO, file), 'utf8'));
}

describe('the docs the package ships', () => {
  // package-readme.md is the package's README.md: its links resolve from the package's root.
  it.each([...shippedMarkdown(), 'package-readme.md'])('%s links only to files inside the package', (file) => {
    const shippedAs = file === 'package-readme.md' ? 'README.md' : file;
    const outside = relativeLinks(shippedAs, readFileSync(path.join(REPO, file), 'utf8'))
      .map(({ resolved }) => resolved)
      .filter((resolved) => !SHIPPED_FILES.has(resolved))
      .filter((resolved) => !SHIPPED_FOLDERS.some((folder) => resolved === folder || resolved.startsWith(`${folder}/`)));
    expect(outside).toEqual([]);
  });

  it("package-readme.md's quickstart is the repository README's, word for word", () => {
    expect(quickstart('README.md')).toEqual(expect.any(String));
    expect(quickstart('package-readme.md')).toBe(quickstart('README.md'));
  });
});
