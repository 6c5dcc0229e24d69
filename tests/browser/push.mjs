// The installable page on a phone (390x844) in Debian's Chromium: the "needs
// you" list, fugued's push delivered to the page's service worker with the
// DevTools protocol (ServiceWorker.deliverPushMessage, so no push service is
// needed), its notification's Approve run in the service worker, a replayed
// push that answers nothing, a tap that opens the pane, and the page offline.
// tests/tests/e2e/browser.rs started a fake agent waiting for permission and
// passes the push fugued sent for it (as web-push-testing decrypted it).
import { launchChromium } from './chromium.mjs';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const URL_WITH_TOKEN = process.env.FUGUE_WEB_URL;
const ARTIFACTS = process.env.ARTIFACTS;
const AGENT_LABEL = process.env.AGENT_LABEL;
const AGENT_PANE = process.env.AGENT_PANE;
const PUSH_PAYLOAD = process.env.PUSH_PAYLOAD;
const DEADLINE = 15000;

for (const [name, value] of Object.entries({ FUGUE_WEB_URL: URL_WITH_TOKEN, ARTIFACTS, AGENT_LABEL, AGENT_PANE, PUSH_PAYLOAD })) {
  if (!value) throw new Error(`${name} is not set`);
}
mkdirSync(ARTIFACTS, { recursive: true });
const origin = new URL(URL_WITH_TOKEN).origin;

let step = 'start';
const log = (text) => console.log(`[push] ${text}`);
function begin(name) { step = name; log(name); }

async function screenshot(page, name) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

async function waitFor(page, what, fn, arg) {
  await page.waitForFunction(fn, arg, { timeout: DEADLINE }).catch(async () => {
    const text = await page.evaluate(() => document.body.innerText.slice(0, 2000));
    throw new Error(`${what}; the page says: ${text}`);
  });
}

// The notifications the service worker shows now, as plain data.
async function notifications(page) {
  return page.evaluate(async () => {
    const registration = await navigator.serviceWorker.ready;
    const shown = await registration.getNotifications();
    return shown.map((n) => ({ title: n.title, body: n.body, tag: n.tag, actions: n.actions.map((a) => a.action), data: n.data }));
  });
}

async function until(what, fn) {
  const started = Date.now();
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() - started > DEADLINE) throw new Error(what);
    // Polled: the page cannot wait on another context's notifications.
    await new Promise((r) => setTimeout(r, 50));
  }
}

const browser = await launchChromium();
const problems = [];
try {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await context.grantPermissions(['notifications'], { origin });
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error' && !/Failed to load resource|ERR_INTERNET_DISCONNECTED/.test(m.text())) problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  const cdp = await context.newCDPSession(page);
  const registrations = [];
  cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => registrations.push(...e.registrations));
  await cdp.send('ServiceWorker.enable');

  begin('open on a phone: "needs you" is the first screen, the waiting agent first');
  await page.goto(URL_WITH_TOKEN);
  await waitFor(page, 'the needs-you list with the agent, Approve and Deny',
    (label) => {
      const list = document.querySelector('#needs-you');
      const first = document.querySelector('#overview-list > *');
      const card = list?.querySelector(`.pane-card[data-label="${label}"]`);
      return !document.querySelector('#overview').hidden && first === list && card
        && card.querySelector('button.approve') && card.querySelector('.since');
    },
    AGENT_LABEL);
  await screenshot(page, '1-needs-you-phone');

  begin('the service worker is installed and controls the page');
  await page.evaluate(async () => { await navigator.serviceWorker.ready; });
  const registration = await until('no service worker registration', () =>
    registrations.find((r) => r.scopeURL === `${origin}/` && !r.isDeleted));
  const manifest = await page.evaluate(async () => (await fetch('/manifest.webmanifest')).json());
  if (manifest.display !== 'standalone' || manifest.start_url !== '/' || manifest.icons.length !== 2) {
    throw new Error(`manifest: ${JSON.stringify(manifest)}`);
  }

  begin('fugued\'s push, delivered to the service worker: a notification with Approve and Deny');
  await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId: registration.registrationId, data: PUSH_PAYLOAD });
  const shown = await until('no notification', async () => (await notifications(page)).find((n) => n.tag === `fugue-${AGENT_PANE}`));
  if (shown.actions.join(',') !== 'approve,deny') throw new Error(`actions: ${JSON.stringify(shown)}`);
  if (!shown.title.includes('asks for permission')) throw new Error(`title: ${shown.title}`);
  log(`notification: ${shown.title} / ${shown.body}`);

  begin('Approve, run in the service worker: the prompt is answered');
  let worker = context.serviceWorkers()[0];
  if (!worker) worker = await context.waitForEvent('serviceworker', { timeout: DEADLINE });
  const click = (action, tag) => worker.evaluate(async ([action, tag]) => {
    const [n] = await self.registration.getNotifications({ tag });
    return self.fugue.clicked(n, action);
  }, [action, tag]);
  const approved = await click('approve', `fugue-${AGENT_PANE}`);
  if (approved.answer !== 'approved' || approved.already) throw new Error(`approve: ${JSON.stringify(approved)}`);
  const said = await until('no answer notification', async () => (await notifications(page)).find((n) => n.tag === `${AGENT_PANE}-answer`));
  if (said.body !== 'Approved') throw new Error(`the answer said: ${said.body}`);

  begin('the same push again: its Approve answers nothing');
  await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId: registration.registrationId, data: PUSH_PAYLOAD });
  await until('no second notification', async () => (await notifications(page)).find((n) => n.tag === `fugue-${AGENT_PANE}`));
  const replayed = await click('approve', `fugue-${AGENT_PANE}`);
  if (!String(replayed.message || '').includes('used already')) throw new Error(`replay: ${JSON.stringify(replayed)}`);

  begin('a tap opens the page on that pane');
  await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId: registration.registrationId, data: PUSH_PAYLOAD });
  await until('no third notification', async () => (await notifications(page)).find((n) => n.tag === `fugue-${AGENT_PANE}`));
  await click('', `fugue-${AGENT_PANE}`);
  await page.waitForURL((url) => url.searchParams.get('pane') === AGENT_PANE, { timeout: DEADLINE });
  await waitFor(page, 'the pane opened as a tab',
    (label) => [...document.querySelectorAll('#tabs .tab.opened .name')].some((n) => n.textContent === label)
      && document.querySelector('.terminal-view:not([hidden]) .xterm-rows')?.textContent.includes('approved'),
    AGENT_LABEL);
  await screenshot(page, '2-notification-target-phone');

  begin('offline: the installed page opens from its cache and says so');
  await context.setOffline(true);
  await page.reload();
  await waitFor(page, 'the offline notice', () => !document.querySelector('#offline').hidden);
  await screenshot(page, '3-offline-phone');
  await context.setOffline(false);

  if (problems.length) throw new Error(problems.join('\n'));
  log('all steps passed');
} catch (err) {
  console.error(`[push] FAILED at "${step}": ${err.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
