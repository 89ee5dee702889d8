import type { IRSignIn } from '../ir/services.js';
import type { KeyRing } from '../keys/key-ring.js';
import type { AuthenticateSettings } from './types.js';

/**
 * The IR's sign-in settings and the key ring -> the settings the sign-in handlers run on. Secrets
 * are revealed here, at the one place they are handed to the code that uses them: the shared and
 * cookie secrets, and each identity provider's client secret (by provider id). Throws when a
 * provider has no secret in the ring (the ring and the IR come from one config, so never).
 */
export function signInSettings(signIn: IRSignIn, keys: KeyRing): AuthenticateSettings {
  return {
    authenticateUrl: new URL(signIn.authenticateUrl),
    callbackPath: signIn.callbackPath,
    cookie: signIn.cookie,
    cookieSecret: keys.cookieSecret,
    sharedSecret: keys.sharedSecret,
    programmaticRedirectDomains: signIn.programmaticRedirectDomains,
    signoutRedirectUrl:
      signIn.signoutRedirectUrl === undefined ? undefined : new URL(signIn.signoutRedirectUrl),
    providers: new Map(
      signIn.providers.map((provider) => {
        const secret = keys.idpClientSecrets.get(provider.id);
        if (secret === undefined) throw new Error(`identity provider ${provider.id} has no client secret`);
        return [
          provider.id,
          {
            ...provider,
            providerUrl: provider.providerUrl === undefined ? undefined : new URL(provider.providerUrl),
            clientSecret: secret.reveal(),
          },
        ];
      }),
    ),
  };
}
