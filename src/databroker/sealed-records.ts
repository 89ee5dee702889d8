import { deriveKey } from '../shared/key-schedule.js';
import { CompactEncrypt, compactDecrypt } from 'jose';
import type { Logger } from '../shared/logger.js';
import type { PutOptions, RecordBackend, RecordChange } from '../session/records.js';

/** A record as SealedRecords returns it: its value opened, with the backend's version and expiry. */
export interface OpenedRecord<T> {
  readonly id: string;
  readonly value: T;
  readonly version: number;
  readonly expiresAt: number | undefined;
}

/** What SealedRecords needs: the decoded `shared_secret` (read on every call, so reloads apply) and a logger. */
export interface SealedRecordsOptions {
  readonly secret: () => Uint8Array;
  readonly logger: Logger;
}

/** Distinct record ids whose failure to open is remembered (so each is logged once) before forgetting all. */
const MAX_REMEMBERED_FAILURES = 10_000;

/**
 * The record store with every value encrypted at rest, for every service: values go in as JSON
 * sealed with jose (compact JWE, `dir` + A256GCM) under a key derived with HKDF-SHA256 from
 * `shared_secret`, the record's type and id in the protected header (authenticated and checked on
 * open), so no backend, store dump or databroker process holds a token, email or claim in the clear,
 * and a value copied onto another record does not open. A record that does not open (another key,
 * moved, tampered, not JSON) is treated as absent and logged at warn once per record id, without
 * its value. Errors of the backend (StoreUnavailableError, RecordConflictError) pass through.
 */
export class SealedRecords {
  /** The backend below, for its owner (close) and for tests that read raw values. */
  readonly backend: RecordBackend;
  private readonly options: SealedRecordsOptions;
  private readonly failed = new Set<string>();
  private derived: { readonly secret: Uint8Array; readonly key: Uint8Array } | undefined;

  constructor(backend: RecordBackend, options: SealedRecordsOptions) {
    this.backend = backend;
    this.options = options;
  }

  /** The opened record, or undefined when absent, expired or not openable. */
  async get<T>(type: string, id: string): Promise<OpenedRecord<T> | undefined> {
    const raw = await this.backend.get(type, id);
    if (raw === undefined) return undefined;
    const value = await this.open<T>(type, id, raw.data);
    return value === undefined
      ? undefined
      : { id, value: value.value, version: raw.version, expiresAt: raw.expiresAt };
  }

  /** Seals `value` (JSON) and writes it; see RecordBackend.put for `options`. */
  async put<T>(type: string, id: string, value: T, options?: PutOptions): Promise<{ version: number }> {
    const data = await this.seal(type, id, value);
    const stored = await this.backend.put(type, id, data, options);
    return { version: stored.version };
  }

  /** Removes the record; true when it existed. */
  delete(type: string, id: string): Promise<boolean> {
    return this.backend.delete(type, id);
  }

  /** Live records of `type` that open (at most `limit` read; the ones that do not open are left out). */
  async query<T>(type: string, options?: { readonly limit?: number }): Promise<OpenedRecord<T>[]> {
    const raws = await this.backend.query(type, options);
    const opened = await Promise.all(
      raws.map(async (raw) => {
        const value = await this.open<T>(type, raw.id, raw.data);
        return value === undefined
          ? undefined
          : { id: raw.id, value: value.value, version: raw.version, expiresAt: raw.expiresAt };
      }),
    );
    return opened.filter((record): record is OpenedRecord<T> => record !== undefined);
  }

  /** The backend's change feed (ids and versions only; nothing sealed travels on it). */
  watch(listener: (change: RecordChange) => void): () => void {
    return this.backend.watch(listener);
  }

  acquireLease(name: string, ttlMs: number): Promise<string | undefined> {
    return this.backend.acquireLease(name, ttlMs);
  }

  releaseLease(name: string, token: string): Promise<void> {
    return this.backend.releaseLease(name, token);
  }

  ping(): Promise<void> {
    return this.backend.ping();
  }

  private async seal(type: string, id: string, value: unknown): Promise<string> {
    return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(value)))
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', rtype: type, rid: id })
      .encrypt(this.key());
  }

  /** `{ value }` when `data` opens as the record `type`/`id`; undefined (logged once per id) otherwise. */
  private async open<T>(type: string, id: string, data: string): Promise<{ value: T } | undefined> {
    try {
      const { plaintext, protectedHeader } = await compactDecrypt(data, this.key(), {
        keyManagementAlgorithms: ['dir'],
        contentEncryptionAlgorithms: ['A256GCM'],
      });
      if (protectedHeader.rtype !== type || protectedHeader.rid !== id) {
        throw new Error('the value was sealed for another record');
      }
      return { value: JSON.parse(new TextDecoder().decode(plaintext)) as T };
    } catch (err) {
      this.unopenable(type, id, err);
      return undefined;
    }
  }

  private unopenable(type: string, id: string, err: unknown): void {
    const key = `${type}/${id}`;
    if (this.failed.has(key)) return;
    if (this.failed.size >= MAX_REMEMBERED_FAILURES) this.failed.clear();
    this.failed.add(key);
    this.options.logger.warn(
      { type, id, reason: err instanceof Error ? err.name : 'unknown' },
      'a stored record does not open with this shared_secret (another key, tampered or moved); treated as absent',
    );
  }

  /** The records key of the current secret, derived again only when the secret changes. */
  private key(): Uint8Array {
    const secret = this.options.secret();
    if (this.derived?.secret !== secret) {
      this.derived = {
        secret,
        key: deriveKey(secret, 'databroker-records'),
      };
    }
    return this.derived.key;
  }
}
