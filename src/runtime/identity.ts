import { randomBytes } from 'node:crypto';
import type { Config } from '../config/types.js';
import { deriveGrpcCredential } from '../contract/grpc-credential.js';
import {
  deriveSigningKey,
  jwksOf,
  loadSigningKey,
  type SigningKey,
} from '../authorize/identity/signing-key.js';
import { SessionHandles } from '../session/handle.js';
import type { Logger } from '../shared/logger.js';

/** Key material the authorize service needs, derived from one config's secrets. */
export interface Identity {
  readonly signingKey: SigningKey;
  readonly handles: SessionHandles;
  readonly jwksJson: string;
  /** The gRPC credential Envoy presents to ADS and Check, derived from the same secret; secret. */
  readonly grpcCredential: string;
  /** The 32-byte shared secret itself (configured or generated), for the authenticate service's keys. */
  readonly sharedSecret: Buffer;
}

/**
 * Derives signing key, session-handle key and JWKS from the config, remembering the last result
 * so a reload that keeps the same secrets keeps the same keys (and the same snapshot). With no
 * `shared_secret` (all-in-one), one is generated once per process and kept across reloads; a
 * warning says that sessions and assertion keys then change on restart.
 */
export class IdentityResolver {
  private generated: Buffer | undefined;
  private generatedCookieSecret: Buffer | undefined;
  private last: { material: string; identity: Identity } | undefined;

  constructor(private readonly logger: Logger) {}

  resolve(config: Config): Identity {
    const sharedSecret = config.shared_secret?.reveal() ?? this.generatedSecret();
    const pem = config.signing_key?.pem.reveal();
    const material = `${sharedSecret.toString('base64')}\n${pem ?? ''}`;
    if (this.last?.material === material) return this.last.identity;
    const signingKey = pem === undefined ? deriveSigningKey(sharedSecret) : loadSigningKey(pem);
    const identity = {
      signingKey,
      handles: new SessionHandles(sharedSecret),
      jwksJson: JSON.stringify(jwksOf([signingKey])),
      grpcCredential: deriveGrpcCredential(sharedSecret),
      sharedSecret,
    };
    this.last = { material, identity };
    return identity;
  }

  /**
   * `cookie_secret`, or (all-in-one without one) a secret generated once per process and kept
   * across reloads, with a warning: sign-ins in progress fail after a restart.
   */
  cookieSecret(config: Config): Buffer {
    const configured = config.cookie_secret?.reveal();
    if (configured !== undefined) return configured;
    if (this.generatedCookieSecret === undefined) {
      this.generatedCookieSecret = randomBytes(32);
      this.logger.warn(
        {},
        'cookie_secret is not set: generated one for this process; sign-ins in progress fail after a restart',
      );
    }
    return this.generatedCookieSecret;
  }

  private generatedSecret(): Buffer {
    if (this.generated === undefined) {
      this.generated = randomBytes(32);
      this.logger.warn(
        {},
        'shared_secret is not set: generated one for this process; sessions and identity-assertion keys change on restart',
      );
    }
    return this.generated;
  }
}
