// Live Memory dashboard: keeps what is shown current by short polling, only while the tab is
// visible, so a hidden or closed page costs the server nothing.
// - The actors page refreshes a server-rendered fragment (the actors' rows), [data-poll].
// - The overview and a workspace's page redraw their <main> from the same URL, [data-live-ms],
//   except while the reader is typing in one of its fields.
"use strict";
(function () {
  function poll(every, refresh) {
    let timer = null;
    function schedule() {
      if (timer === null && !document.hidden) {
        timer = window.setTimeout(tick, every);
      }
    }
    async function tick() {
      timer = null;
      if (!document.hidden) {
        try {
          if (await refresh()) {
            document.body.setAttribute("data-refreshed", String(Date.now()));
          }
        } catch (error) {
          // The server is restarting: the next tick tries again.
        }
      }
      schedule();
    }
    document.addEventListener("visibilitychange", schedule);
    schedule();
  }

  const rows = document.querySelector("[data-poll]");
  if (rows) {
    const url = rows.getAttribute("data-poll");
    poll(Number(rows.getAttribute("data-poll-ms")) || 2000, async function () {
      const response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
      if (!response.ok) {
        return false;
      }
      rows.innerHTML = await response.text();
      return true;
    });
  }

  const main = document.querySelector("main[data-live-ms]");
  if (main) {
    poll(Number(main.getAttribute("data-live-ms")) || 5000, async function () {
      const typing = document.activeElement;
      if (typing && main.contains(typing) && typing.matches("input, textarea, select")) {
        return false;
      }
      const response = await fetch(window.location.href, {
        credentials: "same-origin",
        cache: "no-store",
      });
      if (!response.ok) {
        return false;
      }
      const page = new DOMParser().parseFromString(await response.text(), "text/html");
      const fresh = page.querySelector("main");
      if (!fresh) {
        return false;
      }
      main.innerHTML = fresh.innerHTML;
      return true;
    });
  }
})();
