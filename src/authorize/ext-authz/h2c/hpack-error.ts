/**
 * A header block that cannot be decoded (RFC 7541 section 2.3.3 and 5): a bad index, a bad integer
 * or string, bad Huffman padding, a misplaced or oversized table size update. The HTTP/2 layer
 * answers it with a connection error COMPRESSION_ERROR (RFC 9113 section 4.3), because the
 * decoder state is no longer shared with the peer.
 */
export class HpackError extends Error {
  override readonly name = 'HpackError';
}
