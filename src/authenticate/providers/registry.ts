/**
 * The identity-provider clients of the running config, by id, kept across reloads: a reload whose
 * ProviderConfig for an id is unchanged (secret included) keeps that client, and with it its
 * discovered metadata and JWKS cache; a changed one is rebuilt; a removed one is dropped. This is
 * the explicit cache object DESIGN.md asks for (the runtime owns one per process).
 */
import { canonicalJson } from '../../shared/canonical-json.js';
import type { ProviderClient, ProviderConfig } from '../types.js';
import { createProviderClient } from './client.js';
import type { ProviderClientOptions } from './common.js';

/** What makes two ProviderConfigs the same client. */
function fingerprint(config: ProviderConfig): string {
  return canonicalJson({ ...config, providerUrl: config.providerUrl?.href });
}

/** See the module comment. */
export class ProviderRegistry {
  #clients = new Map<string, { readonly fingerprint: string; readonly client: ProviderClient }>();

  constructor(private readonly options: ProviderClientOptions = {}) {}

  /**
   * Makes the registry hold exactly `providers` (AuthenticateSettings.providers): unchanged
   * clients are kept, new or changed ones built. Throws, keeping the previous set, when a client
   * cannot be built (see createProviderClient).
   */
  update(providers: ReadonlyMap<string, ProviderConfig>): void {
    const next = new Map<string, { readonly fingerprint: string; readonly client: ProviderClient }>();
    for (const [id, config] of providers) {
      const print = fingerprint(config);
      const kept = this.#clients.get(id);
      next.set(
        id,
        kept?.fingerprint === print
          ? kept
          : { fingerprint: print, client: createProviderClient(config, this.options) },
      );
    }
    this.#clients = next;
  }

  /** The client for an identity-provider id (HandlerContext.provider), or undefined. */
  get(id: string): ProviderClient | undefined {
    return this.#clients.get(id)?.client;
  }
}
