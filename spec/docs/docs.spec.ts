import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { againstRepository, REPO, scratchFolder, typeErrors, typeScriptBlocks, type Scratch } from './snippets';

/**
 * The guides as programs: every ```ts block in README.md and docs/ type-checks against the library
 * as it is (so every API name they use exists, with the signature they use), and every relative
 * link points at a file that exists. Pages owned by the benchmark and reliability work are
 * checked for links only.
 */
const NOT_SNIPPETS = new Set(['docs/PERFORMANCE.md', 'docs/reliability.md']);

function markdownFiles(): string[] {
  const files = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(REPO, dir))) {
      const relative = path.join(dir, entry);
      if (relative === path.join('docs', 'api')) continue;
      if (statSync(path.join(REPO, relative)).isDirectory()) walk(relative);
      else if (entry.endsWith('.md')) files.push(relative);
    }
  };
  walk('docs');
  return files;
}

describe('the documentation', () => {
  const files = markdownFiles();

  it('has the pages the README and the docs index promise', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'docs/README.md',
        'docs/concepts.md',
        'docs/guides/controllers.md',
        'docs/guides/custom-operators.md',
        'docs/guides/custom-resources.md',
        'docs/guides/testing.md',
        'docs/guides/memory.md',
        'docs/guides/writing-back.md',
        'docs/migration/client-go.md',
        'docs/migration/client-node.md',
      ]),
    );
  });

  it('links only to files that exist', () => {
    const broken: string[] = [];
    for (const file of files) {
      const text = readFileSync(path.join(REPO, file), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (target === undefined || /^[a-z]+:/.test(target)) continue;
        const resolved = path.join(REPO, path.dirname(file), target);
        try {
          statSync(resolved);
        } catch {
          broken.push(`${file} → ${target}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  describe('code blocks', () => {
    let scratch: Scratch;
    const snippets: { readonly where: string; readonly file: string }[] = [];

    beforeAll(() => {
      scratch = scratchFolder();
      for (const file of files) {
        if (NOT_SNIPPETS.has(file)) continue;
        const blocks = typeScriptBlocks(readFileSync(path.join(REPO, file), 'utf8'));
        blocks.forEach((block, index) => {
          const name = `${file.replace(/[\\/.]/g, '_')}_${index}.ts`;
          snippets.push({ where: `${file}:${block.line}`, file: scratch.write(name, againstRepository(block.code)) });
        });
      }
    });
    afterAll(() => scratch.remove());

    it('are there to check: every guide and migration page shows code', () => {
      const pages = new Set(snippets.map((snippet) => snippet.where.split(':')[0]));
      for (const page of ['README.md', 'docs/guides/controllers.md', 'docs/guides/custom-operators.md', 'docs/guides/testing.md', 'docs/guides/memory.md', 'docs/guides/writing-back.md', 'docs/migration/client-go.md', 'docs/migration/client-node.md']) {
        expect(pages).toContain(page);
      }
    });

    it('type-check under the repository compiler options (strict; unused declarations allowed), each as its own module', () => {
      const errors = typeErrors(snippets.map((snippet) => snippet.file), { fragments: true });
      const located = errors.map((error) => {
        const snippet = snippets.find((candidate) => error.startsWith(`${path.basename(candidate.file)}:`));
        return snippet === undefined ? error : `${snippet.where} (block line ${error.split(':')[1] ?? '?'}): ${error.split(': ').slice(1).join(': ')}`;
      });
      expect(located).toEqual([]);
    }, 120_000);
  });
});
