/**
 * Opening the sign-in URL in the user's browser: `$BROWSER` when set (the common convention, and
 * how tests put a fake browser in), else the platform's opener: `open` on macOS, `rundll32
 * url.dll,FileProtocolHandler` on Windows, `xdg-open` elsewhere. Always argv, never a shell string,
 * so nothing in the URL is interpreted.
 */
import { spawn } from 'node:child_process';

/** Opens `url` in a browser; rejects when the opener cannot be started. */
export type BrowserOpener = (url: string) => Promise<void>;

/** The opener command and its arguments before the URL, for `env` and `platform`. */
export function openerCommand(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform,
): readonly [string, ...string[]] {
  const browser = env.BROWSER?.trim();
  if (browser !== undefined && browser !== '') return [browser];
  if (platform === 'darwin') return ['open'];
  if (platform === 'win32') return ['rundll32', 'url.dll,FileProtocolHandler'];
  return ['xdg-open'];
}

/**
 * A BrowserOpener running `openerCommand` detached (the browser outlives nothing of ours and we
 * do not wait for it): resolves once the process has started, rejects (ENOENT, ...) otherwise.
 */
export function systemBrowserOpener(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): BrowserOpener {
  const [command, ...args] = openerCommand(env, platform);
  return (url) =>
    new Promise((resolve, reject) => {
      const child = spawn(command, [...args, url], { stdio: 'ignore', detached: true, env });
      child.once('error', reject);
      child.once('spawn', () => {
        child.unref();
        resolve();
      });
    });
}
