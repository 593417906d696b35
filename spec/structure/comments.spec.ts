import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

/**
 * Comments in lib/ are specifications: they state a rule and why, never a figure measured on one
 * machine under one Node release ("took 18 µs", "19 MB promoted", "2.5× the CPU"). Such figures go
 * stale unnoticed; they belong in docs/PERFORMANCE.md beside the command that measures them, and
 * a comment that needs one links there. This spec scans the comments of lib/**\/*.ts (JSDoc
 * included; code and string literals are not comments) for the patterns those figures take and
 * names each file:line.
 *
 * Specified values stay: a default, a protocol limit, a backoff's doubling. The few that the
 * patterns below would catch are sizes; those are listed, each with what specifies it. A comment
 * that points at docs/PERFORMANCE.md (the report) or docs/performance-notes.md (the investigations
 * behind it) names a section that exists there.
 */

interface DiaryPattern {
  readonly name: string;
  readonly pattern: RegExp;
}

/** A number as prose writes it: `82`, `4.4`, `100,000`; never the tail of a word (`UTF-8`, `v1`). */
const NUMBER = String.raw`(?<![\w.-])\d(?:[\d.,]*\d)?`;

/** The shapes a measured figure takes in prose. Each is matched against a comment's text with JSDoc's ` * ` margins removed and its lines joined. */
const DIARY_PATTERNS: readonly DiaryPattern[] = [
  { name: 'time below a millisecond', pattern: new RegExp(String.raw`µs|${NUMBER}\s?(?:us|ns)\b`) },
  { name: 'size', pattern: new RegExp(String.raw`${NUMBER}\s?(?:[KMGT]i?B|kB)\b`) },
  { name: 'bytes', pattern: new RegExp(String.raw`${NUMBER}\s?(?:bytes?|B)\b`) },
  // "is measured from the write" defines a quantity; "measured: 82 bytes" reports one.
  { name: 'measured', pattern: /(?<!\b(?:is|are|be) )\bmeasured\b(?! from\b)|\bby measurement\b/i },
  { name: 'ratio', pattern: new RegExp(String.raw`(?!0x)${NUMBER}[×x](?![\w…])`) },
  { name: 'approximate figure', pattern: new RegExp(String.raw`[~≈]\s?\d(?:[\d.,]*\d)?`) },
  { name: 'percentile', pattern: /\bp(?:50|9\d)\b/ },
  { name: 'percentage gained or lost', pattern: new RegExp(String.raw`${NUMBER}\s?%\s(?:more|less|fewer|faster|slower|smaller|larger|lower|higher|cheaper|off)\b|\bby ${NUMBER}\s?%`) },
  { name: 'figures compared', pattern: new RegExp(String.raw`${NUMBER}\s?(?:%|ms|s|[KMG]i?B)?\s(?:against|vs\.?|versus)\s~?${NUMBER}`) },
  { name: 'ratio in words', pattern: /\b(?:took|takes|costs?) (?:about |roughly |almost )?(?:twice|half|a (?:third|quarter|fifth|sixth|tenth)|(?:\d+|two|three|four|five|ten) times)\b/ },
  { name: 'CPU time', pattern: new RegExp(String.raw`${NUMBER}\s?m?s of CPU\b`) },
];

/** Sizes that are specified, not measured: a comment may name them. Keep this list short. */
const SPECIFIED_SIZES: ReadonlyMap<string, string> = new Map([
  ['1.5 MiB', "etcd's default request limit (--max-request-bytes): the largest object the API server stores"],
  ['3 MiB', "the API server's request body limit; incrementalDecoding's default afterChars (sources/list.ts)"],
  ['64 MiB', 'the default longest watch line (sources/lineSplitter.ts, defaultMaxLineBytes)'],
  ['128 KiB', "the API server's gzip threshold (defaultGzipThresholdBytes), which the loopback server copies"],
  ['256 KiB', "incrementalDecoding's default batchChars (sources/list.ts)"],
  ['64 KiB', "the gunzip output piece transport.ts asks for (a socket read's size)"],
  ['200 bytes', 'the longest excerpt of an unfinished watch line in an error (sources/lineSplitter.ts)'],
]);

interface Finding {
  /** 1-based line of the match in the scanned text. */
  readonly line: number;
  readonly pattern: string;
  readonly match: string;
}

/** Every comment of a TypeScript source (line, block and JSDoc), with the 0-based offset where it starts. Strings, templates and regular expressions are code, not comments. */
function commentsOf(fileName: string, text: string): { readonly start: number; readonly text: string }[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const seen = new Set<number>();
  const comments: { start: number; text: string }[] = [];
  const collect = (ranges: ts.CommentRange[] | undefined): void => {
    for (const range of ranges ?? []) {
      if (seen.has(range.pos)) continue;
      seen.add(range.pos);
      comments.push({ start: range.pos, text: text.slice(range.pos, range.end) });
    }
  };
  // Comments are trivia before and after tokens; every token is a leaf of getChildren(). JSDoc
  // nodes are skipped: they lie inside a comment, whose text is collected whole.
  const visit = (node: ts.Node): void => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    const children = node.getChildren(source);
    if (children.length === 0) {
      collect(ts.getLeadingCommentRanges(text, node.pos));
      collect(ts.getTrailingCommentRanges(text, node.end));
    }
    for (const child of children) visit(child);
  };
  visit(source);
  return comments.sort((a, b) => a.start - b.start);
}

