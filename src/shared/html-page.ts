import { createHash } from 'node:crypto';

/**
 * The one page shell every HTML page Portcullis answers uses (the authorizer's 401/403/404/500
 * pages and every authenticate page), so they share one look: a banner, one `main` landmark with
 * one `h1`, a system font stack, colours with at least 4.5:1 contrast in light and dark mode
 * (`prefers-color-scheme`), a visible focus ring, and no external assets or script, so the strict
 * Content-Security-Policy of `PAGE_HEADERS` holds.
 */

/**
 * Markup that is already safe to place in a page. Only `html` (which escapes every interpolated
 * value that is not itself Html) and `rawHtml` make one, so a value from a request, a claim or an
 * IdP can reach a page only escaped.
 */
export class Html {
  /** Use `html` or `rawHtml`; the constructor is public only so `instanceof` works across modules. */
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** `text` with the five HTML-significant characters escaped: safe in element content and quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

/** What `html` interpolates: Html as is, arrays joined, undefined as nothing, anything else escaped. */
export type HtmlValue = Html | string | number | undefined | readonly HtmlValue[];

function interpolate(value: HtmlValue): string {
  if (value instanceof Html) return value.markup;
  if (value === undefined) return '';
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(interpolate).join('');
  return escapeHtml(String(value));
}

/**
 * Tagged template for markup: the literal parts are trusted, every interpolated value is escaped
 * unless it is Html (see HtmlValue). Attribute values must be quoted in the template.
 */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): Html {
  let markup = strings[0] ?? '';
  values.forEach((value, index) => {
    markup += interpolate(value) + (strings[index + 1] ?? '');
  });
  return new Html(markup);
}

/** Wraps markup the caller vouches for (a constant); never pass request or IdP data. */
export function rawHtml(markup: string): Html {
  return new Html(markup);
}

/** One colour scheme of the shell; each text/background pair has at least 4.5:1 contrast (tested). */
export interface Palette {
  readonly bg: string;
  readonly fg: string;
  readonly muted: string;
  readonly card: string;
  readonly line: string;
  readonly accent: string;
  readonly accentFg: string;
  readonly code: string;
  readonly focus: string;
}

/** The light and dark (`prefers-color-scheme: dark`) colours of the shell, as 6-digit hex. */
export const PALETTES: { readonly light: Palette; readonly dark: Palette } = {
  light: {
    bg: '#f4f5f7',
    fg: '#1d2433',
    muted: '#4a5263',
    card: '#ffffff',
    line: '#d5d9e0',
    accent: '#5b3fb0',
    accentFg: '#ffffff',
    code: '#eceef3',
    focus: '#1f6feb',
  },
  dark: {
    bg: '#14161b',
    fg: '#e8eaf0',
    muted: '#b3b9c6',
    card: '#1e2129',
    line: '#3a3f4b',
    accent: '#b9a6f5',
    accentFg: '#14161b',
    code: '#2a2e38',
    focus: '#79b8ff',
  },
};

const variables = (palette: Palette): string =>
  Object.entries(palette)
    .map(([name, value]) => `--${name.replace(/[A-Z]/g, (upper) => `-${upper.toLowerCase()}`)}:${value}`)
    .join(';');

const STYLE = `:root{color-scheme:light dark;${variables(PALETTES.light)}}
@media (prefers-color-scheme:dark){:root{${variables(PALETTES.dark)}}}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--fg)}
header{padding:1rem 1.5rem}
.brand{margin:0;font-weight:700;letter-spacing:.08em;text-transform:uppercase;color:var(--accent)}
main{background:var(--card);border:1px solid var(--line);border-radius:12px;margin:1rem auto 3rem;padding:2rem 2.5rem;max-width:48rem;width:calc(100% - 2rem)}
h1{margin:0 0 1rem;font-size:1.6rem;line-height:1.25}
h2{font-size:1.15rem;margin:1.75rem 0 .5rem}
p{margin:.5rem 0}
.muted{color:var(--muted)}
a{color:var(--accent)}
code{background:var(--code);padding:.1rem .35rem;border-radius:4px;font-size:.9em;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%;font-size:.95rem}
caption{text-align:left;padding-bottom:.25rem}
th,td{text-align:left;vertical-align:top;padding:.4rem .6rem;border-bottom:1px solid var(--line);overflow-wrap:anywhere}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:0}
dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
ul{margin:.25rem 0;padding-left:1.25rem}
form{margin:1.5rem 0 0}
button,.button{display:inline-block;font:inherit;font-weight:600;padding:.55rem 1.1rem;border-radius:8px;border:0;background:var(--accent);color:var(--accent-fg);cursor:pointer;text-decoration:none}
a:focus-visible,button:focus-visible{outline:3px solid var(--focus);outline-offset:2px}`;

/**
 * Response headers for a page made by `renderPage`: HTML, never cached (pages show sessions and
 * request ids), and a Content-Security-Policy that allows nothing but the shell's own stylesheet
 * (by hash), so an injected tag could neither run nor load anything. `form-action` is left out on
 * purpose: browsers apply it to the redirect after a form post, and sign-out's POST redirects to
 * the identity provider's end-session endpoint.
 */
export const PAGE_HEADERS: readonly (readonly [string, string])[] = [
  ['content-type', 'text/html; charset=utf-8'],
  ['cache-control', 'no-store'],
  [
    'content-security-policy',
    `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; ` +
      "base-uri 'none'; frame-ancestors 'none'",
  ],
  ['x-content-type-options', 'nosniff'],
  ['referrer-policy', 'no-referrer'],
];

/** The style element exactly as hashed in the CSP (no whitespace around the rules). */
const STYLE_ELEMENT = rawHtml(`<style>${STYLE}</style>`);

/** What one page shows. */
export interface Page {
  /** The document title (Portcullis is appended) and, unless `heading` is given, the h1. */
  readonly title: string;
  readonly heading?: string;
  /** The content of `main` after the h1. */
  readonly content: Html;
}

/** The complete HTML document for `page` (serve it with PAGE_HEADERS). */
export function renderPage(page: Page): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        <title>${page.title} · Portcullis</title>
        ${STYLE_ELEMENT}
      </head>
      <body>
        <header><p class="brand">Portcullis</p></header>
        <main>
          <h1>${page.heading ?? page.title}</h1>
          ${page.content}
        </main>
      </body>
    </html> `.markup;
}
