// The Changes view in a real browser, at a desktop's size (1280x800) and a
// phone's (390x844): Debian's chromium, driven by playwright-core, against a
// real fugue-web and fugued (started by tests/tests/e2e/web.rs with two panes
// in worktrees of one repository: REVIEW_PANE's agent changed a.txt and added
// b.txt, uncommitted; MERGE_PANE committed c.txt).
//
// Every step waits on what the page shows, with a deadline; any failure throws
// and the process exits non-zero with the step that failed.
import { launchChromium } from './chromium.mjs';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const URL_WITH_TOKEN = process.env.FUGUE_WEB_URL;
const ARTIFACTS = process.env.ARTIFACTS;
const MERGE_PANE = process.env.MERGE_PANE;
const REVIEW_PANE = process.env.REVIEW_PANE;
const DEADLINE = 15000;

for (const [name, value] of Object.entries({ FUGUE_WEB_URL: URL_WITH_TOKEN, ARTIFACTS, MERGE_PANE, REVIEW_PANE })) {
  if (!value) throw new Error(`${name} is not set`);
}
mkdirSync(ARTIFACTS, { recursive: true });

let step = 'start';
const log = (text) => console.log(`[changes] ${text}`);
function begin(name) { step = name; log(name); }
// Cards by pane id: labels (session:index) move up when a pane is released.
const card = (pane) => `.pane-card[data-pane="${pane}"]`;

async function screenshot(page, name) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: false });
}

async function waitFor(page, what, fn, arg) {
  await page.waitForFunction(fn, arg, { timeout: DEADLINE }).catch(async () => {
    const shown = await page.evaluate(() => (document.querySelector('#changes:not([hidden])') || document.body).innerText.slice(0, 2000));
    const error = await page.evaluate(() => document.querySelector('#error:not([hidden])')?.textContent || '');
    throw new Error(`${what}; error box: ${JSON.stringify(error)}; shown: ${JSON.stringify(shown)}`);
  });
}

/// Opens the overview and the Changes view of `pane`.
async function openChanges(page, pane) {
  await page.goto(`${URL_WITH_TOKEN}&view=all`);
  await waitFor(page, `${pane}'s card offers its Changes`,
    (sel) => document.querySelector(`${sel} button.changes`), card(pane));
  await page.click(`${card(pane)} button.changes`);
  await waitFor(page, 'the Changes view with its files', () => document.querySelector('#changes .file'));
}

const browser = await launchChromium();
const problems = [];
try {
  const desktop = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await desktop.newPage();
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));

  begin('desktop: the review pane\'s Changes: files first, then hunks coloured by kind');
  await openChanges(page, REVIEW_PANE);
  await waitFor(page, 'a.txt and b.txt listed, +world added and hello kept',
    () => {
      const files = [...document.querySelectorAll('#changes .files a')].map((a) => a.textContent);
      const added = [...document.querySelectorAll('#changes tr.line.add td.code')].map((td) => td.textContent);
      return files.join(',') === 'a.txt,b.txt' && added.includes('+world') && added.includes('+new file')
        && document.querySelector('#changes tr.line.ctx td.code')?.textContent === ' hello';
    });
  const colours = await page.$$eval('#changes tr.line.add td.code, #changes tr.line.ctx td.code',
    (tds) => [...new Set(tds.map((td) => getComputedStyle(td).backgroundColor))]);
  if (colours.length < 2) throw new Error(`added and kept lines look alike: ${colours}`);
  await screenshot(page, '10-changes-desktop');

  begin('comment on the +world line and on the whole change, then send both');
  await page.click('#changes tr.line.add >> text=+world');
  await page.fill('#changes textarea', 'Say it twice.');
  await page.click('#changes .comment.editing button.save');
  await waitFor(page, 'the comment under its line, one to send',
    () => document.querySelector('#changes tr.comment-row')?.textContent.includes('Say it twice.')
      && document.querySelector('#changes button.send')?.textContent === 'Send 1 comment');
  await page.click('#changes .whole button.add-comment');
  await page.fill('#changes textarea', 'Add a test.');
  await page.click('#changes .comment.editing button.save');
  await screenshot(page, '11-comments-desktop');
  await page.click('#changes button.send');
  await waitFor(page, 'sent: the agent started its turn',
    () => /^Sent 2 comments: prompt submitted/.test(document.querySelector('#changes-head .said')?.textContent || '')
      && document.querySelector('#changes button.send').disabled);
  // What the agent got: one prompt, the line quoted with its comment.
  await waitFor(page, 'the agent working on the review prompt',
    async (pane) => {
      const read = await fetch(`/api/panes/${pane}/read?lines=200`).then((r) => r.json());
      return read.text.includes('Working on: Review comments on your changes')
        && read.text.includes('a.txt, line 2:') && read.text.includes('> +world')
        && read.text.includes('Say it twice.') && read.text.includes('On the change as a whole:');
    },
    REVIEW_PANE);

  begin('discard asks first: dismissed, nothing happens; accepted, the worktree goes');
  const dismissed = page.waitForEvent('dialog', { timeout: DEADLINE }).then((d) => d.dismiss());
  await page.click('#changes button.discard');
  await dismissed;
  if (await page.$('#changes[hidden]')) throw new Error('the view closed though discarding was refused');
  let asked = '';
  const accepted = page.waitForEvent('dialog', { timeout: DEADLINE }).then((d) => { asked = d.message(); return d.accept(); });
  await page.click('#changes button.discard');
  await accepted;
  await waitFor(page, 'discarded: the view closed, the notice says so',
    () => document.querySelector('#changes').hidden && /^Discarded fugue\//.test(document.querySelector('#notice').textContent));
  if (!/2 uncommitted file\(s\)/.test(asked)) throw new Error(`the question did not say what would be lost: ${asked}`);
  await desktop.close();

  begin('phone: the merge pane\'s Changes fit the width; merge asks, then lands');
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const small = await phone.newPage();
  small.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await openChanges(small, MERGE_PANE);
  await waitFor(small, 'c.txt added', () => document.querySelector('#changes .files a')?.textContent === 'c.txt');
  const overflow = await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 0) throw new Error(`the page is ${overflow}px wider than the phone`);
  const height = await small.$eval('#changes button.merge', (b) => b.getBoundingClientRect().height);
  if (height < 44) throw new Error(`the merge button is ${height}px high; a finger needs 44`);
  await screenshot(small, '12-changes-phone');
  const merging = small.waitForEvent('dialog', { timeout: DEADLINE }).then((d) => d.accept());
  await small.tap('#changes button.merge');
  await merging;
  await waitFor(small, 'merged, said in the view',
    () => /^Merged fugue\/\S+ \(1 commit\) into main: [0-9a-f]{12}$/.test(document.querySelector('#changes-head .said')?.textContent || ''));
  await screenshot(small, '13-merged-phone');
  if (problems.length) throw new Error(problems.join('\n'));
  log('all steps passed');
} catch (err) {
  console.error(`[changes] FAILED at "${step}": ${err.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
