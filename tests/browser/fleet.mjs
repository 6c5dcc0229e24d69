// The fleet in the overview: the page opens on the overview (no --project),
// and under it each endpoint the hosts file's sources find, with its panes
// (ENDPOINT's pane LABEL, with how to attach to it) or why it did not answer
// (SILENT). Driven by tests/tests/e2e/web.rs, which started the containers.
//
// Every step waits on what the page shows, with a deadline; a failure throws and
// the process exits non-zero naming the step.
import { launchChromium } from './chromium.mjs';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const LOGIN = process.env.FUGUE_WEB_URL;
const ARTIFACTS = process.env.ARTIFACTS;
const ENDPOINT = process.env.ENDPOINT;
const SILENT = process.env.SILENT;
const LABEL = process.env.LABEL;
const DEADLINE = 30000;
for (const [name, value] of Object.entries({ FUGUE_WEB_URL: LOGIN, ARTIFACTS, ENDPOINT, SILENT, LABEL })) {
  if (!value) throw new Error(`${name} is not set`);
}
mkdirSync(ARTIFACTS, { recursive: true });

let step = 'start';
function begin(name) { step = name; console.log(`[fleet] ${name}`); }

async function waitFor(page, what, fn, arg) {
  await page.waitForFunction(fn, arg, { timeout: DEADLINE }).catch(async () => {
    const seen = await page.evaluate(() => ({
      overview: !document.getElementById('overview').hidden,
      fleet: document.getElementById('fleet').hidden ? null : document.getElementById('fleet').innerText,
    }));
    throw new Error(`${what}; the page shows ${JSON.stringify(seen)}`);
  });
}

const browser = await launchChromium();
const problems = [];
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));

  begin('the overview shows the fleet, the answering endpoint with its pane');
  await page.goto(LOGIN);
  await waitFor(page, `${ENDPOINT}'s group with pane ${LABEL} and how to attach to it`,
    ([endpoint, label]) => {
      const group = document.querySelector(`.fleet-endpoint[data-endpoint="${endpoint}"]`);
      const card = group && group.querySelector(`.pane-card[data-label="${endpoint}/${label}"]`);
      return card && card.querySelector('.title').textContent === 'in-a-box'
        && card.querySelector('.attach-hint').textContent === `fugue --host ${endpoint} attach ${label}`;
    },
    [ENDPOINT, LABEL]);

  begin('the endpoint with no daemon says why, with no panes');
  await waitFor(page, `${SILENT}'s group with a reason`,
    (endpoint) => {
      const group = document.querySelector(`.fleet-endpoint[data-endpoint="${endpoint}"]`);
      return group && group.querySelector('.why') && group.querySelector('.why').textContent.length > 0
        && group.querySelectorAll('.pane-card').length === 0;
    },
    SILENT);
  await page.screenshot({ path: path.join(ARTIFACTS, '1-fleet-desktop.png'), fullPage: true });
  await context.close();
  if (problems.length) throw new Error(problems.join('\n'));
  console.log('[fleet] all steps passed');
} catch (err) {
  console.log(`[fleet] FAILED at "${step}": ${err.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
