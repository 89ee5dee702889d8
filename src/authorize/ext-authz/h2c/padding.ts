import { FLAG_PADDED, FLAG_PRIORITY, FRAME_SIZE_ERROR, H2ConnectionError, PROTOCOL_ERROR } from './frame.js';

/** PRIORITY fields in a HEADERS frame: exclusive bit + stream dependency (4) and weight (1). */
const PRIORITY_FIELDS = 5;

/** `payload` without its padding when PADDED is set (RFC 9113 sections 6.1 and 6.2). */
function unpad(flags: number, payload: Buffer, skip: number): Buffer {
  if (!(flags & FLAG_PADDED)) {
    if (payload.length < skip) throw new H2ConnectionError(FRAME_SIZE_ERROR, 'frame too short');
    return skip === 0 ? payload : payload.subarray(skip);
  }
  if (payload.length < 1 + skip) throw new H2ConnectionError(FRAME_SIZE_ERROR, 'padded frame too short');
  const padLength = payload[0] as number;
  if (padLength > payload.length - 1 - skip) {
    throw new H2ConnectionError(PROTOCOL_ERROR, 'padding longer than the frame payload');
  }
  return payload.subarray(1 + skip, payload.length - padLength);
}

/** A DATA frame's data, padding removed. */
export function dataPayload(flags: number, payload: Buffer): Buffer {
  return unpad(flags, payload, 0);
}

/** A HEADERS frame's header block fragment, padding and PRIORITY fields removed (priority is ignored). */
export function headerBlockFragment(flags: number, payload: Buffer): Buffer {
  return unpad(flags, payload, flags & FLAG_PRIORITY ? PRIORITY_FIELDS : 0);
}
