/**
 * Sign-in settings for test and bench configs that have routes needing a user but where no one
 * signs in through an identity provider (sessions are written into the store, or requests are
 * denied): validation refuses such routes without sign-in (no hosted service exists). The IdP URL
 * is unreachable (port 9, discard) and never contacted: discovery happens on the first sign-in.
 * The authenticate host is used by no test route. One place, so no test repeats these lines.
 */

/** The authenticate service's URL: a host no test route uses. */
export const TEST_AUTHENTICATE_URL = 'https://authenticate.example.com';

/** The settings as a config object, to spread into a document: `{ ...SIGN_IN, routes }`. */
export const SIGN_IN: Readonly<Record<string, string>> = {
  authenticate_service_url: TEST_AUTHENTICATE_URL,
  idp_provider_url: 'http://127.0.0.1:9/',
  idp_client_id: 'portcullis-test',
  idp_client_secret: 'portcullis-test-secret',
};

/**
 * The same settings as top-level lines of a config file (each ending in a newline): `key: "v"` in
 * YAML, `key = "v"` in TOML (put them before any `[[routes]]` table), `key=v` in properties.
 */
export function signInLines(format: 'yaml' | 'toml' | 'properties'): string {
  const line = ([key, value]: [string, string]): string => {
    if (format === 'properties') return `${key}=${value}\n`;
    return `${key}${format === 'toml' ? ' =' : ':'} ${JSON.stringify(value)}\n`;
  };
  return Object.entries(SIGN_IN).map(line).join('');
}

/** `signInLines('yaml')`, the form most tests write. */
export const SIGN_IN_YAML: string = signInLines('yaml');
