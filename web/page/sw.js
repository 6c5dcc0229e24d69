// fugue's service worker: the page's static shell, offline, and Web Push.
//
// - Cached: the shell only (the page, its bundle, the manifest and icons),
//   fetched from the network first and from the cache when that fails, so an
//   installed page opens offline and says so. Never `/api`, `/ws`, `/pair` or
//   `/push` (what those say is live, or a secret).
// - A push (sent by fugued, see docs/browser.md) becomes a notification; a
//   permission's carries Approve and Deny, each with a one-use token bound to
//   that pane, prompt and answer, which `POST /push/answer` spends.
// - Tapping a notification opens the page on that pane.
'use strict';

const SHELL = 'fugue-shell-v1';
const FILES = ['/', '/app.js', '/app.css', '/manifest.webmanifest', '/icon-192.png', '/icon-512.png'];

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(SHELL).then((cache) => cache.addAll(FILES)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k !== SHELL).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== self.location.origin) return;
  // A navigation is the page whatever its query; anything else only if it is a shell file.
  const file = request.mode === 'navigate' ? '/' : url.pathname;
  if (!FILES.includes(file) || (request.mode === 'navigate' && url.pathname !== '/')) return;
  event.respondWith(
    fetch(request)
      .then((response) => {
        if (response.ok && response.type === 'basic') {
          const copy = response.clone();
          caches.open(SHELL).then((cache) => cache.put(file, copy));
        }
        return response;
      })
      .catch(() => caches.match(file).then((cached) => cached || Response.error())),
  );
});

self.addEventListener('push', (event) => {
  event.waitUntil(show(event.data));
});

// What a push says, as a notification (a payload that is no JSON is shown as text).
function show(data) {
  let push;
  try {
    push = data ? data.json() : {};
  } catch {
    push = { title: 'fugue', body: data ? data.text() : '' };
  }
  const actions = Array.isArray(push.actions) ? push.actions : [];
  return self.registration.showNotification(String(push.title || 'fugue'), {
    body: String(push.body || ''),
    tag: String(push.tag || 'fugue'),
    renotify: true,
    requireInteraction: push.event === 'permission' || push.event === 'question',
    icon: '/icon-192.png',
    badge: '/icon-192.png',
    actions: actions.map((a) => ({ action: String(a.action), title: String(a.title) })),
    data: { url: String(push.url || '/'), pane: push.pane || null, actions },
  });
}

self.addEventListener('notificationclick', (event) => {
  event.waitUntil(clicked(event.notification, event.action));
});

// A tap (`action` empty) opens the page on the pane; Approve or Deny spends
// its token and says what came of it.
async function clicked(notification, action) {
  const data = notification.data || {};
  notification.close();
  const chosen = (data.actions || []).find((a) => a.action === action);
  if (!chosen) return open(data.url || '/');
  return answer(chosen.token, data);
}

async function answer(token, data) {
  let reply;
  let text;
  try {
    const response = await fetch('/push/answer', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    reply = await response.json().catch(() => ({}));
    if (response.ok) text = reply.already ? `Already ${reply.answer}: nothing sent` : `${reply.answer[0].toUpperCase()}${reply.answer.slice(1)}`;
    else text = `Not answered: ${reply.message || response.status}`;
  } catch (err) {
    reply = { error: String(err) };
    text = 'Not answered: fugue is not reachable';
  }
  await self.registration.showNotification('fugue', {
    body: text,
    tag: `${data.pane || 'fugue'}-answer`,
    icon: '/icon-192.png',
    data: { url: data.url || '/', actions: [] },
  });
  return reply;
}

async function open(url) {
  const target = new URL(url, self.location.origin).href;
  // Focusing is allowed only while a real click is handled: where it is not,
  // the page is still there.
  const focus = (client) => Promise.resolve(client.focus()).catch(() => client);
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const same = windows.find((w) => w.url === target);
  if (same) return focus(same);
  if (windows.length && 'navigate' in windows[0]) {
    const navigated = await windows[0].navigate(target);
    return focus(navigated || windows[0]);
  }
  return self.clients.openWindow(target);
}

// For tests, which cannot make a trusted notificationclick: the same handler.
self.fugue = { clicked, show };
