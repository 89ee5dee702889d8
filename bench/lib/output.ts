import { writeFileSync } from 'node:fs';

/** Writes a child's result as JSON to the `--out` file its parent named. */
export function writeResult(args: Map<string, string>, result: unknown): void {
  const out = args.get('out');
  if (out === undefined) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  writeFileSync(out, JSON.stringify(result));
}

/** Calls `global.gc` (the child runs with `--expose-gc`) a few times, yielding in between. */
export async function collectGarbage(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with --expose-gc');
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
}
