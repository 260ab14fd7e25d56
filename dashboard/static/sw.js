// Sossego service worker: shows the alerts pushed by the central service
// (Web Push, payload {title, body, url, tag}) and opens the alert on tap.
"use strict";
self.addEventListener("push", (ev) => {
  let d = {};
  try { d = ev.data ? ev.data.json() : {}; } catch (e) { d = { title: "Sossego", body: ev.data ? ev.data.text() : "" }; }
  ev.waitUntil(self.registration.showNotification(d.title || "Sossego", {
    body: d.body || "", tag: d.tag || "sossego", renotify: true, requireInteraction: true,
    icon: "/static/icon.svg", data: { url: d.url || "/#/alertas" },
  }));
});
self.addEventListener("notificationclick", (ev) => {
  ev.notification.close();
  ev.waitUntil(self.clients.openWindow((ev.notification.data && ev.notification.data.url) || "/#/alertas"));
});
