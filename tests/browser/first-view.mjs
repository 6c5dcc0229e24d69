// A fresh `fugue web` (no --project, no query string) opens on what runs: the
// overview of every session, at a phone's (390x844) and a desktop's (1280x800)
// viewport; a project's tab view says how many panes run elsewhere and opens
// the overview in one click. Driven by tests/tests/e2e/web.rs, which made panes
// of two sessions from the CLI and one tab in a project through the API.
//
// Every step waits on what the page shows, with a deadline; a failure throws and
// the process exits non-zero naming the step.
import { launchChromium } from './chromium.mjs';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const LOGIN = process.env.FUGUE_WEB_URL;
const ARTIFACTS = process.env.ARTIFACTS;
const LABELS = (process.env.LABELS || '').split(',').filter(Boolean);
const PROJECT = process.env.PROJECT;
const ELSEWHERE = process.env.ELSEWHERE;
const DEADLINE = 15000;
for (const [name, value] of Object.entries({ FUGUE_WEB_URL: LOGIN, ARTIFACTS, PROJECT, ELSEWHERE })) {
  if (!value) throw new Error(`${name} is not set`);
}
mkdirSync(ARTIFACTS, { recursive: true });

let step = 'start';
function begin(name) { step = name; console.log(`[first-view] ${name}`); }

async function waitFor(page, what, fn, arg) {
  await page.waitForFunction(fn, arg, { timeout: DEADLINE }).catch(async () => {
    const seen = await page.evaluate(() => ({
      overview: !document.getElementById('overview').hidden,
      cards: [...document.querySelectorAll('.pane-card')].map((e) => e.dataset.label),
      elsewhere: document.getElementById('elsewhere').hidden ? null : document.getElementById('elsewhere').textContent,
      empty: !document.getElementById('empty').hidden,
    }));
    throw new Error(`${what}; the page shows ${JSON.stringify(seen)}`);
  });
}

const browser = await launchChromium();
const problems = [];
try {
  for (const [name, viewport, mobile] of [['phone', { width: 390, height: 844 }, true], ['desktop', { width: 1280, height: 800 }, false]]) {
    const context = await browser.newContext({ viewport, isMobile: mobile, hasTouch: mobile });
    const page = await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));

    begin(`${name}: a fresh page opens on the overview, with both sessions' panes`);
    await page.goto(LOGIN);
    await waitFor(page, 'the overview, every CLI-made pane on it',
      (labels) => !document.getElementById('overview').hidden
        && labels.every((l) => document.querySelector(`.pane-card[data-label="${l}"]`)),
      LABELS);
    await page.screenshot({ path: path.join(ARTIFACTS, `1-first-view-${name}.png`), fullPage: true });

    begin(`${name}: a project's tab view says what runs elsewhere; one click opens the overview`);
    const tabs = `${new URL(LOGIN).origin}/?project=${encodeURIComponent(PROJECT)}&session=main`;
    await page.goto(tabs);
    await waitFor(page, `the tab view with "${ELSEWHERE}"`,
      (want) => document.getElementById('overview').hidden
        && document.querySelectorAll('#tabs [role="tab"]').length === 1
        && !document.getElementById('elsewhere').hidden
        && document.getElementById('elsewhere').textContent === want,
      ELSEWHERE);
    await page.screenshot({ path: path.join(ARTIFACTS, `2-tabs-elsewhere-${name}.png`), fullPage: true });
    await page.click('#elsewhere');
    await waitFor(page, 'the overview after the click',
      () => !document.getElementById('overview').hidden && document.getElementById('elsewhere').hidden);
    await context.close();
  }
  if (problems.length) throw new Error(problems.join('\n'));
  console.log('[first-view] all steps passed');
} catch (err) {
  console.log(`[first-view] FAILED at "${step}": ${err.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
