import type { RouteSettings } from '../config/types.js';
import { shortHash } from '../shared/hash.js';

/**
 * A route's id: 16 hex characters over what identifies it (from, matcher, destinations with
 * weights), so reordering routes or editing their headers keeps names and Envoy stats stable.
 * It is `shortHash(routeIdentityText(route))`, but the text's UTF-8 bytes are written straight
 * into a reused buffer (`IdentityWriter`) instead of being built as a string: at 10,000 routes the
 * text's JSON-quoted pieces, concatenations and the flat copy hashing needs were ~6 MB of garbage
 * per cold build, 8% of all it allocates, which the build's young-generation collections paid for.
 */
export function routeId(route: RouteSettings): string {
  return shortHash(writeIdentity(route));
}

/**
 * What `routeId` hashes: the canonical JSON (`canonicalJson`) of `{from, prefix, path, regex, to}`,
 * in its sorted key order. Ids must never change: they name clusters and Envoy stats. Kept as the
 * readable statement of that text (tests check the byte writer against it).
 */
export function routeIdentityText(route: RouteSettings): string {
  let text = `{"from":${JSON.stringify(route.from_href)}`;
  if (route.path !== undefined) text += `,"path":${JSON.stringify(route.path)}`;
  if (route.prefix !== undefined) text += `,"prefix":${JSON.stringify(route.prefix)}`;
  if (route.regex !== undefined) text += `,"regex":${JSON.stringify(route.regex)}`;
  text += ',"to":[';
  for (let i = 0; i < route.to.length; i++) {
    text += `${i === 0 ? '' : ','}${JSON.stringify(destination(route.to[i] as RouteSettings['to'][number]))}`;
  }
  return `${text}]}`;
}

function destination({ href, weight }: RouteSettings['to'][number]): string {
  return weight === undefined ? href : `${href},${weight}`;
}

/** The UTF-8 bytes of `routeIdentityText(route)`, in a view of the shared buffer (valid until the next call). */
function writeIdentity(route: RouteSettings): Uint8Array {
  const out = writer;
  out.reset();
  out.ascii('{"from":');
  out.jsonString(route.from_href);
  if (route.path !== undefined) {
    out.ascii(',"path":');
    out.jsonString(route.path);
  }
  if (route.prefix !== undefined) {
    out.ascii(',"prefix":');
    out.jsonString(route.prefix);
  }
  if (route.regex !== undefined) {
    out.ascii(',"regex":');
    out.jsonString(route.regex);
  }
  out.ascii(',"to":[');
  for (let i = 0; i < route.to.length; i++) {
    const { href, weight } = route.to[i] as RouteSettings['to'][number];
    if (i > 0) out.ascii(',');
    out.jsonString(href, weight);
  }
  out.ascii(']}');
  return out.view();
}

/**
 * Appends UTF-8 bytes to one growing buffer. JSON strings of printable ASCII (every URL, nearly
 * every path) are copied a character at a time; any other string goes through `JSON.stringify`
 * and a UTF-8 write, so the bytes are always exactly those of the JSON text.
 */
class IdentityWriter {
  private bytes = Buffer.allocUnsafe(1024);
  private length = 0;
  /** `bytes.subarray(0, n)` per length n seen, so a hash input costs no allocation after warm-up. */
  private views: Uint8Array[] = [];

  reset(): void {
    this.length = 0;
  }

  /** Appends text known to be ASCII (the JSON punctuation and keys). */
  ascii(text: string): void {
    this.ensure(text.length);
    for (let i = 0; i < text.length; i++) this.bytes[this.length++] = text.charCodeAt(i);
  }

  /**
   * Appends `JSON.stringify(text)`, or with a weight `JSON.stringify(`${text},${weight}`)` (a
   * destination as the config wrote it).
   */
  jsonString(text: string, weight?: number): void {
    this.ensure(text.length + 24);
    const start = this.length;
    this.bytes[this.length++] = 0x22;
    if (this.copyPlain(text) && (weight === undefined || this.copyWeight(weight))) {
      this.bytes[this.length++] = 0x22;
      return;
    }
    this.length = start;
    const json = JSON.stringify(weight === undefined ? text : `${text},${weight}`);
    this.ensure(Buffer.byteLength(json));
    this.length += this.bytes.write(json, this.length, 'utf8');
  }

  /** Appends `,` and a whole, non-negative weight's decimal digits; false for any other number. */
  private copyWeight(weight: number): boolean {
    if (!Number.isSafeInteger(weight) || weight < 0) return false;
    this.bytes[this.length++] = 0x2c;
    let digits = 1;
    for (let rest = weight; rest >= 10; rest = Math.floor(rest / 10)) digits++;
    let rest = weight;
    for (let at = this.length + digits - 1; at >= this.length; at--) {
      this.bytes[at] = 0x30 + (rest % 10);
      rest = Math.floor(rest / 10);
    }
    this.length += digits;
    return true;
  }

  /** Copies `text` when every character stands for itself in JSON and in UTF-8; false (mid-way) otherwise. */
  private copyPlain(text: string): boolean {
    const bytes = this.bytes;
    let at = this.length;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code < 0x20 || code > 0x7e || code === 0x22 || code === 0x5c) return false;
      bytes[at++] = code;
    }
    this.length = at;
    return true;
  }

  /** The bytes written since `reset`. */
  view(): Uint8Array {
    if (this.length >= MAX_KEPT_VIEW) return this.bytes.subarray(0, this.length);
    let view = this.views[this.length];
    if (view === undefined) {
      view = this.bytes.subarray(0, this.length);
      this.views[this.length] = view;
    }
    return view;
  }

  private ensure(extra: number): void {
    if (this.length + extra <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + extra));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
    this.views = [];
  }
}

/** Views are kept for texts shorter than this (a route's is ~100-200 bytes); longer ones get their own. */
const MAX_KEPT_VIEW = 1024;

const writer = new IdentityWriter();
