import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { anchorsOf, githubSlug, headingText, linksOf } from './anchors';
import { againstRepository, REPO, scratchFolder, typeErrors, typeScriptBlocks, type Scratch } from './snippets';

/**
 * The guides as programs: every ```ts block in README.md and docs/ type-checks against the library
 * as it is (so every API name they use exists, with the signature they use), and every relative
 * link points at a file that exists and, when it names an anchor, at a heading of that file (as
 * GitHub and npm make anchors; the docs site, `npm run docs`, makes the same ones and fails on a
 * missing one too). Pages owned by the benchmark and reliability work are checked for links only.
 */
const NOT_SNIPPETS = new Set(['docs/PERFORMANCE.md', 'docs/reliability.md']);

function markdownFiles(): string[] {
  const files = ['README.md', 'package-readme.md'];
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

describe('the anchor rules', () => {
  it("make GitHub's anchor from a heading: code spans and link labels keep their text, punctuation goes", () => {
    expect(githubSlug(headingText('2. The reflector: `reflect()`'))).toBe('2-the-reflector-reflect');
    expect(githubSlug(headingText('Lists in one response: the decoder'))).toBe('lists-in-one-response-the-decoder');
    expect(githubSlug(headingText('The persistent map: our trie or immutable.js'))).toBe('the-persistent-map-our-trie-or-immutablejs');
    expect(githubSlug(headingText('**Bold** and [a link](x.md) — dash'))).toBe('bold-and-a-link--dash');
  });

  it('number a repeated heading as GitHub does, and read no heading inside a code block', () => {
    const page = '# Notes\n## Run\n```sh\n# not a heading\n```\n## Run\n### Run\n';
    expect([...anchorsOf(page)]).toEqual(['notes', 'run', 'run-1', 'run-2']);
  });

  it('read links of the prose only, with their anchor and line', () => {
    const page = 'See [a](a.md#x-y) and `[b](b.md)`.\n```md\n[c](c.md)\n```\n[d](#top) [e](https://x.org/#z)\n';
    expect(linksOf(page)).toEqual([
      { path: 'a.md', anchor: 'x-y', line: 1 },
      { path: '', anchor: 'top', line: 5 },
      { path: 'https://x.org/', anchor: 'z', line: 5 },
    ]);
  });
});

describe('the documentation', () => {
  const files = markdownFiles();

  it('has the pages the README and the docs index promise', () => {
    expect(files).toEqual(
      expect.arrayContaining([
        'docs/README.md',
        'docs/concepts.md',
        'docs/guides/controllers.md',
        'docs/guides/custom-operators.md',
        'docs/guides/first-controller.md',
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
      for (const link of linksOf(readFileSync(path.join(REPO, file), 'utf8'))) {
        if (link.path === '' || /^[a-z]+:/.test(link.path)) continue;
        try {
          statSync(path.join(REPO, path.dirname(file), link.path));
        } catch {
          broken.push(`${file}:${link.line} → ${link.path}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('links to anchors that are headings of the page they point at', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const link of linksOf(readFileSync(path.join(REPO, file), 'utf8'))) {
        if (link.anchor === undefined || /^[a-z]+:/.test(link.path)) continue;
        const target = link.path === '' ? file : path.join(path.dirname(file), link.path);
        checked++;
        let anchors: Set<string>;
        try {
          anchors = anchorsOf(readFileSync(path.join(REPO, target), 'utf8'));
        } catch {
          broken.push(`${file}:${link.line} → ${link.path}#${link.anchor} (no such file)`);
          continue;
        }
        if (!anchors.has(link.anchor)) broken.push(`${file}:${link.line} → ${link.path}#${link.anchor}`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });

  describe('code blocks', () => {
    let scratch: Scratch;
    const snippets: { readonly where: string; readonly file: string }[] = [];

    beforeAll(() => {
      scratch = scratchFolder();
      for (const file of files) {
        if (NOT_SNIPPETS.has(file)) continue;
        // A tutorial's files are its project's, checked by spec/docs/tutorial.spec.ts under the project's settings.
        const blocks = typeScriptBlocks(readFileSync(path.join(REPO, file), 'utf8')).filter((block) => block.file === undefined);
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
