/**
 * What Envoy's access log and the processes that read it agree on. Compile writes the format
 * (xds/compile/access-log.ts), the authorizer fills the user keys (ext_authz dynamic metadata,
 * authorize/ext-authz/check-codec.ts), and the supervisor picks the lines out of Envoy's stdout
 * (envoy/log-lines.ts). They are services that must not import each other, so the names live here.
 */

/**
 * The key and value every access-log line carries, so a reader can tell a request line on
 * Envoy's stdout from anything else printed there.
 */
export const ACCESS_LOG_MARKER = { key: 'log', value: 'access' } as const;

/** The ext_authz dynamic-metadata keys holding the signed-in user's id and email. */
export const ACCESS_LOG_USER_KEYS = { id: 'user', email: 'email' } as const;

/**
 * The key that says who decided a request when the fast path is on, and its values: Envoy replayed
 * an allow from a decision token (`envoy`), or Portcullis did (`portcullis`: its ext_authz was
 * asked, or its config made the route public). JSON null for a request refused before any filter.
 */
export const ACCESS_LOG_DECIDED_BY = { key: 'decided_by', envoy: 'envoy', portcullis: 'portcullis' } as const;

/** The key holding the decision token's `sid` (a one-way digest of the session id) on fast-path lines. */
export const ACCESS_LOG_DECISION_SID = 'decision_sid';
