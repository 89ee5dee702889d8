/**
 * One table of Cookie headers, run against both finders of the session cookie: the authorizer's
 * codec on the `cookie` library (test/unit/session/cookie-vectors.test.ts) and the credential strip
 * that Envoy runs on every request (test/integration/credential-strip.test.ts). Both must find the
 * session cookie by the same rules, or a spelling the authorizer accepts would reach an upstream.
 *
 * `HANDLE` stands for the session handle; the integration test puts a real one in its place.
 */
export const SESSION_COOKIE_NAME = '_portcullis';
export const HANDLE = 'HANDLE';

export interface CookieVector {
  readonly name: string;
  /** The Cookie header fields as the client sends them, one string per field. */
  readonly sent: readonly string[];
  /** The session handle the authorizer reads (the fields joined by `; `, as Envoy hands them on). */
  readonly session: string | undefined;
  /** Whether the authorizer sees a session cookie at all (an empty one too). */
  readonly hadSession: boolean;
  /**
   * Two different session cookies: the authorizer refuses the request (400) on a protected route
   * or its own endpoints (src/authorize/request-credentials.ts); a public upstream gets `forwarded`.
   */
  readonly conflicting?: true;
  /**
   * The one Cookie header an upstream of a public route gets, over HTTP/1.1 or HTTP/2 (Envoy joins
   * several fields with `; ` first); undefined when no cookie is left.
   */
  readonly forwarded: string | undefined;
}

export const COOKIE_VECTORS: readonly CookieVector[] = [
  {
    name: 'plain, beside another cookie',
    sent: [`theme=dark; _portcullis=${HANDLE}`],
    session: HANDLE,
    hadSession: true,
    forwarded: 'theme=dark',
  },
  {
    name: 'a space before the =',
    sent: [`_portcullis =${HANDLE}`],
    session: HANDLE,
    hadSession: true,
    forwarded: undefined,
  },
  {
    name: 'spaces around the name and the value',
    sent: [`a=1;   _portcullis  = ${HANDLE} ;b=2`],
    session: HANDLE,
    hadSession: true,
    forwarded: 'a=1; b=2',
  },
  {
    name: 'tabs around the name',
    sent: [`a=1;\t_portcullis\t=${HANDLE}`],
    session: HANDLE,
    hadSession: true,
    forwarded: 'a=1',
  },
  {
    name: '; with no space',
    sent: [`a=1;_portcullis=${HANDLE};b=2`],
    session: HANDLE,
    hadSession: true,
    forwarded: 'a=1; b=2',
  },
  {
    name: 'repeated: the first is read, the request refused, every one is removed',
    sent: [`_portcullis=${HANDLE}; a=1; _portcullis=second`],
    session: HANDLE,
    hadSession: true,
    conflicting: true,
    forwarded: 'a=1',
  },
  {
    name: 'an empty value is no handle but is still removed',
    sent: ['_portcullis=; a=1'],
    session: undefined,
    hadSession: true,
    forwarded: 'a=1',
  },
  {
    name: 'a quoted value is read with its quotes',
    sent: [`_portcullis="${HANDLE}"; a="q"`],
    session: `"${HANDLE}"`,
    hadSession: true,
    forwarded: 'a="q"',
  },
  {
    name: 'names differing only in case are other cookies (names are case-sensitive)',
    sent: ['_Portcullis=x; _PORTCULLIS=y'],
    session: undefined,
    hadSession: false,
    forwarded: '_Portcullis=x; _PORTCULLIS=y',
  },
  {
    name: 'longer names and a piece with no = are no session cookie',
    sent: ['_portcullis; _portcullis_csrf=1; x_portcullis=2'],
    session: undefined,
    hadSession: false,
    forwarded: '_portcullis; _portcullis_csrf=1; x_portcullis=2',
  },
  {
    name: 'empty pieces around the session cookie',
    sent: [`; ;_portcullis=${HANDLE};;`],
    session: HANDLE,
    hadSession: true,
    forwarded: undefined,
  },
  {
    name: 'names the library will not write (empty, inner space) stay, the session goes',
    sent: [`=x; a b=1; _portcullis=${HANDLE}`],
    session: HANDLE,
    hadSession: true,
    forwarded: '=x; a b=1',
  },
  {
    name: 'split over several Cookie fields (HTTP/2 sends crumbs)',
    sent: ['a=1', `_portcullis=${HANDLE}`, 'b=2'],
    session: HANDLE,
    hadSession: true,
    forwarded: 'a=1; b=2',
  },
  {
    name: 'split, a session cookie in two fields, one spaced',
    sent: [`a=1; _portcullis=${HANDLE}`, ' _portcullis =other; b=2'],
    session: HANDLE,
    hadSession: true,
    conflicting: true,
    forwarded: 'a=1; b=2',
  },
];

/** The decision token's cookie (contract/fast-path.ts `decisionCookieName` of the session cookie). */
export const DECISION_COOKIE_NAME = '_portcullis_dt';
export const DECISION_TOKEN = 'TOKEN';

/** A Cookie header with a decision token in it, and what an upstream gets of it. */
export interface DecisionCookieVector {
  readonly name: string;
  /** The Cookie header fields as the client sends them, one string per field. */
  readonly sent: readonly string[];
  /** The one Cookie header an upstream gets, or undefined when no cookie is left. */
  readonly forwarded: string | undefined;
}

/**
 * The decision cookie through the credential strip (test/integration/credential-strip.test.ts),
 * by the session cookie's rules: every spelling Envoy's jwt_authn could read a token from (it trims
 * the space before a name) goes, and more (space or tab on either side of the name, repeats, several
 * fields); other cookies, names that only look alike and pieces with no `=` stay.
 */
export const DECISION_COOKIE_VECTORS: readonly DecisionCookieVector[] = [
  { name: 'beside another', sent: [`theme=dark; _portcullis_dt=${DECISION_TOKEN}`], forwarded: 'theme=dark' },
  {
    name: 'beside the session cookie',
    sent: [`_portcullis=${HANDLE}; _portcullis_dt=${DECISION_TOKEN}; a=1`],
    forwarded: 'a=1',
  },
  { name: 'spaces around the name', sent: [` _portcullis_dt =${DECISION_TOKEN}; a=1`], forwarded: 'a=1' },
  { name: 'tabs around the name', sent: [`a=1;\t_portcullis_dt\t=${DECISION_TOKEN}`], forwarded: 'a=1' },
  {
    name: 'repeated',
    sent: [`_portcullis_dt=${DECISION_TOKEN}; a=1; _portcullis_dt=other`],
    forwarded: 'a=1',
  },
  { name: 'quoted', sent: [`_portcullis_dt="${DECISION_TOKEN}"`], forwarded: undefined },
  {
    name: 'names differing in case, longer names and a piece with no = stay',
    sent: ['_Portcullis_DT=x; _portcullis_dtx=1; x_portcullis_dt=2; _portcullis_dt'],
    forwarded: '_Portcullis_DT=x; _portcullis_dtx=1; x_portcullis_dt=2; _portcullis_dt',
  },
  {
    name: 'split over several Cookie fields',
    sent: ['a=1', `_portcullis_dt=${DECISION_TOKEN}`, 'b=2'],
    forwarded: 'a=1; b=2',
  },
];
