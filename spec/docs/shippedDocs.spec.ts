import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
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

function relativeLinks(text: string): string[] {
  const prose = text.replace(/^```[\s\S]*?^```/gm, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1])
    .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target) && !target.startsWith('#'));
}

function quickstart(file: string): string {
  const text = readFileSync(path.join(REPO, file), 'utf8');
  const marker = text.indexOf('<!-- quickstart:');
  const start = text.indexOf('```ts', marker);
  return text.slice(start, text.indexOf('\n```\n', start));
}

describe('the docs the package ships', () => {
  it.each(shippedMarkdown())('%s links only to files inside the package', (file) => {
    const outside = relativeLinks(readFileSync(path.join(REPO, file), 'utf8'))
      .map((target) => path.posix.normalize(path.posix.join(path.posix.dirname(file), target.split('#')[0])))
      .filter((resolved) => !SHIPPED_FILES.has(resolved))
      .filter((resolved) => !SHIPPED_FOLDERS.some((folder) => resolved === folder || resolved.startsWith(`${folder}/`)));
    expect(outside).toEqual([]);
  });

  it("package-readme.md's quickstart is the repository README's, word for word", () => {
    expect(quickstart('package-readme.md')).toBe(quickstart('README.md'));
  });
});
