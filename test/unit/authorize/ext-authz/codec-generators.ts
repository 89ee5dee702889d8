// Seeded generators of CheckRequests and Decisions for the property tests that compare the
// hand-written codec with the protobufjs reference. Deterministic: a failing seed reproduces.
import type { Decision } from '../../../../src/authorize/decision.js';

/** A small deterministic PRNG (mulberry32), so failures name a reproducible seed. */
export class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(max: number): number {
    return Math.floor(this.next() * max);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
}

const ALPHABETS = [
  'abcdefghijklmnopqrstuvwxyz-',
  'ABCxyz0123456789 /?#&=%._~:;,',
  'éüß€日本語',
  '\u{1F600}\u{10348}a',
  '\u0000\u0001\u007f\t',
];

/** A string of 0..`max` characters from a random mix of ASCII, BMP and astral characters. */
export function randomString(random: Random, max = 40): string {
  const alphabet = [...random.pick(ALPHABETS)];
  let text = '';
  const length = random.chance(0.1) ? 0 : random.int(max + 1);
  for (let index = 0; index < length; index++) text += random.pick(alphabet);
  return text;
}

const ROUTE_IDS = ['0123456789abcdef', 'aaaaaaaaaaaaaaaa', 'not-a-route-id', '', 'ABCDEF0123456789'];
const PATHS = ['/', '/a/b', '/x?y=1', '/p?q=1#frag', '/p#frag?not-query', '?only', '#only', ''];

/** A CheckRequest as protobufjs `fromObject` input, with any part possibly missing. */
export function randomCheckRequestObject(random: Random): Record<string, unknown> {
  const headers: Record<string, string> = {};
  for (let count = random.int(6); count > 0; count--) {
    headers[random.pick(['cookie', 'x-request-id', 'accept', 'authorization', randomString(random, 8)])] =
      randomString(random, 60);
  }
  const http: Record<string, unknown> = {};
  if (random.chance(0.8)) http.id = randomString(random, 20);
  if (random.chance(0.9)) http.method = random.pick(['GET', 'POST', 'get', '']);
  if (random.chance(0.8)) http.headers = headers;
  if (random.chance(0.9)) http.path = random.chance(0.6) ? random.pick(PATHS) : randomString(random);
  if (random.chance(0.9)) http.host = randomString(random, 20);
  if (random.chance(0.9)) http.scheme = random.pick(['https', 'HTTP', 'Https', '']);
  if (random.chance(0.3)) http.query = random.pick(['', 'a=1', randomString(random, 10)]);
  if (random.chance(0.2)) http.protocol = 'HTTP/1.1';
  if (random.chance(0.2)) http.size = random.int(10_000);
  const attributes: Record<string, unknown> = {};
  if (random.chance(0.9)) attributes.request = random.chance(0.9) ? { http } : {};
  if (random.chance(0.8)) {
    const extensions: Record<string, string> = {};
    if (random.chance(0.9)) extensions.route_id = random.pick(ROUTE_IDS);
    if (random.chance(0.3)) extensions.other = randomString(random, 10);
    attributes.context_extensions = extensions;
  }
  if (random.chance(0.8)) {
    attributes.source = random.chance(0.9)
      ? {
          address: random.chance(0.9)
            ? { socket_address: { address: random.pick(['10.0.0.1', '::1', '']), port_value: 5555 } }
            : { pipe: { path: '/tmp/sock' } },
          principal: random.chance(0.3) ? 'spiffe://x' : '',
        }
      : {};
  }
  if (random.chance(0.3)) {
    attributes.destination = { address: { socket_address: { address: '127.0.0.1', port_value: 443 } } };
  }
  if (random.chance(0.2)) attributes.tls_session = { sni: randomString(random, 10) };
  return random.chance(0.95) ? { attributes } : {};
}

const header = (random: Random): [string, string] => [
  random.pick(['x-portcullis-jwt-assertion', 'location', 'content-type', randomString(random, 12)]),
  random.chance(0.2) ? 'e'.repeat(random.int(3000)) : randomString(random, 80),
];

/** A Decision of either kind with random headers, reasons, status and body. */
export function randomDecision(random: Random): Decision {
  const headers = Array.from({ length: random.int(5) }, () => header(random));
  const reasons = random.chance(0.2) ? [] : [randomString(random, 30)];
  if (random.chance(0.5)) {
    return {
      kind: 'allow',
      setHeaders: headers,
      removeHeaders: Array.from({ length: random.int(4) }, () => randomString(random, 15)),
      reasons,
    };
  }
  return {
    kind: 'deny',
    status: random.pick([302, 401, 403, 404, 503, 200, 0, 65535, 100_000, -1]),
    headers,
    body: random.chance(0.2) ? '<html>'.repeat(random.int(2000)) : randomString(random, 200),
    reasons,
  };
}
