import { createHash } from 'node:crypto';
import { RECORD_TYPES, RecordConflictError, type RecordBackend } from '../../session/records.js';
import type { ReplayGuard } from '../http/types.js';

/**
 * The ReplayGuard of every deployment: single-use ids (sign-in states, handoffs) are claimed in
 * the shared record store with a put that succeeds only when the record is absent (`ifVersion: 0`)
 * and lives until the id's own expiry, so a state or handoff used at one instance is refused at
 * every other. The record id is the SHA-256 (base64url) of the id, so any length or charset fits
 * the backend's id rules and the store never holds the id itself. A store that cannot be reached
 * rejects with StoreUnavailableError (the caller answers "try again"; it never counts as a claim).
 */
export class RecordReplayGuard implements ReplayGuard {
  constructor(
    private readonly backend: RecordBackend,
    private readonly now: () => number,
  ) {}

  async claim(id: string, expiresAt: number): Promise<boolean> {
    const ttlMs = expiresAt - this.now();
    if (ttlMs <= 0) return false;
    const recordId = createHash('sha256').update(id).digest('base64url');
    try {
      await this.backend.put(RECORD_TYPES.used, recordId, '', { ttlMs, ifVersion: 0 });
      return true;
    } catch (error) {
      if (error instanceof RecordConflictError) return false;
      throw error;
    }
  }
}