/**
 * The comments of a source with each run of `//` comments on consecutive lines joined into one, as
 * its reader reads it (a figure or a section's name may wrap from one line to the next).
 */
function joinedComments(fileName: string, text: string): { readonly start: number; readonly text: string }[] {
  const joined: { start: number; text: string }[] = [];
  for (const comment of commentsOf(fileName, text)) {
    const previous = joined[joined.length - 1];
    const between = previous === undefined ? '' : text.slice(previous.start + previous.text.length, comment.start);
    if (previous !== undefined && previous.text.startsWith('//') && comment.text.startsWith('//') && /^[ \t]*\r?\n[ \t]*$/.test(between)) {
      previous.text = text.slice(previous.start, comment.start + comment.text.length);
    } else {
      joined.push({ ...comment });
    }
  }
  return joined;
}

/**
 * Each comment as prose: markers and JSDoc margins stripped, lines joined with one space (a
 * figure may wrap), and a way back from an offset in that prose to the file's line.
 */
function proseOf(fileName: string, text: string): { readonly prose: string; readonly lineAt: (offset: number) => number }[] {
  return joinedComments(fileName, text).map((comment) => {
    const firstLine = text.slice(0, comment.start).split('\n').length;
    const lines = comment.text.split('\n').map((line) => line.replace(/^\s*(?:\/\*\*?|\*\/|\*(?!\/)|\/\/)?/, '').replace(/\*\/\s*$/, '').replace(/\s+/g, ' ').trim());
    const lineStarts: number[] = [];
    let prose = '';
    for (const line of lines) {
      lineStarts.push(prose.length);
      prose += `${line} `;
    }
    return { prose, lineAt: (offset: number) => firstLine + lineStarts.filter((start) => start <= offset).length - 1 };
  });
}

/** The figures in `text`'s comments, by line. */
function measuredFigures(fileName: string, text: string): Finding[] {
  const findings: Finding[] = [];
  for (const { prose, lineAt } of proseOf(fileName, text)) {
    for (const { name, pattern } of DIARY_PATTERNS) {
      for (const match of prose.matchAll(new RegExp(pattern.source, `${pattern.flags}g`))) {
        const found = match[0];
        if ((name === 'size' || name === 'bytes') && SPECIFIED_SIZES.has(found)) continue;
        findings.push({ line: lineAt(match.index ?? 0), pattern: name, match: found });
      }
    }
  }
  return findings.sort((a, b) => a.line - b.line);
}

/** The sections of a docs page a comment can point at: its headings and the bold words that open a paragraph or an item. */
function performanceSections(markdown: string): string[] {
  return markdown.split('\n').flatMap((line) => {
    const heading = /^#+\s+(.+)$/.exec(line);
    if (heading) return [heading[1]!.trim()];
    const lead = /^(?:[-*]\s+|\d+\.\s+)?\*\*(.+?)\*\*/.exec(line);
    return lead ? [lead[1]!.trim()] : [];
  });
}

/** The pages comments point at for figures, by the file name a comment cites. */
const FIGURE_PAGES = ['PERFORMANCE.md', 'performance-notes.md'] as const;

/**
 * `docs/PERFORMANCE.md, "Section"` (or `docs/performance-notes.md, "Section"`) references in
 * `text`'s comments whose section the cited page lacks (a name may be the start of a longer heading).
 */
function danglingSectionLinks(fileName: string, text: string, sections: Readonly<Record<string, readonly string[]>>): { readonly line: number; readonly section: string }[] {
  return proseOf(fileName, text).flatMap(({ prose, lineAt }) =>
    [...prose.matchAll(/(PERFORMANCE\.md|performance-notes\.md),? "([^"]+)"/g)]
      .filter((match) => !(sections[match[1]!] ?? []).some((section) => section.toLowerCase().startsWith(match[2]!.toLowerCase())))
      .map((match) => ({ line: lineAt(match.index ?? 0), section: `${match[1]!}, ${match[2]!}` })),
  );
}

const REPO = path.join(__dirname, '..', '..');

/** The TypeScript files of lib/ and of the apiserver package's sources (shipped code both), with their text. */
function libSources(): { readonly file: string; readonly text: string }[] {
  return [...typeScriptFiles('lib'), ...typeScriptFiles('apiserver/src')].map((file) => ({ file, text: readFileSync(path.join(REPO, file), 'utf8') }));
}

function typeScriptFiles(dir: string): string[] {
  return readdirSync(path.join(REPO, dir)).flatMap((entry) => {
    const relative = path.posix.join(dir, entry);
    if (statSync(path.join(REPO, relative)).isDirectory()) return typeScriptFiles(relative);
    return entry.endsWith('.ts') ? [relative] : [];
  });
}

