// fugue's MCP Apps talk to their host through the `ui/*` bridge
// (io.modelcontextprotocol/ui, 2026-01-26): JSON-RPC over postMessage with
// the host window. Written by hand (no bundler, no Node to build): the app
// asks `ui/initialize`, says `ui/notifications/initialized`, then hears the
// tool's input and result; it calls tools back with `tools/call`, which the
// host sends to fugue-mcp under the same guards as any tool call.
//
// What a program printed reaches these apps as text and is only ever set as
// textContent, never as HTML; no tool is called but on a person's click.
'use strict';
const fugueApp = (() => {
  const pending = new Map();
  let nextId = 1;
  const handlers = { input: () => {}, result: () => {}, teardown: () => {} };
  const send = (message) => window.parent.postMessage({ jsonrpc: '2.0', ...message }, '*');
  function request(method, params) {
    const id = nextId++;
    send({ id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }
  window.addEventListener('message', (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== '2.0') return;
    if (message.id !== undefined && message.method === undefined) {
      const waiter = pending.get(message.id);
      if (!waiter) return;
      pending.delete(message.id);
      if (message.error) waiter.reject(new Error(message.error.message || 'the host refused'));
      else waiter.resolve(message.result);
      return;
    }
    switch (message.method) {
      case 'ui/notifications/tool-input': handlers.input(message.params?.arguments || {}); break;
      case 'ui/notifications/tool-result': handlers.result(message.params || {}); break;
      case 'ui/resource-teardown': handlers.teardown(); break;
      default: break;
    }
    // A request of the host's (teardown, ping): acknowledged.
    if (message.id !== undefined && message.method !== undefined) send({ id: message.id, result: {} });
  });
  const element = (tag, className, text) => {
    const el = document.createElement(tag);
    if (className) el.className = className;
    if (text !== undefined) el.textContent = String(text);
    return el;
  };
  return {
    async start(name, on) {
      Object.assign(handlers, on);
      await request('ui/initialize', {
        appInfo: { name, version: '1' },
        appCapabilities: {},
        protocolVersion: '2026-01-26',
      });
      send({ method: 'ui/notifications/initialized', params: {} });
    },
    /// A tool of fugue-mcp's, through the host; its structuredContent, or an Error.
    async call(name, args) {
      const result = await request('tools/call', { name, arguments: args });
      if (result?.isError) throw new Error(result.content?.map((c) => c.text).join(' ') || `${name} failed`);
      return result?.structuredContent ?? {};
    },
    size() {
      const { scrollWidth: width, scrollHeight: height } = document.documentElement;
      send({ method: 'ui/notifications/size-changed', params: { width, height } });
    },
    element,
  };
})();
