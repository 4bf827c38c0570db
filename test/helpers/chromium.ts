/**
 * Debian's Chromium for the browser tests (playwright-core drives it and never downloads a
 * browser): its path, the skip reason when it is missing (only outside CI: `.ci/run` installs
 * it, and under CI a missing browser is a failure), and one launch with the flags this machine
 * needs (no sandbox as root, no background network: only loopback is reachable).
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** `false` when Chromium is there, else why the browser tests are skipped (never under CI). */
export const chromiumSkip: string | false =
  !existsSync(CHROMIUM) && process.env.CI !== 'true'
    ? `${CHROMIUM} is not installed (this test runs whenever CI=true)`
    : false;

/** A headless Chromium; close it after the test. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
