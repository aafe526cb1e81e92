// Live Memory dashboard: refreshes a server-rendered fragment (the actors' rows) by short
// polling, only while the tab is visible, so a hidden or closed page costs the server nothing.
"use strict";
(function () {
  const target = document.querySelector("[data-poll]");
  if (!target) {
    return;
  }
  const url = target.getAttribute("data-poll");
  const every = Number(target.getAttribute("data-poll-ms")) || 2000;
  let timer = null;

  function schedule() {
    if (timer === null && !document.hidden) {
      timer = window.setTimeout(refresh, every);
    }
  }

  async function refresh() {
    timer = null;
    if (document.hidden) {
      return;
    }
    try {
      const response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
      if (response.ok) {
        target.innerHTML = await response.text();
        document.body.setAttribute("data-refreshed", String(Date.now()));
      }
    } catch (error) {
      // The server is restarting: the next tick tries again.
    }
    schedule();
  }

  document.addEventListener("visibilitychange", schedule);
  schedule();
})();
