// The tab bar in a real browser: Debian's chromium, driven by playwright-core,
// against a real fugue-web and fugued (started by tests/tests/web.rs, which
// passes the login URL, the CLI and its socket, and where to put screenshots).
//
// Every step waits on what the page or the daemon shows, with a deadline; any
// failure throws and the process exits non-zero with the step that failed.
import { launchChromium } from './chromium.mjs';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const URL_WITH_TOKEN = process.env.FUGUE_WEB_URL;
const FUGUE = process.env.FUGUE_BIN;
const SOCKET = process.env.FUGUE_SOCKET_PATH;
const ARTIFACTS = process.env.ARTIFACTS;
const PROJECT = process.env.PROJECT;
const FAKE_AGENT = process.env.FAKE_AGENT;
const DEADLINE = 15000;

for (const [name, value] of Object.entries({ FUGUE_WEB_URL: URL_WITH_TOKEN, FUGUE_BIN: FUGUE, FUGUE_SOCKET_PATH: SOCKET, ARTIFACTS, PROJECT, FAKE_AGENT })) {
  if (!value) throw new Error(`${name} is not set`);
}
mkdirSync(ARTIFACTS, { recursive: true });
const origin = new URL(URL_WITH_TOKEN).origin;
const token = new URL(URL_WITH_TOKEN).searchParams.get('token');
// view=tabs: the project starts with no tabs, which would open the overview.
const pageUrl = `${URL_WITH_TOKEN}&project=${encodeURIComponent(PROJECT)}&session=browser&view=tabs`;

const fugue = (...args) => execFileSync(FUGUE, ['--socket', SOCKET, ...args], { encoding: 'utf8' });

let step = 'start';
const log = (text) => console.log(`[browser] ${text}`);
function begin(name) { step = name; log(name); }

async function tabNames(page) {
  return page.$$eval('#tabs .tab .name, #tabs .tab input', (els) => els.map((e) => e.textContent || e.value));
}

async function waitTabNames(page, expected, what) {
  const want = JSON.stringify(expected);
  await page.waitForFunction(
    (want) => JSON.stringify([...document.querySelectorAll('#tabs .tab .name')].map((e) => e.textContent)) === want,
    want,
    { timeout: DEADLINE },
  ).catch(async () => { throw new Error(`${what}: tabs are ${JSON.stringify(await tabNames(page))}, want ${want}`); });
}

/// The tabs as the server has them, in order.
async function serverTabs() {
  const response = await fetch(`${origin}/api/terminal/sessions?project=${encodeURIComponent(PROJECT)}&session=browser`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (!response.ok) throw new Error(`listing tabs: ${response.status}`);
  return (await response.json()).sessions;
}

async function screenshot(page, name) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
}

