// The installable page on a phone (390x844) in Debian's Chromium, with a
// push service (web-push-testing, started here on a free port) and an agent
// at rest (tests/tests/e2e/browser.rs's fake one, or a real Claude Code in
// tests/tests/agents.rs, everything then in the daemon's network namespace):
// - the page subscribes with fugued's key and registers the subscription;
// - the page sends the agent PROMPT, which asks for permission; fugued pushes,
//   and the push service decrypts it;
// - "needs you" is the first screen;
// - the push, delivered to the page's service worker with the DevTools
//   protocol (ServiceWorker.deliverPushMessage), shows Approve and Deny;
//   Approve, run in the service worker, answers the prompt; the same push
//   again answers nothing; a tap opens the pane;
// - offline, the page opens from its cache and says so.
import { launchChromium } from './chromium.mjs';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

const URL_WITH_TOKEN = process.env.FUGUE_WEB_URL;
const ARTIFACTS = process.env.ARTIFACTS;
const AGENT_LABEL = process.env.AGENT_LABEL;
const AGENT_PANE = process.env.AGENT_PANE;
const PROMPT = process.env.PROMPT;
// What the agent's tab shows once it went on (optional).
const AFTER_APPROVE = process.env.AFTER_APPROVE || '';
const DEADLINE = Number(process.env.DEADLINE_MS || 15000);

for (const [name, value] of Object.entries({ FUGUE_WEB_URL: URL_WITH_TOKEN, ARTIFACTS, AGENT_LABEL, AGENT_PANE, PROMPT })) {
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

// Delivers `payload` to the service worker until its notification shows: a
// delivery the DevTools protocol drops (the worker restarting) is sent again,
// at most four times.
async function deliver(page, cdp, registration, payload, tag) {
  for (let attempt = 1; ; attempt++) {
    await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId: registration.registrationId, data: payload });
    const started = Date.now();
    while (Date.now() - started < 3000) {
      const shown = (await notifications(page)).find((n) => n.tag === tag);
      if (shown) return shown;
      // Polled: the page cannot wait on the worker's notifications.
      await new Promise((r) => setTimeout(r, 50));
    }
    if (attempt === 4) throw new Error(`no notification after ${attempt} deliveries; shown: ${JSON.stringify(await notifications(page))}`);
    log(`delivery ${attempt} showed nothing; again`);
  }
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

// web-push-testing on a free port of this network namespace.
const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => { const { port } = probe.address(); probe.close(() => resolve(port)); });
});
const serverJs = new URL('./node_modules/web-push-testing/src/bin/server.js', import.meta.url).pathname;
const pushService = spawn(process.execPath, [serverJs, String(port)], { stdio: 'ignore' });
const service = `http://localhost:${port}`;
const post = async (route, body) => (await fetch(`${service}${route}`, {
  method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
})).json();
await until('web-push-testing did not start', () => fetch(`${service}/status`, { method: 'POST' }).then((r) => r.ok, () => false));

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

  begin('subscribe with fugued\'s key; the page registers the subscription; the agent is prompted');
  await page.goto(URL_WITH_TOKEN);
  await page.waitForFunction(() => document.querySelector('#where')?.textContent, null, { timeout: DEADLINE });
  const api = (method, route, body) => page.evaluate(async ([method, route, body]) => {
    const response = await fetch(route, { method, headers: { 'Content-Type': 'application/json' }, body: body && JSON.stringify(body) });
    return { status: response.status, body: await response.json() };
  }, [method, route, body]);
  const key = (await api('GET', '/api/push/vapid')).body.public_key;
  const subscription = (await post('/subscribe', { userVisibleOnly: 'true', applicationServerKey: key })).data;
  const kept = await api('POST', '/api/push/subscriptions', { endpoint: subscription.endpoint, keys: subscription.keys });
  if (kept.status !== 200) throw new Error(`subscription refused: ${JSON.stringify(kept)}`);
  const prompted = await api('POST', `/api/panes/${AGENT_PANE}/prompt`, { text: PROMPT });
  if (prompted.status !== 200) throw new Error(`prompt refused: ${JSON.stringify(prompted)}`);
  const pushed = await until('no push for the permission', async () => {
    const messages = (await post('/get-notifications', { clientHash: subscription.clientHash })).data.messages;
    return messages.map((m) => JSON.parse(m)).find((m) => m.event === 'permission');
  });
  const PUSH_PAYLOAD = JSON.stringify(pushed);
  log(`pushed: ${pushed.title} / ${pushed.body}`);

  begin('open on a phone: "needs you" is the first screen, the waiting agent first');
  await page.goto(new URL(URL_WITH_TOKEN).origin + '/');
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
  const tag = `fugue-${AGENT_PANE}`;
  const shown = await deliver(page, cdp, registration, PUSH_PAYLOAD, tag);
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
  await deliver(page, cdp, registration, PUSH_PAYLOAD, tag);
  const replayed = await click('approve', `fugue-${AGENT_PANE}`);
  if (!String(replayed.message || '').includes('used already')) throw new Error(`replay: ${JSON.stringify(replayed)}`);

  begin('a tap opens the page on that pane');
  await deliver(page, cdp, registration, PUSH_PAYLOAD, tag);
  await click('', `fugue-${AGENT_PANE}`);
  await page.waitForURL((url) => url.searchParams.get('pane') === AGENT_PANE, { timeout: DEADLINE });
  await waitFor(page, 'the pane opened as a tab',
    ({ label, after }) => [...document.querySelectorAll('#tabs .tab.opened .name')].some((n) => n.textContent === label)
      && document.querySelector('.terminal-view:not([hidden]) .xterm-rows')?.textContent.includes(after),
    { label: AGENT_LABEL, after: AFTER_APPROVE });
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
  pushService.kill();
}
