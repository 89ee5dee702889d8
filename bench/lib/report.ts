import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './child.js';

/** One target from the issue, with the measured value and whether it is met. */
export interface TargetCheck {
  readonly name: string;
  /** Human-readable limit, e.g. `< 500 ms`. */
  readonly target: string;
  readonly measured: number;
  readonly unit: string;
  /** null for numbers reported alongside a target but not themselves a target. */
  readonly pass: boolean | null;
  readonly note?: string;
}

/** Where and when a run happened, so result files can be compared with care. */
export interface RunEnvironment {
  readonly date: string;
  readonly node: string;
  readonly cpus: number;
  readonly cpuModel: string;
  readonly loadAverageAtStart: readonly number[];
  readonly gitCommit: string;
  readonly gitDirty: boolean;
}

export const RESULTS_DIR = join(REPO_ROOT, 'bench', 'results');

/** Describes this machine and checkout. */
export function runEnvironment(): RunEnvironment {
  const git = (...args: string[]): string => {
    try {
      return execFileSync('git', args, {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return '';
    }
  };
  return {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    loadAverageAtStart: loadavg().map((value) => Math.round(value * 100) / 100),
    gitCommit: git('rev-parse', '--short', 'HEAD') || 'unknown',
    gitDirty: git('status', '--porcelain', '--untracked-files=no') !== '',
  };
}

/** Writes `bench/results/<name>.json`. */
export function writeResultFile(name: string, content: unknown): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = join(RESULTS_DIR, `${name}.json`);
  writeFileSync(path, `${JSON.stringify(content, null, 2)}\n`);
  return path;
}

/** A Markdown table. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** A plain-text table for the terminal, columns padded to width. */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) =>
    Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
}

/** Formats a number for tables: integers as-is, else one decimal. */
export function fmt(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(1);
}
