// A tmux window's panes side by side in a real browser (Debian's chromium,
// playwright-core) against a real fugue-web and fugued: two panes made through
// `fugue tmux` (tests/tests/e2e/browser.rs made them, lead-here and mate-here).
// At a desktop's size the overview's Window button shows them in a grid, side
// by side; at a phone's size a link to the window shows one at a time, and the
// switcher shows the other.
//
// Every step waits on what the page shows, with a deadline; any failure throws
// and the process exits non-zero with the step that failed.
import { launchChromium } from './chromium.mjs';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const URL_WITH_TOKEN = process.env.FUGUE_WEB_URL;
const ARTIFACTS = process.env.ARTIFACTS;
const WINDOW = process.env.WINDOW;
const DEADLINE = 15000;
for (const [name, value] of Object.entries({ FUGUE_WEB_URL: URL_WITH_TOKEN, ARTIFACTS, WINDOW })) {
  if (!value) throw new Error(`${name} is not set`);
}
mkdirSync(ARTIFACTS, { recursive: true });

let step = 'start';
const log = (text) => console.log(`[window] ${text}`);
function begin(name) { step = name; log(name); }

async function screenshot(page, name) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

// The grid's terminals: whether each is shown, where, and what it reads.
const grid = () => [...document.querySelectorAll('#window-grid .terminal-view')].map((el) => {
  const box = el.getBoundingClientRect();
  return {
    shown: getComputedStyle(el).display !== 'none' && box.width > 0,
    left: box.left, top: box.top, width: box.width,
    text: el.querySelector('.xterm-rows')?.textContent ?? '',
  };
});

// Whether the grid shows `mode`: 'both' side by side, or only 'first' or 'second'.
function gridShows(mode) {
  const tiles = [...document.querySelectorAll('#window-grid .terminal-view')].map((el) => {
    const box = el.getBoundingClientRect();
    return {
      shown: getComputedStyle(el).display !== 'none' && box.width > 0,
      left: box.left, top: box.top, width: box.width,
      text: el.querySelector('.xterm-rows')?.textContent ?? '',
    };
  });
  if (tiles.length !== 2) return false;
  const [lead, mate] = tiles;
  const leadOk = lead.text.includes('lead-here');
  const mateOk = mate.text.includes('mate-here');
  switch (mode) {
    case 'both': return lead.shown && mate.shown && leadOk && mateOk
      && Math.abs(lead.top - mate.top) < 2 && mate.left >= lead.left + lead.width;
    case 'first': return lead.shown && !mate.shown && leadOk;
    default: return !lead.shown && mate.shown && mateOk;
  }
}

async function waitFor(page, what, fn, arg) {
  await page.waitForFunction(fn, arg, { timeout: DEADLINE }).catch(async (err) => {
    throw new Error(`${what} (${err.message.split('\n')[0]}); grid: ${JSON.stringify(await page.evaluate(grid))}`);
  });
}

const browser = await launchChromium();
const problems = [];
try {
  begin('desktop: the overview offers the window, and shows its panes side by side');
  const desktop = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  const page = await desktop.newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.goto(`${URL_WITH_TOKEN}&view=all`);
  await page.waitForSelector('.pane-card button.window', { timeout: DEADLINE });
  await page.click('.pane-card button.window');
  await waitFor(page, 'both panes shown, side by side, each its own output', gridShows, 'both');
  const title = await page.textContent('#window-title');
  if (!title.includes(WINDOW)) throw new Error(`the window's title says ${title}`);
  await screenshot(page, '13-window-desktop');
  await page.click('#window-close');
  await page.waitForSelector('#window', { state: 'hidden', timeout: DEADLINE });
  await desktop.close();

  begin('phone: a link to the window shows one pane at a time, and the switcher the other');
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const small = await phone.newPage();
  small.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  const origin = new URL(URL_WITH_TOKEN).origin;
  // The cookie from the desktop context is not here: log in with the token first.
  await small.goto(URL_WITH_TOKEN);
  await small.goto(`${origin}/?window=${encodeURIComponent(WINDOW)}`);
  await waitFor(small, 'the first pane alone', gridShows, 'first');
  const overflow = await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 0) throw new Error(`the page is ${overflow}px wider than the phone`);
  await screenshot(small, '14-window-phone');
  const picks = await small.$$('#window-switcher button');
  if (picks.length !== 2) throw new Error(`${picks.length} switcher buttons`);
  await picks[1].tap();
  await waitFor(small, 'the second pane alone', gridShows, 'second');
  await screenshot(small, '15-window-phone-switched');

  if (problems.length) throw new Error(problems.join('\n'));
  log('all steps passed');
} catch (err) {
  console.error(`[window] FAILED at "${step}": ${err.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
