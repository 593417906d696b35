import * as path from 'node:path';
import { commentText, exampleBlocks, publicExamples, type JsDocExample } from './jsdocExamples';
import { againstRepository, scratchFolder, typeErrors, type Scratch } from './snippets';

/**
 * The `## Example` of every public export's JSDoc (what TypeDoc shows on its page) is a program
 * that compiles against the package: each ```ts block, as its own ES module (top-level `await`
 * allowed, as in an ES module project), importing the package by its name (`rx-informer`,
 * `rx-informer/pipeline`, ..., `rx-informer-apiserver`), with what it assumes declared
 * (`declare const kubeConfig: KubeConfig`). As spec/docs/docs.spec.ts does for the Markdown.
 */

/**
 * Examples whose files are being rewritten by other work (lib/informer, apiserver/): each is listed
 * with what fails, and the spec fails once one of them compiles, so that the list only shrinks.
 * Keys are `specifier name #ordinal`.
 */
const AWAITING_THEIR_OWNERS: ReadonlyMap<string, string> = new Map([]);

const keyOf = (example: JsDocExample): string => `${example.specifier} ${example.name} #${example.ordinal}`;

describe('the example extractor', () => {
  const comment = commentText(
    [
      '/**',
      ' * Does a thing.',
      ' *',
      ' * ```ts',
      ' * notAnExample();',
      ' * ```',
      ' *',
      ' * ## Example',
      ' * ```ts',
      " * import { thing } from 'rx-informer';",
      ' * thing();',
      ' * ```',
      ' * Then, with options:',
      ' * ```typescript',
      ' * thing({ fast: true });',
      ' * ```',
      ' * @param options how',
      ' * ```ts',
      ' * insideParam();',
      ' * ```',
      ' */',
    ].join('\n'),
  );

  it('takes the ```ts blocks of the ## Example section, up to the first block tag, with their lines', () => {
    expect(exampleBlocks(comment)).toEqual({
      sections: 1,
      blocks: [
        { code: "import { thing } from 'rx-informer';\nthing();\n", line: 9 },
        { code: 'thing({ fast: true });\n', line: 14 },
      ],
    });
  });

  it('ends a section at the next heading, and counts a section that shows no code', () => {
    expect(exampleBlocks('## Example\nSee the guide.\n## Notes\n```ts\nlater();\n```\n')).toEqual({ sections: 1, blocks: [] });
  });
});

describe('the JSDoc examples of the public exports', () => {
  const { examples, withoutCode } = publicExamples();
  let scratch: Scratch;
  const files = new Map<string, JsDocExample>();

  beforeAll(() => {
    scratch = scratchFolder();
    examples.forEach((example, index) => {
      files.set(scratch.write(`example_${index}_${example.name.replace(/\W/g, '_')}.ts`, againstRepository(example.code)), example);
    });
  });
  afterAll(() => scratch.remove());

  it('are found in every package, on functions, constants and types', () => {
    const found = new Set(examples.map((example) => `${example.specifier} ${example.name}`));
    for (const expected of ['rx-informer informer', 'rx-informer ofType', 'rx-informer MetadataOnlyOptions', 'rx-informer/pipeline list$', 'rx-informer/workqueue reconcile', 'rx-informer/leader-election whileLeader', 'rx-informer/sharding shardedInformer', 'rx-informer/prometheus registerInformerMetrics', 'rx-informer/testing skewedScheduler', 'rx-informer-apiserver startApiServer']) {
      expect(found).toContain(expected);
    }
  });

  it('show code in every ## Example section', () => {
    expect(withoutCode).toEqual([]);
  });

  it('import the package by its name, never by a path into it', () => {
    const relative = examples.filter((example) => /from '\.{1,2}\//.test(example.code)).map((example) => `${example.file}:${example.line}`);
    expect(relative).toEqual([]);
  });

  it('type-check as ES modules against the package (strict; unused declarations allowed)', () => {
    const errors = typeErrors([...files.keys()], { fragments: true, esModules: true });
    const failing = new Map<string, string[]>();
    for (const [file, example] of files) {
      const own = errors.filter((error) => error.startsWith(`${path.basename(file)}:`));
      if (own.length === 0) continue;
      const where = `${example.file}:${example.line}`;
      failing.set(keyOf(example), own.map((error) => `${where} (block line ${error.split(':')[1] ?? '?'}): ${error.split(': ').slice(1).join(': ')}`));
    }
    const unexpected = [...failing].filter(([key]) => !AWAITING_THEIR_OWNERS.has(key)).flatMap(([key, messages]) => messages.map((message) => `${key}: ${message}`));
    expect(unexpected).toEqual([]);
    // A listed example that compiles now comes off the list.
    expect([...AWAITING_THEIR_OWNERS.keys()].filter((key) => !failing.has(key))).toEqual([]);
  }, 120_000);
});
