/**
 * The contract between Portcullis's HTTP server (server.ts: reads node:http requests, routes by
 * host and path) and its handlers (sign-in, callback, handoff, sign-out, user page, programmatic
 * login). Handlers are functions of an OwnRequest and the HandlerContext to an OwnResponse, so they
 * are tested without sockets, on a fake clock.
 */
import type { IR } from '../../ir/types.js';
import type { SessionStore } from '../../session/session.js';
import type { Logger } from '../../shared/logger.js';
import type { Telemetry } from '../../contract/telemetry.js';
import type { SpanStarter } from '../../shared/trace-context.js';
import type { AuthenticateSettings, ProviderClient } from '../types.js';

/** One request to Portcullis's own endpoints, decoded once by the server. */
export interface OwnRequest {
  readonly method: string;
  /**
   * The URL as the browser used it: scheme from `x-forwarded-proto` (set by Envoy), host and port
   * from the Host header, path and query.
   */
  readonly url: URL;
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** Cookies by name (the `cookie` library's parse; the first value of a repeated name). */
  readonly cookies: Readonly<Record<string, string | undefined>>;
  /** The `application/x-www-form-urlencoded` body of a POST (bounded), else undefined. */
  readonly form: URLSearchParams | undefined;
  /**
   * The session handle the request carried: the header ext_authz sets on Portcullis's own routes
   * (contract/endpoints.ts OWN_SESSION_HEADER), else the session cookie. Not yet verified.
   */
  readonly sessionHandle: string | undefined;
  /** Envoy's `x-request-id`, or one the server made; shown on error pages. */
  readonly requestId: string;
  /** True when the host is the authenticate service's (authenticate_service_url). */
  readonly onAuthenticateHost: boolean;
}

/** What a handler answers. */
export interface OwnResponse {
  readonly status: number;
  /** Response headers other than Set-Cookie. */
  readonly headers: readonly (readonly [string, string])[];
  /** Serialized Set-Cookie values (the `cookie` library's stringifySetCookie). */
  readonly setCookies: readonly string[];
  readonly body: string;
}

/** A route a URL reaches, as far as sign-in needs to know. */
export interface LocatedRoute {
  readonly routeId: string;
  /** The identity-provider client the route signs users in with. */
  readonly idpId: string;
  /**
   * Every origin (`scheme://host[:port]`, as URL.origin spells it) Portcullis serves the route on
   * under the located URL's host name (route-locator.ts): `from`'s port, the authenticate URL's
   * scheme and port, the listener's scheme and port.
   */
  readonly origins: readonly string[];
  /** The first of `origins`: where users reach the route, and a programmatic handoff goes. */
  readonly origin: string;
}

/**
 * Finds the configured route a URL would reach (host as Envoy matches it, then the route's path
 * matcher). Sign-in only redirects to URLs that reach a route: no open redirect. Envoy ignores the
 * port when matching, so `locate` does too; whether an origin is really one Portcullis serves is
 * the located route's `origins` (or `serves`), from config, never from a request's Host header.
 */
export interface RouteLocator {
  locate(url: URL): LocatedRoute | undefined;
  /**
   * True when `origin` (its scheme, host and effective port) is an origin Portcullis serves some
   * route of that host on: where a sign-in handoff may go and be redeemed.
   */
  serves(origin: URL): boolean;
}

/** Single-use ids (sign-in states, handoffs) remembered until they expire, across every instance. */
export interface ReplayGuard {
  /**
   * True the first time `id` is claimed before `expiresAt` (ms) by any instance; false for a
   * replay or an expired id. Rejects with StoreUnavailableError when the shared store cannot be
   * reached (never a claim then).
   */
  claim(id: string, expiresAt: number): Promise<boolean>;
}

/** Everything a handler may use; the current settings and routes are read once per request. */
export interface HandlerContext {
  readonly settings: () => AuthenticateSettings;
  /** The current config's IR (routes for the locator, cookie name, issuer format). */
  readonly routes: () => RouteLocator;
  readonly ir: () => IR;
  /** The client for an identity-provider id, or undefined when no such client is configured. */
  readonly provider: (idpId: string) => ProviderClient | undefined;
  readonly sessions: SessionStore;
  /** Issues and verifies session handles (session/handle.ts, keyed by shared_secret). */
  readonly handles: { issue(sessionId: string): string; verify(handle: string): string | undefined };
  readonly replay: ReplayGuard;
  readonly now: () => number;
  readonly randomId: () => string;
  readonly logger: Logger;
  /** Where sign-ins and sign-outs are counted (metrics); NO_TELEMETRY in tests and tools. */
  readonly telemetry: Telemetry;
  /** Traces the sign-in callback as a child of Envoy's span (traced.ts); absent: no spans. */
  readonly tracer?: SpanStarter;
}

/** A handler for one endpoint. */
export type OwnHandler = (request: OwnRequest, context: HandlerContext) => Promise<OwnResponse>;