const FIXTURE = `// A planted figure: this took ~18 µs on my laptop.
const label = '// 19 MB promoted per scavenge: a string, not a comment';
const template = \`/* 2.5× the CPU */ \${label}\`;
const pattern = /\\/\\/ 82 bytes per wake/;
/**
 * Retries after 800 ms, doubling to a 30 s cap. Lines up to 64 MiB.
 * Measured on one machine: the walk costs 0.36× the
 * parse, saves ~92
 * % of the bytes and cut peak RSS by 15 %.
 */
export const retry = [label, template, pattern]; // p99 3.5 ms here
/* 2^31 − 1 ms is the longest timer; gzip past 128 KiB; 3 MB pages */
// Latency is measured from the write; a walk that took twice the CPU, 1.3 ms against 0.004 ms.
`;

describe('the comment scanner', () => {
  it('finds figures in line, block and JSDoc comments, on the line each is written, and none in strings, templates or regular expressions', () => {
    expect(measuredFigures('fixture.ts', FIXTURE).map(({ line, pattern, match }) => `${line} ${pattern}: ${match}`)).toEqual([
      '1 time below a millisecond: µs',
      '1 approximate figure: ~18',
      '7 measured: Measured',
      '7 ratio: 0.36×',
      '8 approximate figure: ~92',
      '9 percentage gained or lost: by 15 %',
      '11 percentile: p99',
      '12 size: 3 MB',
      '13 figures compared: 1.3 ms against 0.004',
      '13 ratio in words: took twice',
    ]);
  });

  it('takes comments apart from code: strings that look like comments are not comments', () => {
    expect(commentsOf('fixture.ts', FIXTURE).map((comment) => comment.text.split('\n')[0])).toEqual([
      '// A planted figure: this took ~18 µs on my laptop.',
      '/**',
      '// p99 3.5 ms here',
      '/* 2^31 − 1 ms is the longest timer; gzip past 128 KiB; 3 MB pages */',
      '// Latency is measured from the write; a walk that took twice the CPU, 1.3 ms against 0.004 ms.',
    ]);
  });

  it('fails a planted figure in a copy of a real file, and passes the file without it', () => {
    const file = 'lib/sources/lineSplitter.ts';
    const text = readFileSync(path.join(REPO, file), 'utf8');
    expect(measuredFigures(file, text)).toEqual([]);
    const planted = text.replace('export const defaultMaxLineBytes', '// Splitting a 4.4 KB pod takes 2 µs.\nexport const defaultMaxLineBytes');
    expect(measuredFigures(file, planted).map((finding) => finding.pattern)).toEqual(['time below a millisecond', 'size']);
  });

  it('finds references to sections of docs/PERFORMANCE.md and the notes that do not exist, wrapped or not, in block and line comments', () => {
    const sections = performanceSections('# Performance\n## Lists in one response: the decoder\n**Freezing** (`freeze: true`): text\n- **a2**, the cheapest cache\n');
    expect(sections).toEqual(['Performance', 'Lists in one response: the decoder', 'Freezing', 'a2']);
    const pages = { 'PERFORMANCE.md': sections, 'performance-notes.md': ['Batches: what arrives together'] };
    const comment =
      '/** Why (docs/PERFORMANCE.md, "Lists in one response"); see docs/PERFORMANCE.md, "Freezing".\n * And docs/PERFORMANCE.md, "Structural\n * sharing". */\n' +
      '// docs/performance-notes.md, "Batches"; docs/performance-notes.md, "Freezing"\nexport const x = 1; // (docs/performance-notes.md, "Batches:\n// what arrives late")\n';
    expect(danglingSectionLinks('fixture.ts', comment, pages)).toEqual([
      { line: 2, section: 'PERFORMANCE.md, Structural sharing' },
      { line: 4, section: 'performance-notes.md, Freezing' },
      { line: 5, section: 'performance-notes.md, Batches: what arrives late' },
    ]);
  });
});

describe('comments in lib/', () => {
  it('point only at sections of docs/PERFORMANCE.md and docs/performance-notes.md that exist', () => {
    const pages = Object.fromEntries(FIGURE_PAGES.map((page) => [page, performanceSections(readFileSync(path.join(REPO, 'docs', page), 'utf8'))]));
    const dangling = libSources().flatMap(({ file, text }) =>
      danglingSectionLinks(file, text, pages).map(({ line, section }) => `${file}:${line} "${section}"`),
    );
    expect(dangling).toEqual([]);
  });

  it('carry no measured figures: state the rule, and link docs/PERFORMANCE.md for the numbers', () => {
    const sources = libSources();
    expect(sources.length).toBeGreaterThan(100);
    const findings = sources.flatMap(({ file, text }) => measuredFigures(file, text).map(({ line, pattern, match }) => `${file}:${line} (${pattern}: "${match}")`));
    expect(findings).toEqual([]);
  });
});
