// SPDX-License-Identifier: MIT
// Starts the headless Chromium that the slide tools measure and print with:
// Debian's chromium (or CHROME_PATH), driven by playwright-core from npm.
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

/** The browser executable: CHROME_PATH, or the first of the usual names on PATH. */
export function browserPath() {
  const candidates = [process.env.CHROME_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome'];
  const found = candidates.find((path) => path && existsSync(path));
  if (!found) {
    throw new Error('no Chromium found (Debian: apt-get install chromium; or set CHROME_PATH)');
  }
  return found;
}

/**
 * A headless Chromium with a fresh profile. It never reaches the network on
 * its own (no updates, no sync, no QUIC probes); as root it needs --no-sandbox.
 */
export async function launchBrowser() {
  return chromium.launch({
    executablePath: browserPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
