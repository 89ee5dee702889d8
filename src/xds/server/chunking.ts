/**
 * Wire-size arithmetic and the splitting of delta responses under `maxMessageBytes`.
 *
 * Sizes are computed from the protobuf encoding rules (https://protobuf.dev/programming-guides/encoding/)
 * instead of by encoding: every field Portcullis writes in a `DeltaDiscoveryResponse` and its
 * `Resource`s has a field number below 16, so its tag is one byte and a length-delimited field costs
 * `1 + varint(len) + len`. The estimate counts every field even when empty (protobufjs writes
 * present-but-default fields), so it is an upper bound of the real size, never below it.
 */

/** Bytes a non-negative integer takes as a base-128 varint. */
export function varintSize(value: number): number {
  let size = 1;
  let rest = value;
  while (rest >= 128) {
    rest = Math.floor(rest / 128);
    size += 1;
  }
  return size;
}

/** Bytes of a length-delimited field (field number < 16) whose payload is `length` bytes. */
export function delimitedSize(length: number): number {
  return 1 + varintSize(length) + length;
}

/** Bytes of a string field (field number < 16), counting UTF-8 bytes. */
export function stringFieldSize(value: string): number {
  return delimitedSize(Buffer.byteLength(value, 'utf8'));
}

/**
 * Bytes one `Resource{name, version, resource: Any{type_url, value}}` adds to a
 * `DeltaDiscoveryResponse` (its `resources` entry, tag and length prefix included).
 */
export function deltaResourceSize(
  name: string,
  version: string,
  typeUrl: string,
  valueLength: number,
): number {
  const any = stringFieldSize(typeUrl) + delimitedSize(valueLength);
  const resource = stringFieldSize(name) + stringFieldSize(version) + delimitedSize(any);
  return delimitedSize(resource);
}

/**
 * Bytes one resource adds to a SotW DiscoveryResponse: the `resources` Any (type URL and value).
 * Used to keep incremental (RDS/EDS) SotW responses under the message limit.
 */
export function sotwResourceSize(typeUrl: string, valueLength: number): number {
  return delimitedSize(stringFieldSize(typeUrl) + delimitedSize(valueLength));
}

/** Longest nonce the streams produce (a decimal counter below 2^53 has at most 16 digits). */
const MAX_NONCE_LENGTH = 20;

/**
 * Bytes of a response's fixed fields: `type_url`, the version (SotW `version_info`, delta
 * `system_version_info`) and the nonce; `maxMessageBytes` minus this is the budget for resources.
 */
export function responseHeaderSize(typeUrl: string, systemVersion: string): number {
  return stringFieldSize(typeUrl) + stringFieldSize(systemVersion) + delimitedSize(MAX_NONCE_LENGTH);
}

/**
 * Splits `items` into consecutive groups whose summed `sizeOf` stays within `budget`, keeping order.
 * An item larger than the budget on its own gets a group to itself (it cannot be split further; the
 * caller logs it). Returns no groups for no items.
 */
export function splitBySize<T>(items: readonly T[], budget: number, sizeOf: (item: T) => number): T[][] {
  const groups: T[][] = [];
  let current: T[] = [];
  let used = 0;
  for (const item of items) {
    const size = sizeOf(item);
    if (current.length > 0 && used + size > budget) {
      groups.push(current);
      current = [];
      used = 0;
    }
    current.push(item);
    used += size;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}
