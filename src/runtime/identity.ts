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
}

/**
 * Derives signing key, session-handle key and JWKS from the config, remembering the last result
 * so a reload that keeps the same secrets keeps the same keys (and the same snapshot). With no
 * `shared_secret` (all-in-one), one is generated once per process and kept across reloads; a
 * warning says that sessions and assertion keys then change on restart.
 */
export class IdentityResolver {
  private generated: Buffer | undefined;
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
    };
    this.last = { material, identity };
    return identity;
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
