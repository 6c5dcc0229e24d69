// fugue-mcp's MCP Apps in Debian's Chromium, rendered by the official host
// bridge (@modelcontextprotocol/ext-apps 2.0.4's AppBridge, bundled here by
// esbuild) in sandboxed iframes, each app's tool calls sent to the real
// fugue-mcp through the official MCP client (@modelcontextprotocol/client
// 2.4 over stdio). At 390x844:
// - the screen app shows a pane that printed HTML as text, and calls nothing
//   but fugue_capture;
// - the permission card approves a waiting agent (its Approve is a click);
// - the diff app shows a worktree's change.
// tests/tests/e2e/browser.rs set the panes up and checks what they did.
import { launchChromium } from './chromium.mjs';
import { build } from 'esbuild';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const ARTIFACTS = env('ARTIFACTS');
const MCP_BIN = env('MCP_BIN');
const SOCKET = env('FUGUE_SOCKET_PATH');
const HTML_PANE = env('HTML_PANE');
const AGENT_PANE = env('AGENT_PANE');
const DIFF_PANE = env('DIFF_PANE');
const DEADLINE = 15000;
mkdirSync(ARTIFACTS, { recursive: true });

let step = 'start';
const log = (text) => console.log(`[apps] ${text}`);
function begin(name) { step = name; log(name); }

// The host side: the official AppBridge and its postMessage transport.
const bundled = await build({
  stdin: {
    contents: "import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';\n"
      + 'window.AppBridge = AppBridge; window.PostMessageTransport = PostMessageTransport;',
    resolveDir: path.dirname(new URL(import.meta.url).pathname),
  },
  bundle: true, format: 'iife', platform: 'browser', write: false, logLevel: 'error',
});
const hostScript = bundled.outputFiles[0].text;

const client = new Client({ name: 'fugue-apps-test-host', version: '1.0.0' });
await client.connect(new StdioClientTransport({ command: MCP_BIN, args: ['--socket', SOCKET], env: process.env, stderr: 'inherit' }));
const calls = [];

const browser = await launchChromium();
const problems = [];
try {
  begin('the tools point at their apps, and the apps are listed as mcp-app resources');
  const { tools } = await client.listTools();
  const uriOf = (name) => tools.find((t) => t.name === name)?._meta?.ui?.resourceUri;
  const apps = { screen: uriOf('fugue_capture'), permission: uriOf('fugue_agent_status'), diff: uriOf('fugue_diff') };
  if (apps.screen !== 'ui://fugue/screen' || apps.permission !== 'ui://fugue/permission' || apps.diff !== 'ui://fugue/diff') {
    throw new Error(`tools' _meta.ui.resourceUri: ${JSON.stringify(apps)}`);
  }
  const { resources } = await client.listResources();
  for (const uri of Object.values(apps)) {
    const listed = resources.find((r) => r.uri === uri);
    if (listed?.mimeType !== 'text/html;profile=mcp-app') throw new Error(`${uri} listed as ${JSON.stringify(listed)}`);
  }

  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', (d) => { problems.push(`a dialog opened: ${d.message()}`); d.dismiss(); });
  await page.exposeFunction('callTool', async (params) => {
    calls.push(params.name);
    return client.callTool(params);
  });

  // Renders app `uri` for `tool`'s call with `args`, as a host does: the
  // document from resources/read in a sandboxed iframe, the bridge connected,
  // then the tool's input and result.
  async function render(uri, tool, args) {
    const { contents } = await client.readResource({ uri });
    const result = await client.callTool({ name: tool, arguments: args });
    await page.setContent('<!doctype html><html><body style="margin:0"></body></html>');
    await page.addScriptTag({ content: hostScript });
    await page.evaluate(async ({ html, args, result }) => {
      const frame = document.createElement('iframe');
      frame.setAttribute('sandbox', 'allow-scripts');
      frame.style.cssText = 'border:0;width:100vw;height:100vh';
      document.body.append(frame);
      const bridge = new window.AppBridge(null, { name: 'fugue-test-host', version: '1.0.0' }, { serverTools: {} });
      bridge.oncalltool = (params) => window.callTool(params);
      bridge.oninitialized = async () => {
        await bridge.sendToolInput({ arguments: args });
        await bridge.sendToolResult(result);
        window.appReady = true;
      };
      await bridge.connect(new window.PostMessageTransport(frame.contentWindow, frame.contentWindow));
      frame.srcdoc = html;
    }, { html: contents[0].text, args, result });
    await page.waitForFunction(() => window.appReady === true, null, { timeout: DEADLINE });
    const frame = page.frames().find((f) => f !== page.mainFrame());
    if (!frame) throw new Error('no app frame');
    return frame;
  }

  begin('the screen app shows a program\'s HTML as text and calls nothing but fugue_capture');
  const screen = await render(apps.screen, 'fugue_capture', { terminal_id: HTML_PANE });
  await screen.waitForFunction(() => document.getElementById('screen').textContent.includes('<button id="pwn">'), null, { timeout: DEADLINE });
  const planted = await screen.evaluate(() => ({
    images: document.querySelectorAll('img').length,
    pwn: Boolean(document.getElementById('pwn')),
    buttons: document.querySelectorAll('button').length,
  }));
  if (planted.images || planted.pwn || planted.buttons) throw new Error(`the program's HTML became elements: ${JSON.stringify(planted)}`);
  // It follows the pane: one more fugue_capture within its 2 s.
  const before = calls.length;
  const started = Date.now();
  // Polled: the calls are counted here, in node.
  while (calls.length === before && Date.now() - started < DEADLINE) await new Promise((r) => setTimeout(r, 50));
  if (calls.length === before) throw new Error('the screen app did not follow the pane');
  await page.screenshot({ path: path.join(ARTIFACTS, '1-app-screen.png') });

  begin('the permission card shows the prompt; Approve answers it');
  const card = await render(apps.permission, 'fugue_agent_status', { terminal_id: AGENT_PANE });
  await card.waitForFunction(() => !document.getElementById('actions').hidden
    && document.getElementById('prompt').textContent.includes('Do you want to proceed?'), null, { timeout: DEADLINE });
  await page.screenshot({ path: path.join(ARTIFACTS, '2-app-permission.png') });
  await card.click('#approve');
  await card.waitForFunction(() => document.getElementById('said').textContent === 'Approved.', null, { timeout: DEADLINE });
  await page.screenshot({ path: path.join(ARTIFACTS, '3-app-approved.png') });

  begin('the diff app shows what the worktree changed');
  const diff = await render(apps.diff, 'fugue_diff', { terminal_id: DIFF_PANE });
  await diff.waitForFunction(() => document.querySelector('.file h2')?.textContent.includes('a.txt')
    && document.querySelector('.file pre .add')?.textContent.includes('+hello'), null, { timeout: DEADLINE });
  await page.screenshot({ path: path.join(ARTIFACTS, '4-app-diff.png') });

  const forbidden = calls.filter((name) => name !== 'fugue_capture' && name !== 'fugue_approve');
  if (forbidden.length) throw new Error(`apps called ${forbidden}`);
  if (calls.filter((name) => name === 'fugue_approve').length !== 1) throw new Error(`fugue_approve calls: ${calls}`);
  if (problems.length) throw new Error(problems.join('\n'));
  log(`tool calls the apps made: ${calls.join(', ')}`);
  log('all steps passed');
} catch (err) {
  console.error(`[apps] FAILED at "${step}": ${err.message}`);
  process.exitCode = 1;
} finally {
  await browser.close();
  await client.close();
}
