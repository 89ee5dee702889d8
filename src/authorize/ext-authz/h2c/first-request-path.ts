import { FLAG_END_HEADERS, FRAME_CONTINUATION, FRAME_HEADERS } from './frame.js';
import { FrameSplitter } from './frame-splitter.js';
import { fieldValue, HpackDecoder } from './hpack-decoder.js';
import { headerBlockFragment } from './padding.js';

/** What the first bytes of a connection say: its first request's `:path`, not h2c, or not yet known. */
export type FirstRequest =
  | { readonly kind: 'path'; readonly path: string }
  | { readonly kind: 'not-h2c' }
  | { readonly kind: 'incomplete' };

const INCOMPLETE: FirstRequest = { kind: 'incomplete' };
const NOT_H2C: FirstRequest = { kind: 'not-h2c' };

/**
 * Reads the `:path` of the first request from the bytes a client sent so far: the preface, its
 * SETTINGS and other frames, then the first HEADERS block (with CONTINUATION), decoded with a
 * fresh HPACK decoder as the first block of a connection is. Pure: the bytes are not consumed, so
 * whoever serves the connection reads them again from byte 0. Anything that is not well-formed
 * h2c, or a first block without `:path`, is `not-h2c`.
 */
export function firstRequestPath(bytes: Buffer): FirstRequest {
  const splitter = new FrameSplitter();
  let fragments: Buffer[] | undefined;
  let result: FirstRequest = INCOMPLETE;
  try {
    splitter.push(bytes, (type, flags, _streamId, payload) => {
      if (result !== INCOMPLETE) return;
      if (fragments === undefined && type === FRAME_HEADERS)
        fragments = [headerBlockFragment(flags, payload)];
      else if (fragments !== undefined && type === FRAME_CONTINUATION) fragments.push(payload);
      else if (fragments !== undefined) result = NOT_H2C;
      if (fragments === undefined || !(flags & FLAG_END_HEADERS) || result !== INCOMPLETE) return;
      const block = Buffer.concat(fragments);
      const fields: string[] = [];
      new HpackDecoder().decode(block, 0, block.length, fields);
      const path = fieldValue(fields, ':path');
      result = path === undefined ? NOT_H2C : { kind: 'path', path };
    });
  } catch {
    return NOT_H2C;
  }
  return result;
}
