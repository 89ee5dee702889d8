// The refresher's test world: a clock whose timers run only when the test advances it, a fake
// ProviderClient whose refresh grants the test answers and counts, and a stored session of the
// memory record-store stack (two refreshers over one backend = two Portcullis instances).
import { randomBytes } from 'node:crypto';
import { SessionRefresher, type RefreshLease } from '../../../../src/authenticate/refresh/refresher.js';
import type { TimerHandle, Timers } from '../../../../src/authenticate/refresh/refresher.js';
import { sealTokens } from '../../../../src/session/session-tokens.js';
import type { ProviderClient, RefreshResult } from '../../../../src/authenticate/types.js';
import { MemoryBackend } from '../../../../src/databroker/memory-backend.js';
import type { Session, SessionStore } from '../../../../src/session/session.js';
import { recordingLogger } from '../../../../src/shared/logger.js';
import { memorySessionStore } from '../../../support/session-store.js';

export const START = Date.UTC(2026, 10, 25, 12);
export const MINUTE = 60_000;
export const IDP = 'idp-1';

/** A clock whose timers run only when the test advances it. */
export class FakeClock implements Timers {
  now = START;
  private readonly pending = new Set<{ at: number; run: () => void }>();
  setTimeout(run: () => void, ms: number): TimerHandle {
    const timer = { at: this.now + ms, run, unref: () => timer };
    this.pending.add(timer);
    return timer;
  }
  clearTimeout(handle: TimerHandle): void {
    this.pending.delete(handle as { at: number; run: () => void });
  }
  get timers(): number {
    return this.pending.size;
  }
  /** When each pending timer fires, in order. */
  get dueTimes(): number[] {
    return [...this.pending].map((timer) => timer.at).sort((a, b) => a - b);
  }
  /** When the earliest timer fires. */
  get next(): number | undefined {
    return Math.min(...[...this.pending].map((timer) => timer.at));
  }
  /** Moves to `time`, running every timer due on the way, in order. */
  advanceTo(time: number): void {
    for (;;) {
      const due = [...this.pending].filter((timer) => timer.at <= time).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.pending.delete(due);
      this.now = Math.max(this.now, due.at);
      due.run();
    }
    this.now = time;
  }
}

/** Lets pending I/O callbacks (WebCrypto) run until `condition` holds; bounded, no sleep. */
export async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 1_000 && !condition(); turn += 1)
    await new Promise((resolve) => setImmediate(resolve));
}

/** A provider whose refresh the test answers; `calls` counts refresh grants. */
export function provider(
  answer: (refreshToken: string) => Promise<RefreshResult>,
): ProviderClient & { calls: string[] } {
  const calls: string[] = [];
  const unused = () => Promise.reject(new Error('not used'));
  return {
    calls,
    config: {
      id: IDP,
      provider: 'oidc',
      providerUrl: undefined,
      clientId: 'c',
      clientSecret: 's',
      scopes: undefined,
      requestParams: {},
    },
    formPost: false,
    authorizationUrl: unused,
    exchangeCode: unused,
    refresh: (refreshToken) => {
      calls.push(refreshToken);
      return answer(refreshToken);
    },
    revoke: () => Promise.resolve(),
    endSessionUrl: () => Promise.resolve(undefined),
  };
}

export function result(clock: FakeClock, overrides: Partial<RefreshResult> = {}): RefreshResult {
  return {
    userId: 'user-1',
    claims: { sub: 'user-1', groups: ['new-group'] },
    emailVerified: true,
    accessToken: 'at-2',
    refreshToken: undefined,
    idToken: 'id-2',
    accessTokenExpiresAt: clock.now + 10 * MINUTE,
    idTokenExpiresAt: clock.now + 10 * MINUTE,
    ...overrides,
  };
}

/** Another refresher in `world` (another instance): its own store view, lease and provider. */
export function refresherIn(
  world: Pick<Awaited<ReturnType<typeof setup>>, 'clock' | 'secret' | 'logger'>,
  client: ProviderClient | undefined,
  options: { sessions: SessionStore; lease?: RefreshLease; random?: () => number },
): SessionRefresher {
  return new SessionRefresher({
    sessions: options.sessions,
    provider: (id) => (id === IDP ? client : undefined),
    sharedSecret: () => world.secret,
    now: () => world.clock.now,
    logger: world.logger,
    timers: world.clock,
    random: options.random ?? (() => 0.5),
    ...(options.lease === undefined ? {} : { lease: options.lease }),
  });
}

/**
 * A world with one stored, refreshable session (access token 5 min, ID token 10 min, session 14 h)
 * and a refresher over `sessions` (default: the world's store) with `client` for IDP.
 */
export async function setup(
  client: ProviderClient | undefined,
  random = () => 0.5,
  options: {
    sessions?: (store: SessionStore) => SessionStore;
    lease?: (backend: MemoryBackend) => RefreshLease;
  } = {},
) {
  const clock = new FakeClock();
  const backend = new MemoryBackend({ now: () => clock.now });
  const sessions = memorySessionStore({ now: () => clock.now, backend });
  const secret = new Uint8Array(randomBytes(32));
  const logger = recordingLogger();
  const refresher = refresherIn({ clock, secret, logger }, client, {
    sessions: options.sessions?.(sessions) ?? sessions,
    random,
    ...(options.lease === undefined ? {} : { lease: options.lease(backend) }),
  });
  const session: Session = {
    id: 'session-1',
    userId: 'user-1',
    email: 'ada@example.com',
    emailVerified: true,
    name: 'Ada',
    groups: ['old-group'],
    claims: { sub: 'user-1', email: 'ada@example.com', groups: ['old-group'] },
    issuedAt: clock.now,
    expiresAt: clock.now + 14 * 60 * MINUTE,
    idpId: IDP,
    tokens: await sealTokens(secret, 'session-1', {
      accessToken: 'at-1',
      refreshToken: 'rt-1',
      idToken: 'id-1',
      accessTokenExpiresAt: clock.now + 5 * MINUTE,
      idTokenExpiresAt: clock.now + 10 * MINUTE,
    }),
  };
  await sessions.put(session);
  return { clock, backend, sessions, secret, logger, refresher, session };
}