const browser = await launchChromium();
const problems = [];
try {
  const context = await browser.newContext({ viewport: { width: 1100, height: 700 } });
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));

  begin('log in with the printed URL: the token becomes a cookie and leaves the address bar');
  await page.goto(pageUrl);
  await page.waitForSelector('#add', { timeout: DEADLINE });
  if (page.url().includes('token=')) throw new Error(`token still in the address: ${page.url()}`);
  const cookies = await context.cookies();
  const cookie = cookies.find((c) => c.name.startsWith('fugue_token_'));
  if (!cookie || !cookie.httpOnly || cookie.sameSite !== 'Strict') throw new Error(`cookie: ${JSON.stringify(cookies)}`);

  begin('add a tab and run echo in its terminal');
  await page.click('#add');
  await waitTabNames(page, ['Terminal 1'], 'after add');
  await page.waitForSelector('.terminal-view:not([hidden]) .xterm-rows', { timeout: DEADLINE });
  await page.click('.terminal-view:not([hidden]) .xterm-screen');
  await page.keyboard.type('echo hi-$((6*7))');
  await page.keyboard.press('Enter');
  await page.waitForFunction(
    () => [...document.querySelectorAll('.terminal-view:not([hidden]) .xterm-rows > div')].some((r) => r.textContent.trim() === 'hi-42'),
    null,
    { timeout: DEADLINE },
  ).catch(async () => {
    const rows = await page.$$eval('.terminal-view:not([hidden]) .xterm-rows > div', (els) => els.map((e) => e.textContent.trimEnd()).filter(Boolean));
    const tabs = await serverTabs();
    const pane = tabs.length ? fugue('read', tabs[0].id) : '(no tab on the server)';
    throw new Error(`hi-42 never showed; the page's rows: ${JSON.stringify(rows)}; the pane's output: ${JSON.stringify(pane)}`);
  });
  const first = (await serverTabs())[0];
  const read = fugue('read', first.id);
  if (!read.includes('hi-42')) throw new Error(`the pane's own output lacks hi-42: ${read}`);
  await screenshot(page, '1-echo');

  begin('a second and third tab from the keyboard (Alt+Shift+T)');
  await page.keyboard.press('Alt+Shift+T');
  await waitTabNames(page, ['Terminal 1', 'Terminal 2'], 'after Alt+Shift+T');
  await page.keyboard.press('Alt+Shift+T');
  await waitTabNames(page, ['Terminal 1', 'Terminal 2', 'Terminal 3'], 'after a second Alt+Shift+T');

  begin('rename by double-click');
  await page.dblclick('#tabs .tab:nth-child(1) .name');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('  build  ');
  await page.keyboard.press('Enter');
  await waitTabNames(page, ['build', 'Terminal 2', 'Terminal 3'], 'after rename');
  // The page draws the name it sent before the server has it (a CI run under
  // load read the list in between): ask until the server's list has it, within
  // the deadline.
  const renamedBy = Date.now() + DEADLINE;
  while ((await serverTabs())[0].name !== 'build') {
    if (Date.now() > renamedBy) throw new Error('the server did not keep the trimmed name');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  begin('rename from the keyboard (F2) to empty: becomes "Terminal"');
  await page.focus('#tabs .tab:nth-child(3)');
  await page.keyboard.press('F2');
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Backspace');
  await page.keyboard.press('Enter');
  await waitTabNames(page, ['build', 'Terminal 2', 'Terminal'], 'after keyboard rename');

  begin('drag the third tab to the front');
  // The bar is drawn again on every tab event (the rename's among them), which
  // replaces its elements: a drag that starts on a tab as it is replaced lands
  // nowhere (a CI run lost one so). The page moves a dropped tab at once, so
  // while the order is still the one before, the drag was lost: drag again,
  // within the deadline.
  const before = JSON.stringify(['build', 'Terminal 2', 'Terminal']);
  // The bar moves the tab at once and tells the server after (its PUT): the
  // server's order is read once that PUT has been answered (a CI run read it
  // in between). A lost drag sends none, so the first answer is the drop's.
  const reorderAnswered = page.waitForResponse(
    (r) => r.url().includes('/api/terminal/sessions/reorder') && r.request().method() === 'PUT',
    { timeout: DEADLINE },
  );
  const dragUntil = Date.now() + DEADLINE;
  for (;;) {
    // A tab measured while it is replaced has no box; measure until one is there.
    const box = await page.waitForFunction(() => {
      const tab = document.querySelector('#tabs .tab');
      const rect = tab && tab.getBoundingClientRect();
      return rect && rect.height > 0 ? { height: rect.height } : null;
    }, null, { timeout: DEADLINE }).then((handle) => handle.jsonValue());
    await page.dragAndDrop('#tabs .tab:nth-child(3)', '#tabs .tab:nth-child(1)', { targetPosition: { x: 3, y: box.height / 2 } });
    const moved = await page.waitForFunction(
      (before) => JSON.stringify([...document.querySelectorAll('#tabs .tab .name')].map((e) => e.textContent)) !== before,
      before,
      { timeout: 2000 },
    ).then(() => true, () => false);
    if (moved || Date.now() > dragUntil) break;
  }
  await waitTabNames(page, ['Terminal', 'build', 'Terminal 2'], 'after drag');
  await reorderAnswered;
  const order = (await serverTabs()).map((t) => t.name);
  if (JSON.stringify(order) !== JSON.stringify(['Terminal', 'build', 'Terminal 2'])) throw new Error(`server order ${order}`);

  begin('move a tab from the keyboard (Alt+Shift+Right)');
  await page.focus('#tabs .tab:nth-child(1)');
  await page.keyboard.press('Alt+Shift+ArrowRight');
  await waitTabNames(page, ['build', 'Terminal', 'Terminal 2'], 'after Alt+Shift+Right');
  await screenshot(page, '2-renamed-reordered');

  begin('a refused reorder is reverted and the error shown');
  await page.route('**/api/terminal/sessions/reorder*', async (route) => {
    // The page's own request, made invalid on its way: the real server refuses it.
    const body = JSON.parse(route.request().postData());
    body.orderedIds.push(body.orderedIds[0]);
    await route.continue({ postData: JSON.stringify(body) });
  });
  await page.focus('#tabs .tab:nth-child(3)');
  await page.keyboard.press('Alt+Shift+ArrowLeft');
  await page.waitForSelector('#error:not([hidden])', { timeout: DEADLINE });
  const error = await page.textContent('#error');
  if (!/Reorder refused, reverted: duplicate id/.test(error)) throw new Error(`error shown: ${error}`);
  await waitTabNames(page, ['build', 'Terminal', 'Terminal 2'], 'after the refused reorder');
  await screenshot(page, '3-refused-reorder');
  await page.unroute('**/api/terminal/sessions/reorder*');

  begin('an error quoting escape sequences shows them as text');
  // A refusal whose message quotes what a person typed, escapes and a bidi
  // override included: the page shows them escaped, as the CLI prints them.
  await page.route('**/api/terminal/sessions/reorder*', (route) => route.fulfill({
    status: 400,
    contentType: 'application/json',
    body: JSON.stringify({ message: 'pane not found: \'nope\u001b]0;PWNED\u0007\u202etxt\'' }),
  }));
  await page.focus('#tabs .tab:nth-child(3)');
  await page.keyboard.press('Alt+Shift+ArrowLeft');
  await page.waitForFunction(() => document.querySelector('#error').textContent.includes('PWNED'), null, { timeout: DEADLINE });
  const quoted = await page.textContent('#error');
  if (/[\u0000-\u001f\u202e]/.test(quoted) || !quoted.includes('nope\\x1b]0;PWNED\\x07\\u{202e}txt')) {
    throw new Error(`error shown raw: ${JSON.stringify(quoted)}`);
  }
  await waitTabNames(page, ['build', 'Terminal', 'Terminal 2'], 'after the second refused reorder');
  await page.unroute('**/api/terminal/sessions/reorder*');
  // The browser logs the refused request itself; that one is expected.
  const unexpected = problems.filter((p) => !p.includes('status of 400'));
  problems.length = 0;
  problems.push(...unexpected);

  begin('close a tab with the keyboard (Delete)');
  await page.focus('#tabs .tab:nth-child(2)');
  await page.keyboard.press('Delete');
  await waitTabNames(page, ['build', 'Terminal 2'], 'after Delete');

  begin('reload: the same tabs in the same order, the terminal still shows its output');
  await page.reload();
  await waitTabNames(page, ['build', 'Terminal 2'], 'after reload');
  await page.waitForFunction(
    () => [...document.querySelectorAll('.terminal-view:not([hidden]) .xterm-rows > div')].some((r) => r.textContent.trim() === 'hi-42'),
    null,
    { timeout: DEADLINE },
  );

  begin('a second browser sees a tab the CLI creates, without reloading');
  const other = await browser.newContext({ viewport: { width: 900, height: 500 } });
  const second = await other.newPage();
  second.on('pageerror', (e) => problems.push(`second page error: ${e.message}`));
  await second.goto(pageUrl);
  await waitTabNames(second, ['build', 'Terminal 2'], 'second browser at start');
  const session = (await serverTabs())[0].pane.session;
  fugue('run', '-s', session, '--title', 'from-cli', '--', 'sh');
  await waitTabNames(second, ['build', 'Terminal 2', 'from-cli'], 'second browser after the CLI');
  await waitTabNames(page, ['build', 'Terminal 2', 'from-cli'], 'first browser after the CLI');
  await screenshot(second, '4-second-browser');

  begin('the exit of a tab\'s shell shows on its tab');
  await page.click('#tabs .tab:nth-child(1)');
  await page.click('.terminal-view:not([hidden]) .xterm-screen');
  await page.keyboard.type('exit 3');
  await page.keyboard.press('Enter');
  await page.waitForFunction(
    () => document.querySelector('#tabs .tab:nth-child(1) .badge')?.textContent === 'exited code 3',
    null,
    { timeout: DEADLINE },
  );
  await screenshot(page, '5-exited');

  begin('an agent waiting for permission shows on its tab');
  fugue('run', '-s', session, '--title', 'agent', '--no-shell', '--', FAKE_AGENT, 'build it');
  await page.waitForFunction(
    () => [...document.querySelectorAll('#tabs .tab')].some((t) =>
      t.querySelector('.name')?.textContent === 'agent' && t.querySelector('.badge')?.textContent === 'claude: needs you'),
    null,
    { timeout: DEADLINE },
  );
  await screenshot(page, '6-agent-needs-you');

  begin('Shift+Enter reaches a program using the kitty keyboard protocol as Shift+Enter');
  // The program pushes kitty flags, then prints each byte it reads in hex.
  const reader = 'import os, tty\ntty.setraw(0)\nos.write(1, b"\\x1b[>1uready\\r\\n")\n'
    + 'while True:\n    b = os.read(0, 1)\n    os.write(1, b.hex().encode() + b" ")\n    if b in (b"x", b""):\n        break\nos.read(0, 1)\n';
  const keys = fugue('run', '-s', session, '--title', 'keys', '--no-shell', '--', 'python3', '-c', reader).trim();
  await page.locator('#tabs .tab', { hasText: 'keys' }).click();
  await page.waitForFunction(
    () => [...document.querySelectorAll('.terminal-view:not([hidden]) .xterm-rows > div')].some((r) => r.textContent.includes('ready')),
    null,
    { timeout: DEADLINE },
  );
  await page.click('.terminal-view:not([hidden]) .xterm-screen');
  await page.keyboard.press('Shift+Enter');
  await page.keyboard.press('x');
  const shiftEnter = '1b 5b 31 33 3b 32 75 78';
  const deadline = Date.now() + DEADLINE;
  while (!fugue('read', keys).includes(shiftEnter)) {
    if (Date.now() > deadline) throw new Error(`the program read: ${fugue('read', keys)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  if (problems.length) throw new Error(`the page reported problems:\n${problems.join('\n')}`);
  log('all steps passed');
} catch (err) {
  console.error(`[browser] FAILED at "${step}": ${err.message}`);
  if (problems.length) console.error(problems.join('\n'));
  process.exitCode = 1;
} finally {
  await browser.close();
}
