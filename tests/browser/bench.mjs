// The browser half of fugue-bench's browser scenario: opens the page on a tab
// bar whose only tab the bench made, then obeys commands on stdin, one per line,
// answering one JSON line each on stdout:
//   ready ID         -> {"ready": true} once pane ID's tab is shown and attached
//   latency ID N     -> {"samples_ms": [...]}: N keystrokes into ID, each from the
//                       browser's keydown to its echo arriving on the tab's
//                       WebSocket (and, separately, to the first frame after it)
//   quit (or the end of stdin)
// Timestamps are taken inside the page (the keydown event's and the message's
// performance.now()), so the driver's own round trips are not counted.
import { launchChromium } from './chromium.mjs';
import { createInterface } from 'node:readline';

// The tab view, whatever the project holds (an empty one opens on the overview).
const url = `${process.env.FUGUE_WEB_URL}&view=tabs`;
if (!url) throw new Error('FUGUE_WEB_URL is not set');

const browser = await launchChromium();
const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
// Record when each pane-socket message arrives, and when each key goes down.
await page.addInitScript(() => {
  // pane id -> arrival times of its socket's binary messages
  // waiters: called on every binary message (the latency loop waits on them
  // instead of polling the page, which would load the very thread it times).
  globalThis.__bench = { messages: {}, sends: [], keys: [], waiters: [] };
  const Native = globalThis.WebSocket;
  globalThis.WebSocket = class extends Native {
    send(data) {
      if (typeof data !== 'string') globalThis.__bench.sends.push(performance.now());
      super.send(data);
    }

    constructor(...args) {
      super(...args);
      const match = String(args[0]).match(/\/ws\/panes\/([0-9a-f-]+)/);
      if (match) {
        const times = (globalThis.__bench.messages[match[1]] ||= []);
        this.addEventListener('message', (e) => {
          if (typeof e.data !== 'string') {
            times.push(performance.now());
            for (const wake of globalThis.__bench.waiters.splice(0)) wake();
          }
        });
      }
    }
  };
  document.addEventListener('keydown', (e) => globalThis.__bench.keys.push(e.timeStamp), true);
});
await page.goto(url);

const reply = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

const shown = (id) => `.terminal-view[data-id="${id}"]:not([hidden])`;

async function ready(id) {
  await page.waitForSelector(`${shown(id)} .xterm-rows`, { timeout: 20000 });
  await page.waitForFunction((id) => (globalThis.__bench.messages[id] || []).length > 0, id, { timeout: 20000 });
  await page.click(`${shown(id)} .xterm-screen`);
  reply({ ready: true });
}

async function latency(id, count) {
  const samples = [];
  const sending = [];
  const painted = [];
  for (let i = 0; i < count; i++) {
    // Short lines: the shell's line is cleared every 40 keys.
    if (i % 40 === 39) {
      const settled = await page.evaluate((id) => globalThis.__bench.messages[id].length, id);
      await page.keyboard.press('Control+U');
      await page.waitForFunction(({ id, settled }) => globalThis.__bench.messages[id].length > settled, { id, settled });
    }
    const before = await page.evaluate((id) => globalThis.__bench.messages[id].length, id);
    await page.keyboard.press('abcdefghij'[i % 10]);
    const sample = await page.evaluate(
      ({ id, before }) => new Promise((resolve, reject) => {
        const b = globalThis.__bench;
        const timer = setTimeout(() => reject(new Error('no echo within 10 s')), 10000);
        const check = () => {
          if (b.messages[id].length <= before) {
            b.waiters.push(check);
            return;
          }
          clearTimeout(timer);
          resolve({ key: b.keys[b.keys.length - 1], sent: b.sends[b.sends.length - 1], echo: b.messages[id][before] });
        };
        check();
      }),
      { id, before },
    ).catch((err) => { throw new Error(`key ${i}: no echo: ${err.message}`); });
    const { key, sent, echo } = sample;
    // The first frame after the echo arrived: when it can be on screen.
    const frame = await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => done(performance.now()))));
    samples.push(echo - key);
    sending.push(sent - key);
    painted.push(Math.max(frame, echo) - key);
  }
  // Leave the shell's line empty again.
  await page.keyboard.press('Control+U');
  reply({ samples_ms: samples, send_ms: sending, painted_ms: painted });
}

const lines = createInterface({ input: process.stdin });
try {
  for await (const line of lines) {
    const [command, id, count] = line.trim().split(/\s+/);
    if (command === 'ready') await ready(id);
    else if (command === 'latency') await latency(id, Number(count));
    else if (command === 'quit') break;
    else reply({ error: `unknown command ${command}` });
  }
} catch (err) {
  reply({ error: err.message });
  process.exitCode = 1;
} finally {
  lines.close();
  await browser.close();
}
