// The operations lab's page: the buttons that send requests a form cannot (Retry them
// all, a prefetch, a chat app's unfurl, the clock), and the view counter that follows
// each pixel request. Every request is a real one to the lab's API or its pixel.

const main = document.querySelector(".natural-layout");

// The counter, the card and the timeline, after a pixel request has been answered.
function refreshPixel() {
  if (!main || !window.htmx) return;
  htmx.ajax("GET", main.dataset.natural, { target: "#natural-pixel", swap: "outerHTML" });
}

// Retry every operation in turn (one request each, the page's Attempts and Dedup), then
// show the table once: nine real POSTs to api/apply.
async function retryAll(button) {
  const times = Number(document.getElementById("ops-times").value);
  const dedup = document.getElementById("ops-dedup").checked;
  button.disabled = true;
  try {
    for (const row of document.querySelectorAll("tr[data-operation]")) {
      await fetch(button.dataset.retryAll, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ operation: row.dataset.operation, times: times, dedup: dedup }),
      });
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
