// The overview of every session in a real browser at a phone's viewport
// (390x844): Debian's chromium, driven by playwright-core, against a real
// fugue-web and fugued (started by tests/tests/e2e/web.rs, which made a pane
// through the MCP bridge and an agent waiting for permission through the CLI).
//
// Every step waits on what the page shows, with a deadline; any failure throws
// and the process exits non-zero with the step that failed.
import { launchChromium } from './chromium.mjs';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const URL_WITH_TOKEN = process.env.FUGUE_WEB_URL;
const ARTIFACTS = process.env.ARTIFACTS;
const MCP_LABEL = process.env.MCP_LABEL;
const AGENT_LABEL = process.env.AGENT_LABEL;
const MCP_PANE = process.env.MCP_PANE;
const DEADLINE = 15000;

for (const [name, value] of Object.entries({ FUGUE_WEB_URL: URL_WITH_TOKEN, ARTIFACTS, MCP_LABEL, AGENT_LABEL, MCP_PANE })) {
  if (!value) throw new Error(`${name} is not set`);
}
mkdirSync(ARTIFACTS, { recursive: true });

let step = 'start';
const log = (text) => console.log(`[overview] ${text}`);
function begin(name) { step = name; log(name); }
const card = (label) => `.pane-card[data-label="${label}"]`;

async function screenshot(page, name) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

async function waitFor(page, what, fn, arg) {
  await page.waitForFunction(fn, arg, { timeout: DEADLINE }).catch(async () => {
    const cards = await page.$$eval('.pane-card', (els) => els.map((e) => e.innerText.replace(/\s+/g, ' ')));
    throw new Error(`${what}; cards: ${JSON.stringify(cards)}`);
  });
}

const browser = await launchChromium();
const problems = [];
try {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));

  begin('open the page on the overview: every session, the CLI-made agent and the MCP-made pane');
  await page.goto(`${URL_WITH_TOKEN}&view=all`);
  await waitFor(page, 'the MCP-made pane with its last line',
    (label) => document.querySelector(`.pane-card[data-label="${label}"] .last`)?.textContent.includes('from-mcp'),
    MCP_LABEL);
  await waitFor(page, 'the agent waiting, its prompt shown, needs-you first',
    (label) => {
      const cards = [...document.querySelectorAll('.pane-card')];
      const agent = document.querySelector(`.pane-card[data-label="${label}"]`);
      return agent && cards[0] === agent && agent.classList.contains('needs')
        && agent.querySelector('.prompt')?.textContent.includes('Do you want to proceed?')
        && agent.querySelector('button.approve') && agent.querySelector('button.deny');
    },
    AGENT_LABEL);
  const needs = await page.textContent('#needs');
  if (needs !== '1 needs you') throw new Error(`needs badge: ${needs}`);
  // Nothing wider than the phone: no sideways scrolling.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 0) throw new Error(`the page is ${overflow}px wider than the phone`);
  const buttonHeight = await page.$eval(`${card(AGENT_LABEL)} button.approve`, (b) => b.getBoundingClientRect().height);
  if (buttonHeight < 44) throw new Error(`the approve button is ${buttonHeight}px high; a finger needs 44`);
  await screenshot(page, '7-overview-phone');

  begin('approve from the overview: the prompt is answered by its id');
  await page.tap(`${card(AGENT_LABEL)} button.approve`);
  await waitFor(page, 'the card says approved and needs nothing',
    (label) => {
      const agent = document.querySelector(`.pane-card[data-label="${label}"]`);
      return agent && agent.querySelector('.said')?.textContent === 'approved' && !agent.querySelector('button.approve');
    },
    AGENT_LABEL);
  await screenshot(page, '8-approved-phone');

  begin('open the MCP-made pane as a tab: its terminal shows its output');
  await page.tap(`${card(MCP_LABEL)} button.open`);
  await waitFor(page, 'the opened tab and its terminal',
    (label) => [...document.querySelectorAll('#tabs .tab.opened .name')].some((n) => n.textContent === label)
      && document.querySelector('.terminal-view:not([hidden]) .xterm-rows')?.textContent.includes('from-mcp'),
    MCP_LABEL);
  await screenshot(page, '9-opened-phone');

  begin('back to the overview with the All button');
  await page.tap('#show-all');
  await page.waitForSelector('#overview:not([hidden])', { timeout: DEADLINE });

  begin('a notification\'s link (?pane=ID, the cookie logs in) opens that pane as a tab');
  const origin = new URL(URL_WITH_TOKEN).origin;
  await page.goto(`${origin}/?view=all&pane=${MCP_PANE}`);
  await waitFor(page, 'the linked pane opened',
    (label) => [...document.querySelectorAll('#tabs .tab.opened .name')].some((n) => n.textContent === label)
      && document.querySelector('.terminal-view:not([hidden]) .xterm-rows')?.textContent.includes('from-mcp'),
    MCP_LABEL);

  if (problems.length) throw new Error(problems.join('\n'));
  log('all steps passed');
} catch (err) {
  console.error(`[overview] FAILED at "${step}": ${err.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
