// fugue's browser page: a tab bar of terminals for one (project, session), each
// tab a live xterm.js terminal attached over a WebSocket. No framework: the
// state is `tabs` (as the server last said, or optimistically changed) and
// `render()` draws the bar from it.
(() => {
  'use strict';

  const Terminal = globalThis.Terminal;
  const FitAddon = globalThis.FitAddon.FitAddon;
  const encoder = new TextEncoder();
  const $ = (id) => document.getElementById(id);

  const scope = { project: '', session: '' };
  let tabs = [];
  let active = null;
  const views = new Map(); // tab id -> TerminalView
  // Panes of any session opened from the overview, as tabs of this page only.
  const opened = [];
  let refreshTimer = null;

  // ---- the API ----------------------------------------------------------------

  async function api(method, path, body) {
    const options = { method, credentials: 'same-origin', headers: {} };
    if (body !== undefined) {
      options.headers['Content-Type'] = 'application/json';
      options.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(path, options);
    } catch (err) {
      setOffline(true);
      throw new Error('fugue cannot be reached (offline?)');
    }
    setOffline(false);
    const data = await response.json().catch(() => ({}));
    if (response.status === 401) {
      throw new Error(`Not logged in: open the URL fugue-web printed when it started (it carries ?token=…), or pair this device again. ${data.message || ''}`);
    }
    if (!response.ok) throw new Error(data.message || `${response.status} ${response.statusText}`);
    return data;
  }

  const scopeQuery = () =>
    `project=${encodeURIComponent(scope.project)}&session=${encodeURIComponent(scope.session)}`;

  // Control, bidi and zero-width characters as visible escapes (`\x1b`,
  // `\u{202e}`), as the CLI prints them: a target, name or pattern an error
  // quotes may hold them, and a person must see them rather than have the
  // text reordered or hidden.
  const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/g;
  const NAMED = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
  function visible(text) {
    return String(text).replace(UNSAFE, (c) => {
      const code = c.codePointAt(0);
      if (NAMED[c]) return NAMED[c];
      return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16).padStart(4, '0')}}`;
    });
  }

  let errorTimer = null;
  function showError(message) {
    // Offline, the offline notice says it once.
    if (!$('offline').hidden && String(message).includes('cannot be reached')) return;
    const box = $('error');
    box.textContent = visible(message);
    box.hidden = false;
    clearTimeout(errorTimer);
    errorTimer = setTimeout(() => { box.hidden = true; }, 8000);
  }

  // Offline (the installed page opens from the service worker's cache): said
  // until a request goes through again.
  function setOffline(offline) {
    $('offline').hidden = !offline;
    document.body.classList.toggle('offline', offline);
  }
  window.addEventListener('offline', () => setOffline(true));
  // Back online: a page that could not start (it opened from the cache) starts now.
  let started = false;
  window.addEventListener('online', () => {
    setOffline(false);
    if (!started) location.reload();
    else { scheduleRefresh(); scheduleOverview(); }
  });

  let noticeTimer = null;
  function showNotice(message) {
    const box = $('notice');
    box.textContent = message;
    box.hidden = false;
    clearTimeout(noticeTimer);
    noticeTimer = setTimeout(() => { box.hidden = true; }, 8000);
  }

  // ---- tabs -------------------------------------------------------------------

  async function refresh() {
    try {
      const list = await api('GET', `/api/terminal/sessions?${scopeQuery()}`);
      // Panes opened from the overview stay after the project's own tabs.
      tabs = list.sessions.concat(opened.filter((o) => !list.sessions.some((t) => t.id === o.id)));
      if (!tabs.some((t) => t.id === active)) active = tabs.length ? tabs[0].id : null;
      render();
    } catch (err) {
      showError(err.message);
    }
  }

  function scheduleRefresh() {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(refresh, 80);
  }

  async function addTab() {
    try {
      const tab = await api('POST', '/api/terminal/sessions', { project: scope.project, session: scope.session });
      tabs.push(tab);
      activate(tab.id);
    } catch (err) {
      showError(`Cannot open a terminal: ${err.message}`);
    }
  }

  async function closeTab(id) {
    const index = tabs.findIndex((t) => t.id === id);
    if (index < 0) return;
    if (tabs[index].opened) {
      // A pane opened from the overview: closing its tab leaves the pane running.
      opened.splice(opened.findIndex((o) => o.id === id), 1);
    } else {
      try {
        await api('DELETE', `/api/terminal/sessions/${id}?${scopeQuery()}`);
      } catch (err) {
        showError(`Cannot close the terminal: ${err.message}`);
        return;
      }
    }
    tabs.splice(index, 1);
    dropView(id);
    if (active === id) {
      const next = tabs[Math.min(index, tabs.length - 1)];
      active = next ? next.id : null;
    }
    render();
    focusActiveTab();
  }

  async function renameTab(id, name) {
    const tab = tabs.find((t) => t.id === id);
    if (!tab) return;
    const before = tab.name;
    tab.name = name.trim() || 'Terminal';
    render();
    try {
      const reply = await api('PATCH', `/api/terminal/sessions/${id}?${scopeQuery()}`, { name });
      tab.name = reply.session.name;
    } catch (err) {
      tab.name = before;
      showError(`Cannot rename: ${err.message}`);
    }
    render();
  }

  /// Optimistic: the bar shows the new order at once, and goes back (with the
  /// server's reason) if the server refuses it.
  async function reorder(orderedIds) {
    const before = tabs.slice();
    tabs = orderedIds.map((id) => tabs.find((t) => t.id === id)).filter(Boolean);
    tabs.forEach((t, i) => { t.order = i; });
    render();
    try {
      const own = orderedIds.filter((id) => !opened.some((o) => o.id === id));
      const reply = await api('PUT', `/api/terminal/sessions/reorder?${scopeQuery()}`, { orderedIds: own });
      tabs = reply.sessions.concat(opened);
    } catch (err) {
      tabs = before;
      tabs.forEach((t, i) => { t.order = i; });
      showError(`Reorder refused, reverted: ${err.message}`);
    }
    render();
  }

  function move(id, delta) {
    const ids = tabs.map((t) => t.id);
    const from = ids.indexOf(id);
    const to = from + delta;
    if (from < 0 || to < 0 || to >= ids.length) return;
    ids.splice(to, 0, ids.splice(from, 1)[0]);
    reorder(ids).then(focusActiveTab);
  }

  function activate(id) {
    active = id;
    render();
    const view = views.get(id);
    if (view) view.show();
  }

  function focusActiveTab() {
    const el = document.querySelector(`.tab[data-id="${active}"]`);
    if (el) el.focus();
  }

  function badge(tab) {
    if (tab.agent) {
      const label = {
        waiting_for_permission: 'needs you', busy: 'busy', idle: 'idle', exited: 'exited',
        starting: 'starting', unknown: 'unreadable', waiting_for_answer: 'asks you', hibernated: 'asleep',
      }[tab.agent.state];
      if (tab.agent.needs === 'finished_unseen') {
        return { cls: 'finished_unseen', text: `${tab.agent.kind}: done, unseen` };
      }
      return { cls: tab.agent.state, text: `${tab.agent.kind}: ${label || tab.agent.state}` };
    }
    switch (tab.status) {
      case 'running': return { cls: 'running', text: 'running' };
      case 'exited': {
        const failed = tab.signal || (tab.exitCode !== null && tab.exitCode !== 0);
        const how = tab.signal ? tab.signal : `code ${tab.exitCode}`;
        return { cls: failed ? 'failed' : 'exited', text: `exited ${how}` };
      }
      default: return { cls: tab.status, text: tab.status };
    }
  }

  let dragged = null;
  let pressing = false;
  let drawn = '';

  function render() {
    const bar = $('tabs');
    // A rename in progress, a press or a drag owns the bar until it ends; and
    // a bar that would look the same is left alone (a press on it stays valid).
    const look = JSON.stringify([active, tabs.map((t) => [t.id, t.name, badge(t).text, t.pane.cwd])]);
    if (!bar.querySelector('input') && !dragged && !pressing && look !== drawn) {
      const focused = document.activeElement && document.activeElement.closest('.tab');
      bar.replaceChildren(...tabs.map(tabElement));
      drawn = look;
      if (focused) bar.querySelector(`.tab[data-id="${focused.dataset.id}"]`)?.focus();
    }
    $('empty').hidden = tabs.length > 0;
    renderChangesButton();
    for (const tab of tabs) {
      const asleep = Boolean(tab.agent && tab.agent.state === 'hibernated');
      if (!views.has(tab.id)) views.set(tab.id, new TerminalView(tab.id, asleep));
      else if (asleep) views.get(tab.id).sleep();
    }
    for (const [id, view] of views) {
      if (!tabs.some((t) => t.id === id)) dropView(id);
      else if (id === active) view.show();
      else view.hide();
    }
  }

  function tabElement(tab) {
    const el = document.createElement('div');
    el.className = tab.opened ? 'tab opened' : 'tab';
    el.dataset.id = tab.id;
    el.setAttribute('role', 'tab');
    el.setAttribute('aria-selected', String(tab.id === active));
    el.tabIndex = tab.id === active ? 0 : -1;
    el.draggable = true;
    el.title = `${tab.name} — ${tab.pane.cwd} (F2 rename, Delete close, Alt+Shift+←/→ move)`;

    const name = document.createElement('span');
    name.className = 'name';
    name.textContent = tab.name;
    const status = badge(tab);
    const mark = document.createElement('span');
    mark.className = `badge ${status.cls}`;
    mark.textContent = status.text;
    const close = document.createElement('button');
    close.className = 'close';
    close.type = 'button';
    close.tabIndex = -1;
    close.textContent = '×';
    close.setAttribute('aria-label', `Close ${tab.name}`);
    el.append(name, mark, close);

    el.addEventListener('click', (e) => {
      if (e.target === close) closeTab(tab.id);
      else if (tab.id !== active) activate(tab.id);
    });
    el.addEventListener('dblclick', (e) => { if (e.target !== close) startRename(el, tab); });
    el.addEventListener('keydown', (e) => tabKey(e, tab, el));
    el.addEventListener('dragstart', (e) => {
      dragged = tab.id;
      el.classList.add('dragging');
      e.dataTransfer.effectAllowed = 'move';
      e.dataTransfer.setData('text/plain', tab.id);
    });
    el.addEventListener('dragend', () => { dragged = null; pressing = false; drawn = ''; render(); });
    el.addEventListener('dragover', (e) => {
      if (!dragged || dragged === tab.id) return;
      e.preventDefault();
      const after = e.offsetX > el.clientWidth / 2;
      el.classList.toggle('drop-after', after);
      el.classList.toggle('drop-before', !after);
    });
    el.addEventListener('dragleave', () => el.classList.remove('drop-after', 'drop-before'));
    el.addEventListener('drop', (e) => {
      e.preventDefault();
      if (!dragged || dragged === tab.id) return;
      const after = e.offsetX > el.clientWidth / 2;
      const ids = tabs.map((t) => t.id).filter((id) => id !== dragged);
      ids.splice(ids.indexOf(tab.id) + (after ? 1 : 0), 0, dragged);
      dragged = null;
      reorder(ids);
    });
    return el;
  }

  function tabKey(e, tab, el) {
    const index = tabs.findIndex((t) => t.id === tab.id);
    if (e.altKey && e.shiftKey && (e.key === 'ArrowLeft' || e.key === 'ArrowRight')) {
      e.preventDefault();
      move(tab.id, e.key === 'ArrowLeft' ? -1 : 1);
      return;
    }
    const go = (i) => {
      const next = tabs[(i + tabs.length) % tabs.length];
      if (next) { activate(next.id); focusActiveTab(); }
    };
    switch (e.key) {
      case 'ArrowLeft': e.preventDefault(); go(index - 1); break;
      case 'ArrowRight': e.preventDefault(); go(index + 1); break;
      case 'Home': e.preventDefault(); go(0); break;
      case 'End': e.preventDefault(); go(tabs.length - 1); break;
      case 'F2': e.preventDefault(); startRename(el, tab); break;
      case 'Delete': e.preventDefault(); closeTab(tab.id); break;
      case 'Enter': case ' ': e.preventDefault(); views.get(tab.id)?.focus(); break;
      default:
    }
  }

  function startRename(el, tab) {
    const input = document.createElement('input');
    input.value = tab.name;
    input.setAttribute('aria-label', 'Terminal name');
    let done = false;
    const finish = (commit) => {
      if (done) return;
      done = true;
      input.remove();
      drawn = '';
      if (commit && input.value !== tab.name) renameTab(tab.id, input.value);
      else render();
      focusActiveTab();
    };
    input.addEventListener('keydown', (e) => {
      e.stopPropagation();
      if (e.key === 'Enter') finish(true);
      if (e.key === 'Escape') finish(false);
    });
    input.addEventListener('blur', () => finish(true));
    el.querySelector('.name').replaceWith(input);
    input.focus();
    input.select();
  }

  function dropView(id) {
    const view = views.get(id);
    if (view) view.dispose();
    views.delete(id);
  }

  // ---- terminals --------------------------------------------------------------

  class TerminalView {
    // `asleep`: its agent is hibernated. Attaching wakes it, so the socket opens
    // only when a person types into it (the keys are held meanwhile), not
    // because a page showed its tab.
    constructor(id, asleep) {
      this.id = id;
      this.backoff = 250;
      this.disposed = false;
      this.exited = false;
      this.el = document.createElement('div');
      this.el.className = 'terminal-view';
      this.el.dataset.id = id;
      this.el.hidden = true;
      $('terminals').append(this.el);
      this.term = new Terminal({
        // Steady unless the program asks (DECSCUSR): the blink is a CSS animation
        // that keeps the browser producing frames, and on two cores a keystroke's
        // echo waited behind them (10.3 ms blinking, 2.4 ms steady; README, bench 11).
        cursorBlink: false,
        fontFamily: 'ui-monospace, "DejaVu Sans Mono", monospace',
        fontSize: 14,
        scrollback: 5000,
      });
      this.fit = new FitAddon();
      this.term.loadAddon(this.fit);
      this.term.open(this.el);
      // True while the program uses the kitty keyboard protocol (the server says).
      this.kittyKeys = false;
      this.term.attachCustomKeyEventHandler((e) => {
        if (shortcut(e) !== null) return false;
        const modified = this.kittyKeys ? modifiedKey(e) : null;
        if (modified === null) return true;
        e.preventDefault();
        this.send(encoder.encode(modified));
        return false;
      });
      this.term.onData((data) => this.send(encoder.encode(data)));
      this.term.onBinary((data) => this.send(Uint8Array.from(data, (c) => c.charCodeAt(0))));
      this.term.onResize(({ cols, rows }) => this.control({ type: 'resize', cols, rows }));
      if (asleep) {
        this.term.write('\x1b[2m[the agent is hibernated: type to wake it]\x1b[0m\r\n');
      } else {
        this.connect();
      }
    }

    connect() {
      if (this.disposed) return;
      const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
      const { cols, rows } = this.term;
      const socket = new WebSocket(`${scheme}://${location.host}/ws/panes/${this.id}?cols=${cols}&rows=${rows}&flow=true`);
      socket.binaryType = 'arraybuffer';
      this.socket = socket;
      this.processed = 0;
      // Keys typed before the socket opens (a person types as soon as the tab
      // shows) are held, up to 64 KiB, and sent when it opens.
      this.pending = [];
      this.pendingBytes = 0;
      socket.onopen = () => {
        this.backoff = 250;
        connectionLost(this.id, false);
        for (const bytes of this.pending) socket.send(bytes);
        this.pending = [];
        this.pendingBytes = 0;
      };
      socket.onmessage = (e) => {
        if (typeof e.data === 'string') {
          this.onControl(JSON.parse(e.data));
          return;
        }
        // Flow control: say what the terminal has processed, so the server
        // sends no more than it can take (and a redraw if it fell behind).
        const bytes = e.data.byteLength;
        this.term.write(new Uint8Array(e.data), () => {
          this.processed += bytes;
          if (this.processed >= 65536) {
            this.control({ type: 'ack', bytes: this.processed });
            this.processed = 0;
          }
        });
      };
      socket.onclose = () => {
        if (this.disposed || this.exited || this.socket !== socket) return;
        connectionLost(this.id, true);
        // Reconnect with backoff; a tab that is gone meanwhile is dropped by the refresh.
        setTimeout(() => { scheduleRefresh(); this.connect(); }, this.backoff);
        this.backoff = Math.min(this.backoff * 2, 8000);
      };
    }

    onControl(message) {
      switch (message.type) {
        case 'redraw':
          // The redraw repaints everything; reset first so no mode the program
          // had set (mouse reporting, bracketed paste, ...) outlives it.
          this.term.reset();
          break;
        case 'exited':
          this.exited = true;
          this.term.write(`\r\n\x1b[2m[${message.text}]\x1b[0m\r\n`);
          scheduleRefresh();
          break;
        case 'error':
          showError(message.message);
          break;
        case 'keyboard':
          this.kittyKeys = message.kitty;
          break;
        default:
      }
    }

    // Its agent was put to rest while shown: the attachment ended with its
    // program; typing opens a new one, which wakes it.
    sleep() {
      if (!this.exited) return;
      this.exited = false;
      this.socket = null;
      this.term.write('\x1b[2m[the agent is hibernated: type to wake it]\x1b[0m\r\n');
    }

    send(bytes) {
      if (!this.socket) this.connect();
      if (!this.socket) return;
      if (this.socket.readyState === WebSocket.OPEN) {
        this.socket.send(bytes);
      } else if (this.socket.readyState === WebSocket.CONNECTING && this.pendingBytes + bytes.length <= 65536) {
        this.pending.push(bytes);
        this.pendingBytes += bytes.length;
      }
    }

    control(message) {
      if (this.socket && this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
    }

    show() {
      const wasHidden = this.el.hidden;
      this.el.hidden = false;
      this.fitNow();
      if (wasHidden) this.focus();
    }

    hide() { this.el.hidden = true; }

    focus() { this.term.focus(); }

    fitNow() {
      try { this.fit.fit(); } catch (_) { /* not laid out yet */ }
    }

    dispose() {
      this.disposed = true;
      if (this.socket) this.socket.close();
      this.term.dispose();
      this.el.remove();
      connectionLost(this.id, false);
    }
  }

  const lost = new Set();
  function connectionLost(id, isLost) {
    if (isLost) lost.add(id); else lost.delete(id);
    $('connection').textContent = lost.size ? 'reconnecting…' : '';
  }

  /// Enter, Tab, Backspace or Escape with Shift, Alt or Ctrl, in xterm's
  /// modifyOtherKeys form (`CSI 27;mods;code~`), or null. xterm.js sends these
  /// as the bare key (Shift+Enter as Enter); fugued turns this form into the
  /// kitty keyboard protocol's for a program that uses it.
  function modifiedKey(e) {
    if (e.type !== 'keydown' || e.metaKey) return null;
    const code = { Enter: 13, Tab: 9, Backspace: 127, Escape: 27 }[e.key];
    const mods = (e.shiftKey ? 1 : 0) + (e.altKey ? 2 : 0) + (e.ctrlKey ? 4 : 0);
    if (code === undefined || mods === 0) return null;
    return `\x1b[27;${mods + 1};${code}~`;
  }

  /// The shortcut `e` is, as an action, or null. Shortcuts work everywhere, the
  /// terminal included: xterm.js is told to leave them alone, and the document's
  /// listener runs them (once).
  function shortcut(e) {
    if (e.type !== 'keydown' || !e.altKey || !e.shiftKey || e.ctrlKey || e.metaKey) return null;
    const step = (delta) => () => {
      const index = tabs.findIndex((t) => t.id === active);
      const next = tabs[(index + delta + tabs.length) % tabs.length];
      if (next) activate(next.id);
    };
    switch (e.key) {
      case 'T': case 't': return addTab;
      case 'W': case 'w': return () => { if (active) closeTab(active); };
      case 'PageUp': return step(-1);
      case 'PageDown': return step(1);
      case 'Home': return focusActiveTab;
      case 'A': case 'a': return () => showOverview(!overviewShown);
      case 'D': case 'd': return () => {
        if (changes.pane) closeChanges();
        else if (active && worktreeOf(active)) openChanges(active, tabs.find((t) => t.id === active)?.name || active);
      };
      default: return null;
    }
  }

  // ---- the overview: every pane of every session ------------------------------

  let overviewShown = false;
  let overviewRows = []; // the panes' rows
  let backgroundRows = []; // agent sessions outside any pane (claude --bg)
  let overviewDrawn = '';
  const said = new Map(); // pane id -> what its last answer did

  const needsOf = (row) => (row.agent ? row.agent.needs : 'nothing');
  const labelOf = (row) => `${row.pane.session}:${row.pane.index}`;

  async function refreshOverview() {
    try {
      const rows = await api('GET', '/api/overview');
      overviewRows = rows.filter((r) => r.pane);
      backgroundRows = rows.filter((r) => !r.pane && r.background);
    } catch (err) {
      showError(err.message);
      return;
    }
    renderOverview();
    renderWindow();
    refreshWorktrees(false);
    if (overviewShown) refreshFleet();
  }

  // ---- the fleet: every daemon the hosts file's sources find, by endpoint ----

  let fleet = null;
  let fleetAsking = false;
  let fleetAskedAt = 0;
  const FLEET_EVERY_MS = 10000;

  // Asked while the overview shows, at most every 10 s and one at a time (the
  // server asks every endpoint, 32 together, each within 10 s).
  async function refreshFleet() {
    if (fleetAsking || Date.now() - fleetAskedAt < FLEET_EVERY_MS) return;
    fleetAsking = true;
    try {
      fleet = await api('GET', '/api/fleet');
    } catch (err) {
      fleet = { endpoints: [], over: 0, problems: [err.message] };
    } finally {
      fleetAsking = false;
      fleetAskedAt = Date.now();
    }
    renderFleet();
  }

  function renderFleet() {
    const box = $('fleet');
    const shown = overviewShown && fleet && (fleet.endpoints.length > 0 || fleet.problems.length > 0);
    box.hidden = !shown;
    if (!shown) return;
    const parts = [];
    const heading = document.createElement('h2');
    heading.textContent = `Fleet: ${fleet.endpoints.length} endpoint${fleet.endpoints.length === 1 ? '' : 's'}`;
    parts.push(heading);
    for (const problem of fleet.problems) parts.push(note(problem));
    if (fleet.over > 0) parts.push(note(`${fleet.over} more endpoints matched than the 500 a fleet lists; narrow a source`));
    for (const endpoint of fleet.endpoints) parts.push(fleetGroup(endpoint));
    box.replaceChildren(...parts);
  }

  function note(text) {
    const p = document.createElement('p');
    p.className = 'fleet-note';
    p.textContent = text;
    return p;
  }

  function fleetGroup(endpoint) {
    const group = document.createElement('section');
    group.className = 'fleet-endpoint';
    group.dataset.endpoint = endpoint.endpoint;
    const head = document.createElement('h2');
    const name = document.createElement('span');
    name.textContent = endpoint.endpoint;
    const source = document.createElement('span');
    source.className = 'source';
    source.textContent = endpoint.source;
    head.append(name, source);
    if (endpoint.error) {
      const why = document.createElement('span');
      why.className = 'why';
      why.textContent = visible(endpoint.error);
      head.append(why);
    } else if (endpoint.panes.length === 0) {
      head.append(Object.assign(document.createElement('span'), { className: 'source', textContent: 'no panes' }));
    }
    const panes = document.createElement('div');
    panes.className = 'fleet-panes';
    panes.append(...endpoint.panes.map((row) => fleetCard(row, endpoint.endpoint)));
    group.append(head, panes);
    return group;
  }

  // A pane elsewhere: what it shows, and how to reach it (this page serves
  // its own daemon's panes only).
  function fleetCard(row, endpoint) {
    const card = paneCard(row, `${endpoint}/${labelOf(row)}`);
    card.append(Object.assign(document.createElement('code'), {
      className: 'attach-hint',
      textContent: `fugue --host ${endpoint} attach ${labelOf(row)}`,
    }));
    return card;
  }

  function showOverview(show) {
    if (changes.pane) closeChanges();
    if (comparing.group) closeCompare();
    overviewShown = show;
    document.body.classList.toggle('overview', show);
    $('overview').hidden = !show;
    $('show-all').setAttribute('aria-pressed', String(show));
    overviewDrawn = '';
    if (show) refreshOverview();
    else views.get(active)?.show();
    renderOverview();
    renderFleet();
    renderChangesButton();
  }

  function renderOverview() {
    const needing = overviewRows.concat(backgroundRows).filter((r) => needsOf(r) !== 'nothing').length;
    // The tab view says what runs outside it, a click from the overview.
    const elsewhere = overviewRows.filter((r) => r.pane.status === 'running' && !tabs.some((t) => t.id === r.pane.id)).length;
    $('elsewhere').hidden = overviewShown || elsewhere === 0;
    $('elsewhere').textContent = `${elsewhere} pane${elsewhere === 1 ? '' : 's'} run${elsewhere === 1 ? 's' : ''} elsewhere`;
    $('needs').hidden = needing === 0;
    $('needs').textContent = `${needing} need${needing === 1 ? 's' : ''} you`;
    document.title = needing ? `(${needing}) fugue` : 'fugue';
    if (!overviewShown) return;
    // "Needs you" first, oldest first: agents that wait on a person (the
    // server's needs_you), answered inline; then everything else.
    const waiting = overviewRows.filter((r) => r.needs_you)
      .sort((a, b) => a.agent.since - b.agent.since);
    const rows = overviewRows.filter((r) => !r.needs_you).sort((a, b) =>
      (needsOf(a) === 'nothing') - (needsOf(b) === 'nothing')
      || a.pane.session.localeCompare(b.pane.session) || a.pane.index - b.pane.index);
    // Drawn again only when it would look different (a press stays valid).
    const look = JSON.stringify([waiting, rows, backgroundRows, [...said], worktrees, groups.map((g) => g.name)]);
    if (look === overviewDrawn) return;
    overviewDrawn = look;
    const parts = [];
    if (waiting.length) {
      const list = document.createElement('section');
      list.id = 'needs-you';
      list.setAttribute('aria-label', 'Needs you');
      const heading = Object.assign(document.createElement('h2'), { textContent: `Needs you (${waiting.length})` });
      list.append(heading, ...waiting.map((row) => {
        const card = cardElement(row);
        const since = Object.assign(document.createElement('span'), { className: 'since', textContent: `waiting ${ago(row.agent.since)}` });
        card.querySelector('header').after(since);
        return card;
      }));
      parts.push(list);
    }
    parts.push(...rows.map(cardElement));
    parts.push(...backgroundRows.map(backgroundCard));
    $('overview-list').replaceChildren(...parts);
    $('overview-empty').hidden = overviewRows.length + backgroundRows.length > 0;
  }

  function ago(ms) {
    const secs = Math.max(0, Math.round((Date.now() - ms) / 1000));
    if (secs < 60) return `${secs} s`;
    if (secs < 3600) return `${Math.floor(secs / 60)} min`;
    return `${Math.floor(secs / 3600)} h`;
  }

  // A pane's card as every overview shows it: SESSION:INDEX, title, the
  // agent's state or the pane's status, its last line. `key`: its data-label.
  function paneCard(row, key) {
    const agent = row.agent;
    const card = document.createElement('article');
    card.className = needsOf(row) === 'nothing' ? 'pane-card' : 'pane-card needs';
    card.dataset.label = key;
    const head = document.createElement('header');
    const label = Object.assign(document.createElement('span'), { className: 'label', textContent: labelOf(row) });
    const title = Object.assign(document.createElement('span'), { className: 'title', textContent: row.pane.title });
    const state = agent ? (agent.needs === 'finished_unseen' ? 'finished_unseen' : agent.state) : row.pane.status;
    const status = Object.assign(document.createElement('span'), {
      className: `badge ${state}`,
      textContent: agent ? `${agent.agent}: ${stateWords(agent)}` : row.pane.status,
    });
    head.append(label, title, status);
    const last = Object.assign(document.createElement('pre'), { className: 'last', textContent: row.last_line || ' ' });
    card.append(head, last);
    return card;
  }

  // An agent's state in words: "limited until 17:00" when a usage limit
  // says when it resets.
  function stateWords(agent) {
    const words = agent.state.replaceAll('_', ' ');
    if (agent.state !== 'limited' || !agent.resets_at) return words;
    const at = new Date(agent.resets_at);
    return `${words} until ${at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}`;
  }

  // A session running outside any pane (origin claude_background): its
  // state and directory; `fugue attach bg:ID` opens it in a pane.
  function backgroundCard(row) {
    const bg = row.background;
    const card = document.createElement('article');
    card.className = row.needs_you ? 'pane-card needs background' : 'pane-card background';
    card.dataset.background = bg.id;
    const head = document.createElement('header');
    const label = Object.assign(document.createElement('span'), { className: 'label', textContent: bg.target });
    const title = Object.assign(document.createElement('span'), { className: 'title', textContent: bg.name });
    const status = Object.assign(document.createElement('span'), {
      className: `badge ${row.agent.state}`,
      textContent: `${row.agent.agent} (background): ${stateWords(row.agent)}`,
    });
    head.append(label, title, status);
    const where = Object.assign(document.createElement('pre'), { className: 'last', textContent: bg.cwd });
    const hint = Object.assign(document.createElement('span'), {
      className: 'said',
      textContent: `open it in a terminal: fugue attach ${bg.target}`,
    });
    card.append(head, where, hint);
    return card;
  }

  function cardElement(row) {
    const agent = row.agent;
    const card = paneCard(row, labelOf(row));
    card.dataset.pane = row.pane.id;
    const actions = document.createElement('div');
    actions.className = 'actions';
    if (agent && agent.state === 'waiting_for_permission' && agent.prompt_id) {
      // The prompt's own lines, so a person knows what they allow.
      const prompt = document.createElement('pre');
      prompt.className = 'prompt';
      prompt.textContent = agent.evidence.join('\n');
      card.append(prompt);
      const approve = button('Approve', 'approve', () => answer(row, 'approve'));
      const deny = button('Deny', 'deny', () => answer(row, 'deny'));
      approve.title = deny.title = `prompt ${agent.prompt_id}: sent only while this prompt is on screen`;
      actions.append(approve, deny);
    }
    actions.append(button('Open', 'open', () => openPane(row)));
    const wt = worktreeOf(row.pane.id);
    if (wt) {
      const where = document.createElement('span');
      where.className = 'worktree';
      where.textContent = `${wt.branch} · ${wt.ahead} ahead · ${wt.dirty.length} uncommitted`;
      card.append(where);
      actions.append(button('Changes', 'changes', () => openChanges(row.pane.id, labelOf(row))));
    }
    const group = groupOf(row.pane.id);
    if (group) actions.append(button('Compare', 'compare', () => openCompare(group.name)));
    const place = row.pane.tmux;
    if (place && windowRows(place.window_id).length > 1) {
      actions.append(button('Window', 'window', () => openWindow(place.window_id)));
    }
    card.append(actions);
    if (said.has(row.pane.id)) {
      const note = document.createElement('span');
      note.className = 'said';
      note.textContent = said.get(row.pane.id);
      card.append(note);
    }
    return card;
  }

  function button(text, cls, action) {
    const el = document.createElement('button');
    el.type = 'button';
    el.className = cls;
    el.textContent = text;
    el.addEventListener('click', action);
    return el;
  }

  /// Answers the prompt the card showed, by its id: the server sends the key
  /// only while that same prompt is on screen.
  async function answer(row, verdict) {
    try {
      const reply = await api('POST', `/api/panes/${row.pane.id}/${verdict}`, { prompt_id: row.agent.prompt_id });
      said.set(row.pane.id, reply.already ? `already ${reply.answer}: nothing sent` : reply.answer);
    } catch (err) {
      showError(`${labelOf(row)}: ${err.message}`);
    }
    refreshOverview();
  }

  /// Opens any pane as a tab of this page (its own project's tabs stay).
  function openPane(row) {
    if (!tabs.some((t) => t.id === row.pane.id)) {
      const tab = {
        id: row.pane.id, name: labelOf(row), opened: true, pane: row.pane,
        status: row.pane.status, exitCode: row.pane.exit_code ?? null, signal: row.pane.signal ?? null,
        agent: row.agent ? { kind: row.agent.agent, state: row.agent.state, needs: row.agent.needs } : null,
      };
      opened.push(tab);
      tabs.push(tab);
    }
    showOverview(false);
    activate(row.pane.id);
  }

  // ---- A window: the panes of a tmux window side by side ------------------------
  // Panes fugue's tmux grouped into a window (a lead agent and its teammates)
  // as a grid of live terminals; on a phone one at a time, with a switcher.

  const windowed = { id: null, selected: null, views: new Map() };

  // The running panes of window `@id`, in the order tmux gave them ids.
  function windowRows(id) {
    const number = (row) => Number(row.pane.tmux.pane_id.slice(1));
    return overviewRows
      .filter((r) => r.pane.tmux && r.pane.tmux.window_id === id && r.pane.status === 'running')
      .sort((a, b) => number(a) - number(b));
  }

  function openWindow(id) {
    if (changes.pane) closeChanges();
    if (comparing.group) closeCompare();
    windowed.id = id;
    windowed.selected = null;
    document.body.classList.add('windowed');
    $('window').hidden = false;
    renderWindow();
  }

  function closeWindow() {
    for (const view of windowed.views.values()) view.dispose();
    windowed.views.clear();
    windowed.id = null;
    document.body.classList.remove('windowed');
    $('window').hidden = true;
    showOverview(overviewShown);
  }

  function renderWindow() {
    if (windowed.id === null) return;
    const rows = windowRows(windowed.id);
    if (rows.length === 0) {
      closeWindow();
      return;
    }
    if (!rows.some((r) => r.pane.id === windowed.selected)) windowed.selected = rows[0].pane.id;
    const place = rows[0].pane.tmux;
    $('window-title').textContent = `${place.window} ${place.window_id} · ${place.layout}`;
    const grid = $('window-grid');
    grid.style.setProperty('--columns', String(Math.ceil(Math.sqrt(rows.length))));
    for (const [id, view] of windowed.views) {
      if (!rows.some((r) => r.pane.id === id)) {
        view.dispose();
        windowed.views.delete(id);
      }
    }
    const switcher = rows.map((row) => {
      const pick = button(`${row.pane.tmux.pane_id} ${row.pane.title}`, 'pick', () => {
        windowed.selected = row.pane.id;
        renderWindow();
        windowed.views.get(row.pane.id)?.focus();
      });
      pick.setAttribute('aria-pressed', String(row.pane.id === windowed.selected));
      pick.title = labelOf(row);
      return pick;
    });
    $('window-switcher').replaceChildren(...switcher);
    for (const row of rows) {
      let view = windowed.views.get(row.pane.id);
      if (!view) {
        view = new TerminalView(row.pane.id, row.pane.status === 'hibernated');
        windowed.views.set(row.pane.id, view);
      }
      grid.append(view.el);
      view.el.hidden = false;
      view.el.classList.toggle('selected', row.pane.id === windowed.selected);
    }
    requestAnimationFrame(() => { for (const view of windowed.views.values()) view.fitNow(); });
  }

  // ---- Changes: what a pane's agent changed in its worktree ----------------------
  // The diff against the commit it started from, files first, then hunks; a
  // click on a line (or a file's or the change's Comment button) writes a
  // comment; Send gives them all to the agent as one prompt (refused while it
  // waits on a dialog or holds a draft). Merge and Discard ask first.

  let worktrees = []; // as /api/worktrees last said
  let groups = []; // fan-out groups, as /api/groups last said
  let worktreesAt = 0;
  const changes = { pane: null, label: '', view: null, comments: [], editing: null, said: '' };

  /// The worktrees (each a git status: at most every 5 s unless `now`).
  async function refreshWorktrees(now) {
    if (!now && Date.now() - worktreesAt < 5000) return;
    worktreesAt = Date.now();
    try {
      [worktrees, groups] = await Promise.all([api('GET', '/api/worktrees'), api('GET', '/api/groups')]);
    } catch (_) {
      worktrees = [];
      groups = [];
    }
    renderOverview();
    renderChangesButton();
  }
  const worktreeOf = (pane) => worktrees.find((w) => w.pane === pane);
  const groupOf = (pane) => groups.find((g) => g.members.some((m) => m.pane === pane));

  function renderChangesButton() {
    $('changes-button').hidden = !(active && worktreeOf(active)) || overviewShown;
  }

  async function openChanges(pane, label) {
    Object.assign(changes, { pane, label, view: null, comments: [], editing: null, said: '' });
    document.body.classList.add('changes');
    $('changes').hidden = false;
    renderChanges();
    await loadChanges();
  }

  function closeChanges() {
    changes.pane = null;
    document.body.classList.remove('changes');
    $('changes').hidden = true;
    if (!overviewShown) views.get(active)?.show();
  }

  async function loadChanges() {
    const pane = changes.pane;
    try {
      const view = await api('GET', `/api/panes/${pane}/diff`);
      if (changes.pane === pane) changes.view = view;
    } catch (err) {
      showError(`${changes.label}: ${err.message}`);
      closeChanges();
      return;
    }
    renderChanges();
  }

  /// Each hunk line with its numbers on each side (as the server's review
  /// reads them: `-` lines have only the old, `+` lines only the new).
  function numbered(hunk) {
    let old = hunk.old_start;
    let now = hunk.new_start;
    return hunk.lines.map((text) => {
      const mark = text[0];
      const line = {
        text,
        old: mark === '+' || mark === '\\' ? null : old,
        new: mark === '-' || mark === '\\' ? null : now,
        cls: { '+': 'add', '-': 'del', '\\': 'note' }[mark] || 'ctx',
      };
      if (line.old !== null) old += 1;
      if (line.new !== null) now += 1;
      return line;
    });
  }

  /// Where a comment points: the change (no path), a file, or a line.
  const spot = (path, line, oldLine) => ({ path: path ?? null, line: line ?? null, old_line: line == null ? (oldLine ?? null) : null });
  const sameSpot = (a, b) => a.path === b.path && a.line === b.line && a.old_line === b.old_line;

  function renderChanges() {
    if (!changes.pane) return;
    const view = changes.view;
    const head = $('changes-head');
    const title = document.createElement('h2');
    title.textContent = `Changes of ${changes.label}`;
    const what = document.createElement('span');
    what.className = 'what';
    what.textContent = view
      ? `${view.branch} against ${view.base.slice(0, 12)} · ${view.files.length} file${view.files.length === 1 ? '' : 's'} · +${view.added} −${view.removed}`
      : 'reading the diff…';
    const count = changes.comments.length;
    const send = button(count ? `Send ${count} comment${count === 1 ? '' : 's'}` : 'Send comments', 'send', sendReview);
    send.disabled = count === 0;
    send.title = 'To the agent as one prompt: file, line, the quoted code and your comment';
    const squashBox = document.createElement('label');
    squashBox.className = 'squash';
    const squash = document.createElement('input');
    squash.type = 'checkbox';
    squash.id = 'changes-squash';
    squashBox.append(squash, ' squash');
    const merge = button('Merge…', 'merge', mergeChanges);
    const discard = button('Discard…', 'discard', discardChanges);
    const reload = button('Reload', 'reload', loadChanges);
    const close = button('Close', 'close-changes', closeChanges);
    const actions = document.createElement('div');
    actions.className = 'actions';
    actions.append(send, merge, squashBox, discard, reload, close);
    const parts = [title, what, actions];
    if (changes.said) {
      const said = document.createElement('p');
      said.className = 'said';
      said.textContent = changes.said;
      parts.push(said);
    }
    head.replaceChildren(...parts);

    const body = $('changes-body');
    if (!view) {
      body.replaceChildren();
      return;
    }
    const whole = document.createElement('div');
    whole.className = 'whole';
    whole.append(button('Comment on the whole change', 'add-comment', () => startComment(spot())));
    whole.append(...commentsAt(spot()));
    const index = document.createElement('nav');
    index.className = 'files';
    index.setAttribute('aria-label', 'Changed files');
    view.files.forEach((file, n) => {
      const link = document.createElement('a');
      link.href = `#file-${n}`;
      link.textContent = `${file.path}`;
      const stat = document.createElement('span');
      stat.className = 'stat';
      stat.textContent = file.binary ? `${file.status}, binary` : `${file.status} +${file.added} −${file.removed}`;
      const item = document.createElement('div');
      item.append(link, stat);
      index.append(item);
    });
    if (view.files.length === 0) index.textContent = 'No changes yet.';
    const sections = view.files.map(fileElement);
    if (view.truncated) {
      const cut = document.createElement('p');
      cut.className = 'cut';
      cut.textContent = 'The patch is longer than fugue reads (8 MiB): later files show counts only.';
      sections.push(cut);
    }
    body.replaceChildren(whole, index, ...sections);
    body.querySelector('textarea')?.focus();
  }

  function fileElement(file, n) {
    const section = document.createElement('section');
    section.className = 'file';
    section.id = `file-${n}`;
    section.dataset.path = file.path;
    const head = document.createElement('header');
    const name = document.createElement('span');
    name.className = 'path';
    name.textContent = file.old_path ? `${file.old_path} → ${file.path}` : file.path;
    const stat = document.createElement('span');
    stat.className = 'stat';
    stat.textContent = file.binary ? `${file.status}, binary` : `${file.status} +${file.added} −${file.removed}`;
    head.append(name, stat, button('Comment', 'add-comment', () => startComment(spot(file.path))));
    section.append(head, ...commentsAt(spot(file.path)));
    if (file.binary) {
      const note = document.createElement('p');
      note.className = 'cut';
      note.textContent = 'Binary file: no lines to show.';
      section.append(note);
    }
    for (const hunk of file.hunks) {
      const box = document.createElement('div');
      box.className = 'hunk';
      const header = document.createElement('div');
      header.className = 'hunk-head';
      header.textContent = hunk.header;
      const table = document.createElement('table');
      table.className = 'lines';
      const rows = [];
      for (const line of numbered(hunk)) {
        const row = document.createElement('tr');
        row.className = `line ${line.cls}`;
        const at = spot(file.path, line.new, line.old);
        row.dataset.old = line.old ?? '';
        row.dataset.new = line.new ?? '';
        const old = document.createElement('td');
        old.className = 'num';
        old.textContent = line.old ?? '';
        const now = document.createElement('td');
        now.className = 'num';
        now.textContent = line.new ?? '';
        const code = document.createElement('td');
        code.className = 'code';
        code.textContent = line.text;
        row.append(old, now, code);
        if (line.cls !== 'note') {
          row.tabIndex = 0;
          row.title = 'Comment on this line';
          row.addEventListener('click', () => startComment(at));
          row.addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); startComment(at); } });
        }
        rows.push(row);
        for (const extra of commentsAt(at)) {
          const holder = document.createElement('tr');
          holder.className = 'comment-row';
          const cell = document.createElement('td');
          cell.colSpan = 3;
          cell.append(extra);
          holder.append(cell);
          rows.push(holder);
        }
      }
      table.append(...rows);
      box.append(header, table);
      section.append(box);
    }
    return section;
  }

  /// The comments written at `at`, and the editor if one is open there.
  function commentsAt(at) {
    const out = changes.comments.filter((c) => sameSpot(c, at)).map((c) => {
      const box = document.createElement('div');
      box.className = 'comment';
      const text = document.createElement('p');
      text.textContent = c.comment;
      box.append(text, button('Remove', 'remove', () => {
        changes.comments.splice(changes.comments.indexOf(c), 1);
        renderChanges();
      }));
      return box;
    });
    if (changes.editing && sameSpot(changes.editing, at)) out.push(editorElement(at));
    return out;
  }

  function editorElement(at) {
    const box = document.createElement('div');
    box.className = 'comment editing';
    const text = document.createElement('textarea');
    text.rows = 3;
    text.maxLength = 4000;
    text.setAttribute('aria-label', at.path ? `Comment on ${at.path}${at.line ? ` line ${at.line}` : at.old_line ? ` removed line ${at.old_line}` : ''}` : 'Comment on the whole change');
    text.placeholder = 'What should the agent do here?';
    const save = () => {
      if (text.value.trim()) changes.comments.push({ ...at, comment: text.value.trim() });
      changes.editing = null;
      renderChanges();
    };
    text.addEventListener('keydown', (e) => {
      e.stopPropagation();
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); save(); }
      if (e.key === 'Escape') { changes.editing = null; renderChanges(); }
    });
    const buttons = document.createElement('div');
    buttons.className = 'buttons';
    buttons.append(button('Save', 'save', save), button('Cancel', 'cancel', () => { changes.editing = null; renderChanges(); }));
    box.append(text, buttons);
    return box;
  }

  function startComment(at) {
    changes.editing = at;
    renderChanges();
  }

  const newKey = () => (globalThis.crypto?.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`);

  async function sendReview() {
    const pane = changes.pane;
    const comments = changes.comments.map(({ path, line, old_line: oldLine, comment }) => {
      const c = { comment };
      if (path !== null) c.path = path;
      if (line !== null) c.line = line;
      if (oldLine !== null) c.old_line = oldLine;
      return c;
    });
    try {
      const sent = await api('POST', `/api/panes/${pane}/review`, { comments, key: newKey() });
      if (changes.pane !== pane) return;
      changes.comments = [];
      changes.said = `Sent ${sent.comments} comment${sent.comments === 1 ? '' : 's'}: ${sent.receipt.message}`;
    } catch (err) {
      showError(`Comments not sent: ${err.message}`);
    }
    renderChanges();
  }

  async function mergeChanges() {
    const view = changes.view;
    if (!view) return;
    const squash = $('changes-squash')?.checked === true;
    await refreshWorktrees(true);
    const wt = worktreeOf(changes.pane);
    const into = wt ? wt.base_ref : 'the branch it started from';
    // Agents often leave their work uncommitted: say so, and commit it first.
    const dirty = wt ? wt.dirty.length : 0;
    const first = dirty ? `Commit ${dirty} uncommitted file(s) on ${view.branch}, then merge it` : `Merge ${view.branch}`;
    if (!confirm(`${first}${squash ? ' as one commit' : ''} into ${into}?`)) return;
    try {
      const merged = await api('POST', `/api/worktrees/${changes.pane}/merge`, { squash, commit: dirty > 0 });
      changes.said = `Merged ${merged.branch} (${merged.commits} commit${merged.commits === 1 ? '' : 's'}) into ${merged.into}: ${merged.commit.slice(0, 12)}`;
    } catch (err) {
      showError(`Not merged: ${err.message}`);
    }
    renderChanges();
    refreshWorktrees(true);
  }

  async function discardChanges() {
    const view = changes.view;
    if (!view) return;
    await refreshWorktrees(true);
    const wt = worktreeOf(changes.pane);
    const holds = wt ? `${wt.dirty.length} uncommitted file(s) and ${wt.ahead} commit(s) not in ${wt.base_ref}` : 'whatever they hold';
    if (!confirm(`Discard worktree ${view.worktree} and branch ${view.branch}, with ${holds}? Its pane is released. This cannot be undone.`)) return;
    try {
      const gone = await api('DELETE', `/api/worktrees/${changes.pane}`);
      showNotice(`Discarded ${gone.branch} (${gone.outcome})`);
      closeChanges();
      scheduleRefresh();
      scheduleOverview();
      refreshWorktrees(true);
    } catch (err) {
      showError(`Not discarded: ${err.message}`);
    }
  }

  // ---- Compare: a fan-out group side by side --------------------------------------
  // Each agent's state, diff stat, port and test result (the group's test is
  // run in each done worktree, again only when its content changed); Changes
  // opens a member's diff; Pick merges it (its uncommitted work committed
  // first) and offers to discard the others.

  const comparing = { group: null, view: null, said: '' };

  async function openCompare(group) {
    Object.assign(comparing, { group, view: null, said: '' });
    document.body.classList.add('comparing');
    $('compare').hidden = false;
    renderCompare();
    await loadCompare();
  }

  function closeCompare() {
    comparing.group = null;
    document.body.classList.remove('comparing');
    $('compare').hidden = true;
  }

  async function loadCompare() {
    const group = comparing.group;
    try {
      const view = await api('GET', `/api/groups/${encodeURIComponent(group)}/compare`);
      if (comparing.group === group) comparing.view = view;
    } catch (err) {
      showError(`${group}: ${err.message}`);
      closeCompare();
      return;
    }
    renderCompare();
  }

  function testText(member, view) {
    if (member.problem) return member.problem;
    if (!view.test) return '—';
    if (!member.done) return 'not done';
    const run = member.test;
    if (!run) return 'not run';
    if (run.passed) return `passed (${run.seconds.toFixed(1)} s)`;
    return run.exit_code === null ? 'failed (killed)' : `failed (exit ${run.exit_code})`;
  }

  function renderCompare() {
    if (!comparing.group) return;
    const view = comparing.view;
    const title = document.createElement('h2');
    title.textContent = `Compare ${comparing.group}`;
    const what = document.createElement('span');
    what.className = 'what';
    what.textContent = view ? `“${view.prompt}” · test: ${view.test || 'none'}` : 'comparing… (tests may run)';
    const actions = document.createElement('div');
    actions.className = 'actions';
    actions.append(button('Reload', 'reload', loadCompare), button('Close', 'close-compare', closeCompare));
    const parts = [title, what, actions];
    if (comparing.said) {
      const said = document.createElement('p');
      said.className = 'said';
      said.textContent = comparing.said;
      parts.push(said);
    }
    $('compare-head').replaceChildren(...parts);
    if (!view) {
      $('compare-body').replaceChildren();
      return;
    }
    const cards = view.members.map((member) => {
      const card = document.createElement('article');
      card.className = 'member';
      card.dataset.worktree = member.worktree;
      const head = document.createElement('header');
      const name = document.createElement('span');
      name.className = 'name';
      name.textContent = member.worktree;
      const state = document.createElement('span');
      state.className = 'state';
      state.textContent = `${member.agent} · ${member.agent_state || member.pane_status} · PORT ${member.port}`;
      head.append(name, state);
      const stat = document.createElement('p');
      stat.className = 'stat';
      stat.textContent = `${member.files} file${member.files === 1 ? '' : 's'} · +${member.added} −${member.removed}`;
      const test = document.createElement('p');
      test.className = `test ${member.test && member.done ? (member.test.passed ? 'passed' : 'failed') : ''}`;
      test.textContent = `test: ${testText(member, view)}`;
      card.append(head, stat, test);
      if (member.test && !member.test.passed && member.done) {
        const out = document.createElement('pre');
        out.className = 'output';
        out.textContent = member.test.output.split('\n').slice(-5).join('\n');
        card.append(out);
      }
      const buttons = document.createElement('div');
      buttons.className = 'actions';
      if (!member.problem) {
        buttons.append(
          button('Changes', 'changes', () => { closeCompare(); openChanges(member.pane, member.worktree); }),
          button('Pick', 'pick', () => pickMember(member)),
        );
      }
      card.append(buttons);
      return card;
    });
    $('compare-body').replaceChildren(...cards);
  }

  async function pickMember(member) {
    const group = comparing.group;
    if (!confirm(`Pick ${member.worktree}: commit its uncommitted work and merge it into the branch it started from?`)) return;
    let picked;
    try {
      picked = await api('POST', `/api/groups/${encodeURIComponent(group)}/pick`, { member: member.worktree });
    } catch (err) {
      showError(`Not merged: ${err.message}`);
      return;
    }
    comparing.said = `Merged ${picked.merged.branch} into ${picked.merged.into}: ${picked.merged.commit.slice(0, 12)}`;
    const others = picked.others.map((o) => o.worktree);
    if (others.length && confirm(`Discard the other ${others.length} worktree(s) (${others.join(', ')}), with their work?`)) {
      for (const other of others) {
        try {
          await api('DELETE', `/api/worktrees/${encodeURIComponent(other)}`);
        } catch (err) {
          showError(`${other}: ${err.message}`);
        }
      }
      comparing.said += `; discarded ${others.join(', ')}`;
    }
    renderCompare();
    refreshWorktrees(true);
    scheduleOverview();
  }

  // ---- events -----------------------------------------------------------------

  let overviewTimer = null;
  function scheduleOverview() {
    clearTimeout(overviewTimer);
    overviewTimer = setTimeout(refreshOverview, 80);
  }

  let eventsBackoff = 250;
  function followEvents() {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const socket = new WebSocket(`${scheme}://${location.host}/ws/events`);
    socket.onopen = () => { eventsBackoff = 250; scheduleRefresh(); refreshOverview(); };
    socket.onmessage = () => { scheduleRefresh(); scheduleOverview(); };
    socket.onclose = () => {
      setTimeout(followEvents, eventsBackoff);
      eventsBackoff = Math.min(eventsBackoff * 2, 8000);
    };
  }

  // ---- the phone: pairing, push, devices ------------------------------------

  // `/pair#CODE`: this device claims the pairing, then waits for the person
  // at the terminal (or the page) that showed the code to confirm it.
  async function pairThisDevice() {
    document.body.classList.add('pairing');
    $('pair').hidden = false;
    const code = decodeURIComponent(location.hash.slice(1));
    history.replaceState(null, '', '/pair');
    const agent = navigator.userAgent;
    const browser = /Firefox\//.test(agent) ? 'Firefox' : /Edg\//.test(agent) ? 'Edge' : /Chrome\//.test(agent) ? 'Chrome' : /Safari\//.test(agent) ? 'Safari' : 'Browser';
    const system = /Android/.test(agent) ? 'Android' : /iPhone|iPad/.test(agent) ? 'iOS' : /Mac OS/.test(agent) ? 'macOS' : /Linux/.test(agent) ? 'Linux' : /Windows/.test(agent) ? 'Windows' : '';
    $('pair-name').value = `${browser}${system ? ` on ${system}` : ''}`;
    const state = (text) => { $('pair-state').textContent = text; };
    if (!code) { state('This address carries no pairing code: scan the QR code again.'); return; }
    $('pair-go').addEventListener('click', async () => {
      $('pair-go').disabled = true;
      let claim;
      try {
        claim = (await api('POST', '/pair/claim', { code, name: $('pair-name').value })).claim;
      } catch (err) {
        state(visible(err.message));
        return;
      }
      state('Waiting: confirm this device where the code was shown.');
      for (;;) {
        await new Promise((r) => setTimeout(r, 1000));
        let reply;
        try {
          reply = await api('POST', '/pair/status', { claim });
        } catch (err) {
          state(visible(err.message));
          return;
        }
        if (reply.status === 'paired') { location.replace('/'); return; }
        if (reply.status === 'denied') { state('Refused where the code was shown.'); return; }
      }
    }, { once: true });
  }

  function showPhone(show) {
    $('phone').hidden = !show;
    document.body.classList.toggle('phone-open', show);
    $('phone-button').setAttribute('aria-pressed', String(show));
    if (show) { refreshPhone(); pollClaims(); }
  }

  async function refreshPhone() {
    await Promise.all([renderPush(), renderDevices()]);
  }

  async function pushRegistration() {
    if (!('serviceWorker' in navigator) || !('PushManager' in window)) return null;
    return navigator.serviceWorker.ready;
  }

  async function renderPush() {
    const registration = await pushRegistration();
    const subscription = registration ? await registration.pushManager.getSubscription() : null;
    $('push-state').textContent = !registration
      ? 'This browser cannot receive push here: it needs HTTPS with a certificate it trusts (see docs/browser.md); on iOS, add the page to the home screen first.'
      : subscription ? 'This device is notified when an agent needs you.' : 'This device is not notified.';
    $('push-on').hidden = !registration || Boolean(subscription);
    $('push-off').hidden = !subscription;
  }

  async function pushOn() {
    try {
      const registration = await pushRegistration();
      if (!registration) throw new Error('push is not available in this browser here');
      if (await Notification.requestPermission() !== 'granted') throw new Error('notifications are not allowed for this page');
      const { public_key: key } = await api('GET', '/api/push/vapid');
      const bytes = Uint8Array.from(atob(key.replaceAll('-', '+').replaceAll('_', '/')), (c) => c.charCodeAt(0));
      const subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: bytes });
      await api('POST', '/api/push/subscriptions', { ...subscription.toJSON(), content_free: $('push-bare').checked });
    } catch (err) {
      showError(`Notifications: ${err.message}`);
    }
    renderPush();
  }

  async function pushOff() {
    try {
      const registration = await pushRegistration();
      const subscription = registration && await registration.pushManager.getSubscription();
      if (subscription) {
        await api('DELETE', '/api/push/subscriptions', { endpoint: subscription.endpoint });
        await subscription.unsubscribe();
      }
    } catch (err) {
      showError(`Notifications: ${err.message}`);
    }
    renderPush();
  }

  async function newPairing() {
    try {
      const pairing = await api('POST', '/api/pairings');
      $('pair-qr').src = `data:image/svg+xml;base64,${btoa(pairing.qr_svg)}`;
      $('pair-url').textContent = `Or open ${pairing.url} (works once, for ${pairing.expires_in_s} s).`;
      $('pair-code').hidden = false;
      pollClaims();
    } catch (err) {
      showError(`Pairing: ${err.message}`);
    }
  }

  // Claims wait for this page's Confirm or Deny while the panel is open.
  let claimsTimer = null;
  async function pollClaims() {
    clearTimeout(claimsTimer);
    if ($('phone').hidden) return;
    try {
      const claims = await api('GET', '/api/pairings');
      $('pair-claims').replaceChildren(...claims.map((claim) => {
        const row = document.createElement('p');
        row.className = 'claim';
        row.append(`${visible(claim.name)} (from ${claim.from}) asks to pair. `,
          button('Confirm', 'approve', () => decide(claim.id, 'confirm')),
          button('Deny', 'deny', () => decide(claim.id, 'deny')));
        return row;
      }));
    } catch (err) {
      showError(`Pairing: ${err.message}`);
    }
    claimsTimer = setTimeout(pollClaims, 2000);
  }

  async function decide(id, verdict) {
    try {
      await api('POST', `/api/pairings/${encodeURIComponent(id)}/${verdict}`);
      if (verdict === 'confirm') $('pair-code').hidden = true;
    } catch (err) {
      showError(`Pairing: ${err.message}`);
    }
    pollClaims();
    setTimeout(renderDevices, 1500);
  }

  async function renderDevices() {
    let devices;
    try {
      devices = await api('GET', '/api/devices');
    } catch (err) {
      showError(`Devices: ${err.message}`);
      return;
    }
    const rows = devices.map((device) => {
      const row = document.createElement('p');
      row.className = 'device';
      row.dataset.device = device.id;
      const seen = device.last_seen_ms ? `seen ${ago(device.last_seen_ms)} ago` : 'not seen since pairing';
      row.append(`${visible(device.name)} · paired ${ago(device.paired_at_ms)} ago · ${seen} · ${device.push_subscriptions} push `,
        button('Revoke', 'deny', async () => {
          try { await api('DELETE', `/api/devices/${encodeURIComponent(device.id)}`); } catch (err) { showError(`Devices: ${err.message}`); }
          renderDevices();
        }));
      return row;
    });
    $('devices').replaceChildren(...(rows.length ? rows : [note('No paired devices.')]));
  }

  // ---- start ------------------------------------------------------------------

  async function start() {
    if ('serviceWorker' in navigator) {
      navigator.serviceWorker.register('/sw.js').catch((err) => console.warn('service worker:', err));
    }
    if (location.pathname === '/pair') return pairThisDevice();
    const params = new URLSearchParams(location.search);
    let defaults;
    try {
      defaults = await api('GET', '/api/web/defaults');
      started = true;
      scope.project = params.get('project') || defaults.project;
      scope.session = params.get('session') || defaults.session;
    } catch (err) {
      showError(err.message);
      return;
    }
    $('where').textContent = `${scope.project} · ${scope.session}`;
    $('add').addEventListener('click', addTab);
    $('show-all').addEventListener('click', () => {
      if (windowed.id !== null) closeWindow();
      showOverview(!overviewShown);
    });
    $('window-close').addEventListener('click', closeWindow);
    $('phone-button').addEventListener('click', () => showPhone($('phone').hidden));
    $('phone-close').addEventListener('click', () => showPhone(false));
    $('push-on').addEventListener('click', pushOn);
    $('push-off').addEventListener('click', pushOff);
    $('pair-new').addEventListener('click', newPairing);
    $('needs').addEventListener('click', () => showOverview(true));
    $('elsewhere').addEventListener('click', () => showOverview(true));
    $('changes-button').addEventListener('click', () => {
      if (active) openChanges(active, tabs.find((t) => t.id === active)?.name || active);
    });
    $('tabs').addEventListener('pointerdown', () => { pressing = true; });
    window.addEventListener('pointerup', () => { if (pressing) { pressing = false; render(); } });
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && changes.pane && !e.target.closest?.('textarea')) {
        closeChanges();
        return;
      }
      if (e.key === 'Escape' && comparing.group) {
        closeCompare();
        return;
      }
      const action = shortcut(e);
      if (!action) return;
      e.preventDefault();
      action();
    });
    new ResizeObserver(() => views.get(active)?.fitNow()).observe($('terminals'));
    await refresh();
    followEvents();
    // Every agent-state change of an agent started as a pane's command arrives as
    // an event (and refreshes at once); one typed into a shell is not pushed, so
    // look again every few seconds too.
    setInterval(() => { if (!document.hidden) { scheduleRefresh(); scheduleOverview(); } }, 3000);
    // A link to one pane (a notification's url): open it as a tab.
    const wanted = params.get('pane');
    // The first view is what runs: the overview of every session, unless a
    // project was named (in the address or `fugue web --project`) and has tabs,
    // or the address asks for a view.
    const named = params.has('project') || defaults.project_given;
    const view = params.get('view');
    await refreshOverview();
    // On a phone, "needs you" is the first screen whenever anything waits.
    const phone = matchMedia('(max-width: 600px)').matches;
    const waits = overviewRows.some((r) => r.needs_you);
    if (view === 'all' || (!wanted && view !== 'tabs' && ((phone && waits) || !named || tabs.length === 0))) showOverview(true);
    if (wanted) {
      await refreshOverview();
      const row = overviewRows.find((r) => r.pane.id === wanted);
      if (row) openPane(row);
      else showError(`No pane ${wanted} (it may have ended)`);
    }
    // A link to a window (`?window=@N`): its panes side by side.
    const linkedWindow = params.get('window');
    if (linkedWindow) {
      await refreshOverview();
      if (windowRows(linkedWindow).length) openWindow(linkedWindow);
      else showError(`No window ${linkedWindow} (its panes may have ended)`);
    }
  }

  start();
})();
