import type { IdpProvider } from '../../shared/idp-providers.js';

/** Built-in identity providers selected by `idp_provider` (shared/idp-providers.ts). */
export type IdpProviderName = IdpProvider;
