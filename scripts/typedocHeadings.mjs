// A TypeDoc plugin (typedoc.json, "plugin"): the docs site gives a heading the anchor GitHub gives
// it, so that the guides' links (`concepts.md#2-the-reflector-reflect`) work on the site as they
// do on GitHub and npm. TypeDoc makes a heading's anchor from its text without its code spans
// ("2. The reflector: `reflect()`" → `2-the-reflector`); GitHub keeps their text
// (`2-the-reflector-reflect`). So, in headings only, each code span is rendered as the same
// `<code>` around a plain text token, which TypeDoc's anchor then reads.
// spec/docs/docs.spec.ts checks that every anchor a page links to exists under both rules.
import { Application } from 'typedoc';

/** Turns the code spans of every heading into `<code>` + text + `</code>` tokens: same HTML, text TypeDoc's slugger reads. */
function codeSpansAsText(state) {
  const tokens = state.tokens;
  for (let i = 1; i < tokens.length; i++) {
    if (tokens[i].type !== 'inline' || tokens[i - 1].type !== 'heading_open') continue;
    tokens[i].children = (tokens[i].children ?? []).flatMap((child) => {
      if (child.type !== 'code_inline') return [child];
      const open = new state.Token('html_inline', '', 0);
      open.content = '<code>';
      const text = new state.Token('text', '', 0);
      text.content = child.content;
      const close = new state.Token('html_inline', '', 0);
      close.content = '</code>';
      return [open, text, close];
    });
  }
}

/** @param {Application} app */
export function load(app) {
  // Set once the options are read (bootstrap resets them after loading plugins); the renderer
  // reads markdownItLoader when it sets up its parser, at the start of rendering.
  app.on(Application.EVENT_BOOTSTRAP_END, () => {
    const previous = app.options.getValue('markdownItLoader');
    app.options.setValue('markdownItLoader', (parser) => {
      previous(parser);
      parser.core.ruler.after('inline', 'rx-informer-heading-code-spans', codeSpansAsText);
    });
  });
}
