// The operations lab's page: the buttons that send requests a form cannot (Retry them
// all, a prefetch, a chat app's unfurl, the clock), and the view counter that follows
// each pixel request. Every request is a real one to the lab's API or its pixel.

import { hideNotice, showNotice, t } from "./js/page.js";

const main = document.querySelector(".natural-layout");

// The counter, the card and the timeline, after a pixel request has been answered.
function refreshPixel() {
  if (!main || !window.htmx) return;
  htmx.ajax("GET", main.dataset.natural, { target: "#natural-pixel", swap: "outerHTML" });
}

// The Attempts field as the API takes it: a number, or the text as typed (the server
// answers 422 for anything but a whole number 1-10, and says why).
function attempts() {
  const raw = document.getElementById("ops-times").value.trim();
  return raw !== "" && Number.isFinite(Number(raw)) ? Number(raw) : raw;
}

// A problem+json answer, shown next to the form in the page's words.
async function showProblem(response) {
  let d = {};
  try {
    d = await response.json();
  } catch (e) {
    d = {};
  }
  showNotice(response.status + " " + (d.title || t("error")) + ": " + (d.detail || ""));
}

// Retry every operation in turn (one request each, the page's Attempts and Dedup), then
// show the table once: nine real POSTs to api/apply. The first answer is checked: a bad
// Attempts value gets its one 422 shown, not nine.
async function retryAll(button) {
  const times = attempts();
  const dedup = document.getElementById("ops-dedup").checked;
  button.disabled = true;
  hideNotice();
  try {
    for (const row of document.querySelectorAll("tr[data-operation]")) {
      const response = await fetch(button.dataset.retryAll, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ operation: row.dataset.operation, times: times, dedup: dedup }),
      });
      if (!response.ok) {
        await showProblem(response);
        return;
      }
    }
  } finally {
    button.disabled = false;
  }
  const part = main.dataset.natural.replace(/pixel$/, "operations");
  htmx.ajax("GET", part, { target: "#natural-operations", swap: "outerHTML" });
}

let loads = 0;
function fresh(url) {
  loads += 1;
  return url + "&load=p" + Date.now().toString(36) + loads;
}

// A link prefetch, as a browser makes for <link rel=prefetch>: it says
// "Sec-Purpose: prefetch" and carries the cookie.
function prefetch(url) {
  const link = document.createElement("link");
  link.rel = "prefetch";
  link.href = fresh(url);
  link.addEventListener("load", refreshPixel);
  link.addEventListener("error", refreshPixel);
  document.head.appendChild(link);
}

// A chat app fetching the link for its preview: its own client, without the reader's cookie.
function unfurl(url) {
  fetch(fresh(url), { credentials: "omit", cache: "no-store" }).finally(refreshPixel);
}

function advance(seconds) {
  fetch(main.dataset.clock, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ advance_s: seconds }),
  }).finally(refreshPixel);
}

// A row retried with other Attempts or Dedup than the fields now hold is from before the
// change: it is dimmed and says with which, so it is not read as the new settings' answer.
function markStale() {
  const field = document.getElementById("ops-times");
  const dedup = document.getElementById("ops-dedup");
  if (!field || !dedup) return;
  document.querySelectorAll("tr[data-operation][data-times]").forEach(function (row) {
    const stale = String(attempts()) !== row.dataset.times ||
      String(dedup.checked) !== row.dataset.dedup;
    row.classList.toggle("stale", stale);
    const note = row.querySelector(".stale-note");
    if (note) note.hidden = !stale;
  });
}

document.addEventListener("input", function (evt) {
  if (evt.target.id === "ops-times") markStale();
});
document.addEventListener("change", function (evt) {
  if (evt.target.id === "ops-dedup") markStale();
});
document.body.addEventListener("htmx:afterSwap", markStale);
markStale();

// Presenter mode: when the card's numbers or ticks change, they come on screen. In the
// card's narrow column they sit under its buttons, below a 720 px screen's fold, and a
// presenter remote cannot scroll (run N: the room never saw the ✓).
function proofOf(card) {
  const proof = card && (card.querySelector(".numbers") || card.querySelector(".checks"));
  const state = proof ? card.querySelectorAll(".checks li.met").length + "|" +
    proof.textContent.trim() : "";
  return [proof, state];
}
let proofSeen = proofOf(document.querySelector("#natural-lesson"))[1]; // as the page opened
document.body.addEventListener("htmx:afterSettle", function () {
  const [proof, state] = proofOf(document.querySelector("#page.present #natural-lesson"));
  if (!proof || state === proofSeen) return;
  proofSeen = state;
  const by = proof.getBoundingClientRect().bottom - (window.innerHeight - 8);
  if (by > 0) window.scrollBy({top: by, behavior: "instant"});
});

document.addEventListener("click", function (evt) {
  const button = evt.target.closest("button");
  if (!button) return;
  if (button.dataset.retryAll) retryAll(button);
  else if (button.dataset.prefetch) prefetch(button.dataset.prefetch);
  else if (button.dataset.unfurl) unfurl(button.dataset.unfurl);
  else if (button.dataset.advance) advance(Number(button.dataset.advance));
});

// The article's pixel image loaded (the page's first load, or Reload the article).
document.addEventListener(
  "load",
  function (evt) {
    if (evt.target.matches && evt.target.matches("img[data-pixel]")) refreshPixel();
  },
  true,
);
// It may have loaded before this module ran.
const first = document.querySelector("img[data-pixel]");
if (first && first.complete) refreshPixel();
