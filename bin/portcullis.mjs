#!/usr/bin/env node
// The `portcullis` command. Runs the TypeScript sources through tsx, so a checkout works with no
// build step (`npx portcullis ...`).
import { register } from 'tsx/esm/api';

register();
await import('../src/cmd/main.ts');
