// The panels htmx swaps in: never an older render over a newer one, and a page that
// another tab made stale starts over.
import { byId } from "./page.js";

// Two answers can arrive out of order (Double-submit): never let an older render of
// the panels replace a newer one. The server stamps each render with the lab's version.
function keepNewest(evt) {
  const current = byId("panels");
  const target = evt.detail.target;
  if (!current || (target !== current && target.id !== "panels-slot")) return;
  const match = /data-version="(\d+)"/.exec(evt.detail.serverResponse || "");
  if (match && Number(match[1]) < Number(current.dataset.version)) evt.detail.shouldSwap = false;
}

// Another tab switched this lab's scenario, language or presenter mode: this page is
// stale, start over.
function reloadIfStale() {
  const panels = byId("panels");
  const layout = document.querySelector("main.layout");
  const page = byId("page");
  if (!panels || !layout || !page) return;
  const present = page.classList.contains("present") ? "true" : "false";
  if (panels.dataset.scenario !== layout.dataset.scenario ||
      panels.dataset.lang !== document.documentElement.lang ||
      panels.dataset.present !== present) {
    window.location.reload();
  }
}

export function start() {
  document.body.addEventListener("htmx:beforeSwap", keepNewest);
  document.body.addEventListener("htmx:afterSwap", reloadIfStale);
}
