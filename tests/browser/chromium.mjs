// Debian's Chromium, headless, as this machine runs it: Playwright's own
// download does not work here, and without the background-networking flags
// Chromium's connections are refused by the closed network, many at a time.
import { chromium } from 'playwright-core';

export function launchChromium() {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}
