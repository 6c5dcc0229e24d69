// Pairing a phone in Debian's Chromium: a desktop page (logged in with the
// printed URL) shows a pairing code from its Phone panel; a phone (390x844,
// a browser context of its own: no cookie) opens the code's URL and asks to
// pair; the desktop page confirms; the phone is in, with a credential of its
// own; the desktop page revokes it, and the phone is out.
import { launchChromium } from './chromium.mjs';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const URL_WITH_TOKEN = process.env.FUGUE_WEB_URL;
const ARTIFACTS = process.env.ARTIFACTS;
const DEADLINE = 15000;
for (const [name, value] of Object.entries({ FUGUE_WEB_URL: URL_WITH_TOKEN, ARTIFACTS })) {
  if (!value) throw new Error(`${name} is not set`);
}
mkdirSync(ARTIFACTS, { recursive: true });

let step = 'start';
const log = (text) => console.log(`[pair] ${text}`);
function begin(name) { step = name; log(name); }
const shot = (page, name) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
async function waitFor(page, what, fn, arg) {
  await page.waitForFunction(fn, arg, { timeout: DEADLINE }).catch(async () => {
    throw new Error(`${what}; the page says: ${await page.evaluate(() => document.body.innerText.slice(0, 1500))}`);
  });
}

const browser = await launchChromium();
const problems = [];
try {
  const desk = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const phone = await (await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, userAgent: 'Mozilla/5.0 (Linux; Android 15; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Mobile Safari/537.36' })).newPage();
  for (const page of [desk, phone]) page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));

  begin('the desktop page shows a pairing code from its Phone panel');
  await desk.goto(URL_WITH_TOKEN);
  await waitFor(desk, 'the page started', () => document.querySelector('#where')?.textContent);
  await desk.click('#phone-button');
  await desk.click('#pair-new');
  await waitFor(desk, 'the QR code and its URL', () => document.querySelector('#pair-qr')?.src.startsWith('data:image/svg+xml')
    && document.querySelector('#pair-url').textContent.includes('/pair#'));
  const text = await desk.textContent('#pair-url');
  const pairUrl = text.match(/https?:\/\/\S+\/pair#[0-9a-f]+/)[0];
  await shot(desk, '1-pairing-code-desktop');

  begin('the phone opens the code\'s URL and asks to pair');
  await phone.goto(pairUrl);
  await waitFor(phone, 'the pairing page, named after its browser', () => !document.querySelector('#pair').hidden
    && document.querySelector('#pair-name').value === 'Chrome on Android');
  if (phone.url().includes('#')) throw new Error(`the code stayed in the address: ${phone.url()}`);
  await phone.tap('#pair-go');
  await waitFor(phone, 'waiting for confirmation', () => document.querySelector('#pair-state').textContent.startsWith('Waiting'));
  await shot(phone, '2-pairing-waits-phone');

  begin('the desktop page confirms it');
  await waitFor(desk, 'the claim with Confirm', () => document.querySelector('#pair-claims .claim')?.textContent.includes('Chrome on Android'));
  await desk.click('#pair-claims .claim button.approve');

  begin('the phone is in, with a credential of its own');
  await phone.waitForURL((url) => url.pathname === '/', { timeout: DEADLINE });
  await waitFor(phone, 'the page started on the phone', () => document.querySelector('#where')?.textContent);
  const cookies = await phone.context().cookies();
  const credential = cookies.find((c) => c.name.startsWith('fugue_token_'));
  if (!credential?.value.startsWith('fugue_dev_') || !credential.httpOnly || credential.expires < Date.now() / 1000 + 86400 * 30) {
    throw new Error(`the phone's cookie: ${JSON.stringify(credential)}`);
  }
  await phone.tap('#phone-button');
  await waitFor(phone, 'the device in the list', () => document.querySelector('#devices .device')?.textContent.includes('Chrome on Android'));
  await shot(phone, '3-paired-phone');

  begin('the desktop page revokes it; the phone is out');
  await desk.click('#phone-close');
  await desk.click('#phone-button');
  await waitFor(desk, 'the device with Revoke', () => document.querySelector('#devices .device button.deny'));
  await shot(desk, '4-devices-desktop');
  await desk.click('#devices .device button.deny');
  await waitFor(desk, 'no device left', () => !document.querySelector('#devices .device'));
  await phone.reload();
  await waitFor(phone, 'refused', () => document.querySelector('#error')?.textContent.includes('Not logged in'));

  if (problems.length) throw new Error(problems.join('\n'));
  log('all steps passed');
} catch (err) {
  console.error(`[pair] FAILED at "${step}": ${err.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
