/** Bits per radix pass: three passes cover a 32-bit word with a 2,048-entry count table. */
const RADIX_BITS = 11;
const RADIX = 1 << RADIX_BITS;

/**
 * The indexes 0..n-1 ordered by their keys, where index i's key is the unsigned 32-bit words
 * `words[0][i]`, `words[1][i]`, ... compared in that order (the first word most significant).
 * Equal keys keep index order (a stable sort). A least-significant-digit radix sort: three
 * counting passes per word over typed arrays, linear in n and touching nothing but the words, where
 * a comparison sort of n keys that live in objects or strings reads two of them per comparison,
 * n log n times, a cache miss each once there are tens of thousands.
 */
export function radixOrder(words: readonly Int32Array[], count: number): Int32Array {
  let order = new Int32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  let spare = new Int32Array(count);
  const counts = new Int32Array(RADIX);
  for (let w = words.length - 1; w >= 0; w--) {
    const word = words[w] as Int32Array;
    for (let shift = 0; shift < 32; shift += RADIX_BITS) {
      counts.fill(0);
      for (let i = 0; i < count; i++) {
        const digit = ((word[i] as number) >>> shift) & (RADIX - 1);
        counts[digit] = (counts[digit] as number) + 1;
      }
      let total = 0;
      for (let digit = 0; digit < RADIX; digit++) {
        const here = counts[digit] as number;
        counts[digit] = total;
        total += here;
      }
      for (let k = 0; k < count; k++) {
        const index = order[k] as number;
        const digit = ((word[index] as number) >>> shift) & (RADIX - 1);
        const at = counts[digit] as number;
        spare[at] = index;
        counts[digit] = at + 1;
      }
      [order, spare] = [spare, order];
    }
  }
  return order;
}

/**
 * Reorders each run of `order` whose keys are equal (`sameKey(a, b)` on neighbours) with
 * `compare`: what a radix sort by a key prefix leaves for the full comparison to settle.
 */
export function settleTies(
  order: Int32Array,
  sameKey: (a: number, b: number) => boolean,
  compare: (a: number, b: number) => number,
): void {
  for (let start = 0; start < order.length; ) {
    let end = start + 1;
    while (end < order.length && sameKey(order[start] as number, order[end] as number)) end++;
    if (end - start > 1) order.set(Array.from(order.subarray(start, end)).sort(compare), start);
    start = end;
  }
}
