// A fan-out group compared in a real browser: Debian's chromium, driven by
// playwright-core, against a real fugue-web and fugued (tests/tests/e2e/web.rs
// started two stand-in agents with `fugue fanout`, each done, each with its
// file; the group's test passes for one and fails for the other). At a phone's
// size (390x844) the comparison fits; at a desktop's (1280x800) picking one
// merges it and, once the person says yes, discards the other.
import { launchChromium } from './chromium.mjs';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const URL_WITH_TOKEN = process.env.FUGUE_WEB_URL;
const ARTIFACTS = process.env.ARTIFACTS;
const MEMBER_PANE = process.env.MEMBER_PANE;
const DEADLINE = 20000;

for (const [name, value] of Object.entries({ FUGUE_WEB_URL: URL_WITH_TOKEN, ARTIFACTS, MEMBER_PANE })) {
  if (!value) throw new Error(`${name} is not set`);
}
mkdirSync(ARTIFACTS, { recursive: true });

let step = 'start';
const log = (text) => console.log(`[compare] ${text}`);
function begin(name) { step = name; log(name); }

async function waitFor(page, what, fn, arg) {
  await page.waitForFunction(fn, arg, { timeout: DEADLINE }).catch(async () => {
    const shown = await page.evaluate(() => (document.querySelector('#compare:not([hidden])') || document.body).innerText.slice(0, 2000));
    throw new Error(`${what}; shown: ${JSON.stringify(shown)}`);
  });
}

async function openCompare(page) {
  await page.goto(`${URL_WITH_TOKEN}&view=all`);
  await waitFor(page, 'the member\'s card offers Compare',
    (pane) => document.querySelector(`.pane-card[data-pane="${pane}"] button.compare`), MEMBER_PANE);
  await page.click(`.pane-card[data-pane="${MEMBER_PANE}"] button.compare`);
  await waitFor(page, 'both members, one test passed and one failed',
    () => {
      const cards = [...document.querySelectorAll('#compare .member')];
      const test = (name) => cards.find((c) => c.dataset.worktree === name)?.querySelector('.test')?.textContent || '';
      return cards.length === 2 && /^test: passed/.test(test('race-claude-1')) && /^test: failed \(exit 1\)/.test(test('race-codex-1'))
        && document.querySelector('#compare .member .output')?.textContent.includes('not mine: codex');
    });
}

const browser = await launchChromium();
const problems = [];
try {
  begin('phone: the comparison fits the width');
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const small = await phone.newPage();
  small.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await openCompare(small);
  const overflow = await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 0) throw new Error(`the page is ${overflow}px wider than the phone`);
  await small.screenshot({ path: path.join(ARTIFACTS, '14-compare-phone.png') });
  await phone.close();

  begin('desktop: pick the passing one; merged, and the other discarded after a yes');
  const desktop = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await desktop.newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await openCompare(page);
  await page.screenshot({ path: path.join(ARTIFACTS, '15-compare-desktop.png') });
  const questions = [];
  page.on('dialog', (d) => { questions.push(d.message()); d.accept(); });
  await page.click('#compare .member[data-worktree="race-claude-1"] button.pick');
  await waitFor(page, 'merged and discarded, said in the view',
    () => /^Merged fugue\/race-claude-1 into main: [0-9a-f]{12}; discarded race-codex-1$/.test(document.querySelector('#compare-head .said')?.textContent || ''));
  if (questions.length !== 2 || !questions[1].includes('Discard the other 1 worktree(s) (race-codex-1)')) {
    throw new Error(`the questions asked: ${JSON.stringify(questions)}`);
  }
  await page.screenshot({ path: path.join(ARTIFACTS, '16-picked-desktop.png') });
  if (problems.length) throw new Error(problems.join('\n'));
  log('all steps passed');
} catch (err) {
  console.error(`[compare] FAILED at "${step}": ${err.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
