/**
 * One client's IdP metadata (an openid-client Configuration), fetched on first use and kept: an
 * hour later the next use starts a re-discovery in the background and keeps serving the last good
 * copy, which it keeps for as long as the IdP is down. A caller never waits for a re-discovery,
 * only for the first one (concurrent first uses share it).
 */
import { getJwksCache, setJwksCache } from 'openid-client';
import type { Configuration } from 'openid-client';
import type { Logger } from '../../shared/logger.js';
import type { IdpError } from '../types.js';

export interface DiscoveryOptions {
  /** Fetches the metadata and builds the Configuration; rejects with IdpError('unavailable'). */
  readonly discover: () => Promise<Configuration>;
  readonly now: () => number;
  /** How old the metadata may get before a use starts a background re-discovery. */
  readonly maxAgeMs: number;
  readonly logger: Logger;
}

/** The cache for one client; see the module comment. */
export class DiscoveryCache {
  #current: { config: Configuration; fetchedAt: number } | undefined;
  #first: Promise<Configuration> | undefined;
  #background: Promise<void> | undefined;

  constructor(private readonly options: DiscoveryOptions) {}

  /** The metadata: cached, or fetched now when there is none yet (rejects with IdpError). */
  get(): Promise<Configuration> {
    const current = this.#current;
    if (current !== undefined) {
      if (this.options.now() - current.fetchedAt >= this.options.maxAgeMs) this.#refreshInBackground(current);
      return Promise.resolve(current.config);
    }
    this.#first ??= this.options.discover().then(
      (config) => {
        this.#current = { config, fetchedAt: this.options.now() };
        this.#first = undefined;
        return config;
      },
      (err: unknown) => {
        this.#first = undefined;
        throw err;
      },
    );
    return this.#first;
  }

  /** Settles when a background re-discovery in progress (if any) has finished; for tests and shutdown. */
  async settled(): Promise<void> {
    await this.#background;
  }

  #refreshInBackground(stale: { config: Configuration; fetchedAt: number }): void {
    if (this.#background !== undefined) return;
    // A failed attempt waits a full interval too: a down IdP is asked at most once per interval.
    this.#current = { ...stale, fetchedAt: this.options.now() };
    this.#background = this.options
      .discover()
      .then((config) => {
        // Keep the keys already fetched: the JWKS cache belongs to the Configuration object.
        const jwks = getJwksCache(stale.config);
        if (jwks !== undefined) setJwksCache(config, jwks);
        this.#current = { config, fetchedAt: this.options.now() };
      })
      .catch((err: unknown) => {
        this.options.logger.warn(
          { reason: (err as IdpError).message },
          'IdP re-discovery failed; keeping the last good metadata',
        );
      })
      .finally(() => {
        this.#background = undefined;
      });
  }
}
