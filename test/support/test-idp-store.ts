import type { Adapter, AdapterPayload } from 'oidc-provider';

interface Entry {
  readonly payload: AdapterPayload;
  /** ms since epoch; Infinity when the model gave no lifetime. */
  readonly expiresAt: number;
}

/**
 * One test IdP's storage for oidc-provider (clients, sessions, grants, codes, tokens), owned by
 * that IdP instance: oidc-provider's own memory adapter shares one module-level store between
 * providers, and it cannot list tokens, which `revokeRefreshTokens` needs. Linear scans are fine
 * at test scale.
 */
export class TestIdpStore {
  readonly #entries = new Map<string, Entry>();

  /** The adapter factory oidc-provider's `adapter` option takes (one adapter per model name). */
  adapterFor = (model: string): Adapter => {
    const key = (id: string): string => `${model}:${id}`;
    const find = (id: string): AdapterPayload | undefined => this.#find(key(id));
    return {
      upsert: async (id, payload, expiresIn) => {
        const expiresAt = expiresIn === undefined ? Infinity : Date.now() + expiresIn * 1000;
        this.#entries.set(key(id), { payload: { ...payload }, expiresAt });
      },
      find: async (id) => find(id),
      findByUid: async (uid) => this.#findWhere(model, (p) => p.uid === uid)[0]?.payload,
      findByUserCode: async (code) => this.#findWhere(model, (p) => p.userCode === code)[0]?.payload,
      consume: async (id) => {
        const entry = this.#entries.get(key(id));
        if (entry !== undefined)
          this.#entries.set(key(id), {
            ...entry,
            payload: { ...entry.payload, consumed: Math.floor(Date.now() / 1000) },
          });
      },
      destroy: async (id) => {
        this.#entries.delete(key(id));
      },
      revokeByGrantId: async (grantId) => {
        for (const [k, entry] of this.#entries)
          if (entry.payload.grantId === grantId) this.#entries.delete(k);
      },
    };
  };

  /** Stores a client's metadata (oidc-provider finds clients through the `Client` model). */
  putClient(metadata: AdapterPayload & { client_id: string }): void {
    this.#entries.set(`Client:${metadata.client_id}`, { payload: metadata, expiresAt: Infinity });
  }

  /** Deletes every live refresh token of `accountId`; returns how many there were. */
  revokeRefreshTokens(accountId: string): number {
    const found = this.#findWhere('RefreshToken', (p) => p.accountId === accountId);
    for (const { key } of found) this.#entries.delete(key);
    return found.length;
  }

  #find(key: string): AdapterPayload | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.payload;
  }

  #findWhere(
    model: string,
    match: (payload: AdapterPayload) => boolean,
  ): { key: string; payload: AdapterPayload }[] {
    const found: { key: string; payload: AdapterPayload }[] = [];
    for (const key of [...this.#entries.keys()]) {
      if (!key.startsWith(`${model}:`)) continue;
      const payload = this.#find(key);
      if (payload !== undefined && match(payload)) found.push({ key, payload });
    }
    return found;
  }
}
