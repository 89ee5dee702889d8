import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';

/** One measured number against its budget. */
export interface Measurement {
  /** What was measured, e.g. `validate, 10,000 routes`. */
  readonly what: string;
  /** The budget, e.g. `< 2500 ms`, or `report` for a number without one. */
  readonly budget: string;
  readonly value: number;
  readonly unit: string;
  /** null for a number without a budget. */
  readonly pass: boolean | null;
  /** One line of context (the parts, the runs). */
  readonly detail: string;
}

/** What one suite hands back: its measurements and, for its JSON file, the raw runs. */
export interface SuiteResult {
  readonly name: string;
  /** How it was measured, in a sentence or two. */
  readonly how: string;
  readonly measurements: readonly Measurement[];
  readonly data: unknown;
}

/** Where and when a run happened. */
export interface RunEnvironment {
  readonly date: string;
  readonly node: string;
  readonly cpus: string;
  readonly loadAverageAtStart: readonly number[];
  /** Set when the suite has run: how busy the machine was meanwhile. */
  readonly loadAverageAtEnd?: readonly number[];
  readonly root: string;
  readonly commit: string;
  readonly quick: boolean;
}

/** The 1, 5 and 15 minute load averages, rounded. */
export function loadAverage(): number[] {
  return loadavg().map((value) => Math.round(value * 100) / 100);
}

/** Describes this machine and the measured checkout. */
export function runEnvironment(root: string, commit: string, quick: boolean): RunEnvironment {
  return {
    date: new Date().toISOString(),
    node: process.version,
    cpus: `${cpus().length} x ${cpus()[0]?.model ?? 'unknown'}`,
    loadAverageAtStart: loadAverage(),
    root,
    commit,
    quick,
  };
}

/** The file of one suite's latest result: how and where it ran, and what it measured. */
export interface SuiteFile extends SuiteResult {
  readonly environment: RunEnvironment;
}

/** Writes `<dir>/<name>.json`, replacing that suite's earlier result. */
export function writeSuiteFile(dir: string, environment: RunEnvironment, result: SuiteResult): void {
  mkdirSync(dir, { recursive: true });
  const file: SuiteFile = { environment, ...result };
  writeFileSync(join(dir, `${result.name}.json`), `${JSON.stringify(file, null, 2)}\n`);
}

/**
 * The latest result of each of `names` found in `dir`, in that order; other `.json` files (suites
 * that no longer exist) are removed, so the directory holds the latest results only.
 */
export function readSuiteFiles(dir: string, names: readonly string[]): SuiteFile[] {
  for (const file of readdirSync(dir))
    if (file.endsWith('.json') && !names.some((name) => file === `${name}.json`)) rmSync(join(dir, file));
  return names
    .filter((name) => existsSync(join(dir, `${name}.json`)))
    .map((name) => JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')) as SuiteFile);
}

/** A suite that failed, as a result with one failed line saying why. */
export function failedSuite(name: string, error: unknown): SuiteResult {
  const message = error instanceof Error ? error.message : String(error);
  return {
    name,
    how: 'failed',
    measurements: [
      { what: `${name}: failed`, budget: 'runs', value: NaN, unit: '', pass: false, detail: message },
    ],
    data: { error: message },
  };
}

/** A number for tables: integers as they are, else one decimal (two below 10). */
export function fmt(value: number): string {
  // A NaN (no value) comes back from a suite's JSON file as null.
  if (typeof value !== 'number' || Number.isNaN(value)) return '-';
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) < 10 ? value.toFixed(2) : value.toFixed(1);
}

function verdict(pass: boolean | null): string {
  return pass === null ? '' : pass ? 'pass' : 'MISSED';
}

/** `<dir>/summary.md`: one table line per measurement, then each line's detail. Returns the text. */
export function writeSummary(dir: string, files: readonly SuiteFile[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  const rows = files.flatMap((file) => file.measurements);
  const runs = files.map(({ name, environment: env }) =>
    [
      `- \`${name}\`: ${env.date}, ${env.root} at ${env.commit}, Node ${env.node}, ${env.cpus},`,
      `load ${env.loadAverageAtStart.join(' ')} at start, ${env.loadAverageAtEnd?.join(' ') ?? '?'} at end`,
      ...(env.quick ? ['(QUICK run, not for quoting)'] : []),
    ].join(' '),
  );
  const text = [
    '# Benchmarks: latest results',
    '',
    line(['measurement', 'budget', 'result', '']),
    line(['---', '---', '---', '---']),
    ...rows.map((row) => line([row.what, row.budget, `${fmt(row.value)} ${row.unit}`, verdict(row.pass)])),
    '',
    ...rows.map((row) => `- ${row.what}: ${row.detail}`),
    '',
    'Runs (medians; the machine is shared, so single runs vary):',
    '',
    ...runs,
    '',
    `Raw runs: ${files.map((file) => `\`${file.name}.json\``).join(', ')}.`,
    '',
  ].join('\n');
  writeFileSync(join(dir, 'summary.md'), text);
  return text;
}
