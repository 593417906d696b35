/**
 * Headings and links of Markdown pages, for checking that every link to `page.md#anchor` lands on
 * a heading. Anchors are made as GitHub (and npm, which follows it) makes them from a heading, so
 * that the links work where most readers read the pages; the docs site (TypeDoc) makes the same
 * ones (scripts/typedocHeadings.mjs) and fails `npm run docs` on a link whose anchor it lacks.
 */

/** The lines of a Markdown text that are prose: fenced code blocks blanked, so their `#` and `](` are not read. */
function proseLines(markdown: string): string[] {
  let fence: string | undefined;
  return markdown.split('\n').map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker !== undefined) {
      fence = marker;
      return '';
    }
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined;
      return '';
    }
    return line;
  });
}

/** A heading's text as rendered: code spans keep their text, links their label; emphasis and HTML go. */
export function headingText(markdown: string): string {
  return markdown
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`+([^`]*)`+/g, '$1')
    .replace(/(\*\*|__|\*)(.+?)\1/g, '$2')
    .trim();
}

/** GitHub's anchor for a heading's text (github-slugger): lower case; letters, marks, numbers, `_`, `-` and spaces kept; each space a `-`. */
export function githubSlug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a page: one per heading, a repeated one suffixed `-1`, `-2`, ... as GitHub does. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  for (const line of proseLines(markdown)) {
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (heading === null) continue;
    const base = githubSlug(headingText(heading[1] ?? ''));
    const seen = counts.get(base);
    counts.set(base, (seen ?? -1) + 1);
    anchors.add(seen === undefined ? base : `${base}-${seen + 1}`);
  }
  return anchors;
}

/** A link of a page: its target as written, split at `#`, and the line it is on (1-based). */
export interface MarkdownLink {
  readonly path: string;
  readonly anchor: string | undefined;
  readonly line: number;
}

/** The links of a page's prose (inline `[text](target)` links and images; code spans and blocks are not read). */
export function linksOf(markdown: string): MarkdownLink[] {
  const links: MarkdownLink[] = [];
  proseLines(markdown).forEach((line, index) => {
    const prose = line.replace(/`+[^`]*`+/g, '');
    for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = match[1] ?? '';
      const hash = target.indexOf('#');
      links.push({ path: hash < 0 ? target : target.slice(0, hash), anchor: hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1)), line: index + 1 });
    }
  });
  return links;
}
