// The shared page shell: values are escaped unless they are markup, the document has the
// accessibility basics, and the strict CSP it is served with lets exactly its own stylesheet in.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import {
  PAGE_HEADERS,
  PALETTES,
  escapeHtml,
  html,
  rawHtml,
  renderPage,
} from '../../../src/shared/html-page.js';
import type { Palette } from '../../../src/shared/html-page.js';

test('escapeHtml escapes the five significant characters', () => {
  assert.equal(
    escapeHtml(`<a href="x" title='y'>&</a>`),
    '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
  );
});

test('html escapes every interpolated value except markup, arrays joined, undefined as nothing', () => {
  const evil = '<script>alert(1)</script>';
  const inner = html`<b>${evil}</b>`;
  const out = html`<p title="${evil}">${inner}${[evil, html`<i>${1}</i>`]}${undefined}</p>`.markup;
  assert.equal(
    out,
    '<p title="&lt;script&gt;alert(1)&lt;/script&gt;"><b>&lt;script&gt;alert(1)&lt;/script&gt;</b>' +
      '&lt;script&gt;alert(1)&lt;/script&gt;<i>1</i></p>',
  );
  assert.equal(html`${rawHtml('<hr>')}`.markup, '<hr>');
});

test('a page has lang, viewport, one h1 inside one main, a title, and no script', () => {
  const page = renderPage({ title: 'T <1>', heading: 'H & h', content: html`<p>body</p>` });
  assert.match(page, /^<!doctype html>/);
  assert.match(page, /<html lang="en">/);
  assert.match(page, /<meta name="viewport" content="width=device-width, initial-scale=1"/);
  assert.match(page, /<title>T &lt;1&gt; · Portcullis<\/title>/);
  assert.equal(page.match(/<h1>/g)?.length, 1);
  assert.equal(page.match(/<main>/g)?.length, 1);
  assert.match(page, /<main>\s*<h1>H &amp; h<\/h1>\s*<p>body<\/p>\s*<\/main>/);
  assert.doesNotMatch(page, /<script|<link|src=|url\(/i, 'no script and no external asset');
  assert.match(page, /prefers-color-scheme:dark/);
  assert.match(page, /:focus-visible\{outline:3px/);
});

test('the CSP allows nothing but the page stylesheet, by its exact hash', () => {
  const headers = new Map(PAGE_HEADERS);
  assert.equal(headers.get('content-type'), 'text/html; charset=utf-8');
  assert.equal(headers.get('cache-control'), 'no-store');
  const csp = headers.get('content-security-policy') ?? '';
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  const style = /<style>([\s\S]*?)<\/style>/.exec(renderPage({ title: 't', content: html`` }))?.[1];
  assert.ok(style !== undefined);
  const hash = createHash('sha256').update(style).digest('base64');
  assert.ok(csp.includes(`style-src 'sha256-${hash}'`), 'the hash covers the style element exactly');
});

/** WCAG 2 relative luminance of a #rrggbb colour. */
function luminance(hex: string): number {
  const channel = (offset: number): number => {
    const value = Number.parseInt(hex.slice(offset, offset + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

function contrast(a: string, b: string): number {
  const [high, low] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (high + 0.05) / (low + 0.05);
}

for (const [scheme, palette] of Object.entries(PALETTES) as [string, Palette][]) {
  test(`${scheme} colours: text pairs reach 4.5:1, the focus ring 3:1`, () => {
    const pairs: [string, string, string, number][] = [
      ['text on card', palette.fg, palette.card, 4.5],
      ['text on background', palette.fg, palette.bg, 4.5],
      ['muted text on card', palette.muted, palette.card, 4.5],
      ['link on card', palette.accent, palette.card, 4.5],
      ['link on background', palette.accent, palette.bg, 4.5],
      ['button label', palette.accentFg, palette.accent, 4.5],
      ['code text', palette.fg, palette.code, 4.5],
      ['focus ring on card', palette.focus, palette.card, 3],
    ];
    for (const [what, fg, bg, minimum] of pairs) {
      assert.ok(contrast(fg, bg) >= minimum, `${what}: ${contrast(fg, bg).toFixed(2)} < ${minimum}`);
    }
  });
}
