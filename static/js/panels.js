// The panels and what follows them: which render htmx may swap in, the clock line, the
// settings form, presenter mode and the sequence diagram as PNG (step mode's lanes and
// the code view's line: stepping.js).
import { byId, screenTop, showNotice, t } from "./page.js";
import { followCode, followedLine, start as startStepping } from "./stepping.js";

// The panels htmx swaps in: never an older render over a newer one, and a page that
// another tab made stale starts over.

// Two answers can arrive out of order (Double-submit): never let an older render of
// the panels replace a newer one. The server stamps each render with the lab's version.
function keepNewest(evt) {
  const current = byId("panels");
  const target = evt.detail.target;
  if (!current || (target !== current && target.id !== "panels-slot")) return;
  const match = /data-version="(\d+)"/.exec(evt.detail.serverResponse || "");
  if (match && Number(match[1]) < Number(current.dataset.version)) evt.detail.shouldSwap = false;
}

// Another tab switched this lab's scenario, its fix (the form's key with it), language or
// presenter mode: this page is stale, start over. Not while this page is leaving for the
// next (it pressed Next lesson, say): a swap that lands meanwhile shows the lab its own
// press changed, not another tab.
let leaving = false;
window.addEventListener("beforeunload", function () { leaving = true; });
document.addEventListener("submit", function (evt) {
  if (!evt.defaultPrevented && !evt.target.hasAttribute("hx-post")) leaving = true;
});

function reloadIfStale() {
  if (leaving) return;
  const panels = byId("panels");
  const layout = document.querySelector("main.layout");
  const page = byId("page");
  if (!panels || !layout || !page) return;
  const present = page.classList.contains("present") ? "true" : "false";
  const case_ = panels.dataset.scenario !== layout.dataset.scenario ||
    panels.dataset.fixed !== layout.dataset.fixed;
  if (case_ ||
      panels.dataset.lang !== document.documentElement.lang ||
      panels.dataset.present !== present) {
    // A lesson or scenario opened elsewhere started the lab afresh: what this page showed
    // (a paused request, the ledger) is gone, and the page after the reload says why.
    startOver(Boolean(panels.dataset.scenario) && case_);
  }
}

const AFRESH = "lab-started-afresh-elsewhere";

// Load the page again; ``afresh``: the page after the reload says the lab started afresh.
function startOver(afresh) {
  if (afresh) {
    try { sessionStorage.setItem(AFRESH, "1"); } catch (e) { /* storage off: no notice */ }
  }
  window.location.reload();
}

// The queue lab's page, which has no payment panels: a poll (a GET, never this page's own
// press) that brings another lesson or scenario than this page showed means another tab
// opened it, and the lab started afresh: start over too, and say why (run T: the card
// turned into another lesson without a word, its message gone).
let caseShown = null;
function reloadIfCaseElsewhere(evt) {
  const card = document.querySelector("[data-scenario-open]");
  const open = card ? card.dataset.scenarioOpen : "";
  const config = evt && evt.detail && evt.detail.requestConfig;
  const poll = config && config.verb === "get";
  if (poll && !leaving && !byId("panels") && caseShown !== null && open && open !== caseShown) {
    startOver(true);
    return;
  }
  caseShown = open;
}

// Another tab pressed Reset: the requests this page showed (a paused one too) are gone,
// and the page says so rather than empty itself without a word.
let resetsSeen = null; // the lab's reset count this page last showed
let ownReset = false; // this tab pressed Reset (or Shift+X) and waits for its answer
let pausedShown = false; // the panels a swap replaces showed a request paused in step mode

// A Reset (here or in another tab) puts the lab's order back to its first: every tab's
// form follows, its key with it (run AA: two tabs showed 44 and 45, the lab 42).
function followOrder(order) {
  const field = byId("order-id");
  if (!field || !order || field.value === order) return;
  field.value = order;
  field.dispatchEvent(new Event("input", {bubbles: true})); // js/key-field.js: the key follows
}

function noticeResetElsewhere() {
  const panels = byId("panels");
  if (!panels || panels.dataset.resets === undefined) return;
  const resets = Number(panels.dataset.resets);
  if (resetsSeen !== null && resets > resetsSeen && !ownReset) {
    showNotice(t(pausedShown ? "reset_elsewhere_paused" : "reset_elsewhere"), false);
  }
  if (resetsSeen !== null && resets > resetsSeen) followOrder(panels.dataset.order);
  if (resetsSeen === null || resets > resetsSeen) ownReset = false;
  resetsSeen = resets;
}

// Another tab opened a lesson or a scenario, or left it: the card a poll brought names the
// open one, and the header's menu follows (it read "free play" over an open lesson).
function followScenarioMenu() {
  const menu = byId("scenario-select");
  if (!menu || document.activeElement === menu) return;
  const card = document.querySelector("[data-scenario-open]");
  const open = card ? card.dataset.scenarioOpen : "none";
  if (Array.from(menu.options).some((option) => option.value === open)) menu.value = open;
}

function startPanels() {
  document.body.addEventListener("htmx:afterSwap", followScenarioMenu);
  document.body.addEventListener("htmx:beforeSwap", keepNewest);
  document.body.addEventListener("htmx:afterSwap", reloadIfStale);
  document.body.addEventListener("htmx:beforeSwap", function () { // any swap may carry the panels
    pausedShown = document.querySelector(".step-lanes.live") !== null;
  });
  document.body.addEventListener("htmx:afterSwap", noticeResetElsewhere);
  document.body.addEventListener("htmx:afterSwap", reloadIfCaseElsewhere);
  reloadIfCaseElsewhere(null);
  document.body.addEventListener("htmx:beforeRequest", function (evt) {
    const elt = evt.detail.elt;
    if (elt && elt.matches && elt.matches("[data-action='Reset']")) ownReset = true;
  });
  noticeResetElsewhere();
  let afresh = null;
  try {
    afresh = sessionStorage.getItem(AFRESH);
    sessionStorage.removeItem(AFRESH);
  } catch (e) { /* storage off */ }
  if (afresh) sayStartedAfresh();
}

// Above both columns, where the page opens after its reload: under the order form, the
// notice sat at the projector's bottom edge, the card it explains elsewhere (run AC).
// It stays until the attendee's next press, from which on the page shows what they did.
// Presenter mode scrolls past the top to the card: its client column, which scrolls on
// its own, brings the notice on screen there (run Y).
function sayStartedAfresh() {
  const line = byId("afresh");
  if (!line || document.querySelector("#page.present")) {
    showNotice(t("started_afresh"));
    return;
  }
  line.textContent = t("started_afresh");
  line.hidden = false;
  document.body.addEventListener("htmx:beforeRequest", function hide(evt) {
    if (evt.detail.elt && evt.detail.elt.id === "panels") return; // a poll, not a press
    line.hidden = true;
    document.body.removeEventListener("htmx:beforeRequest", hide);
  });
}

// The lab clock's line beside its buttons follows the panels (+1 h / +25 h, Reset): the
// panels carry the clock's time, the line outside them says it.

function startClock() {
  document.body.addEventListener("htmx:afterSwap", function () {
    const panels = byId("panels");
    const out = byId("clock-now");
    if (panels && out && panels.dataset.clock && out.textContent !== panels.dataset.clock) {
      out.textContent = panels.dataset.clock;
    }
  });
}

// Presenter mode: when requests stop in step mode, bring their lanes on screen (a
// presenter remote cannot scroll) with the code's line the lane stepped last stands on,
// and above them the lesson's stepping instruction (which heads the step card then):
// its top when all of that fits below it, else the code's line (and two lines after it)
// at the fold, the lanes' top never above the screen. A later step scrolls only when a lane or that line has
// left the screen: stepping keeps the room's view still while it can.

let lanesShown = false;

function lanesScroll(first) {
  const lanes = document.querySelector("#page.present #step .step-lanes");
  if (!lanes) return 0;
  const box = lanes.getBoundingClientRect();
  const fold = window.innerHeight - 8;
  const edge = screenTop();
  const line = followedLine();
  const lineBox = line && line.getBoundingClientRect();
  const bottom = lineBox ? Math.max(box.bottom, lineBox.bottom + 2 * lineBox.height) : box.bottom;
  // A pixel of rounding is not worth a jump of the room's view.
  if (!first && box.top >= edge - 1 && bottom <= fold + 1 && (!lineBox || lineBox.top >= edge - 1)) {
    return 0;
  }
  const steps = document.querySelector("#page.present #step .step-instruction") ||
    document.querySelector("#page.present #lesson .lesson-steps") || byId("step");
  const top = steps.getBoundingClientRect().top - edge - 8;
  return Math.min(Math.max(top, bottom - fold), box.top - edge - 8);
}

function startPresenter() {
  // "↓ The server…" scrolls the client column only: the results beside it stay put.
  document.addEventListener("click", function (evt) {
    const link = evt.target.closest && evt.target.closest("#page.present .to-server");
    const column = link && link.closest(".client");
    const server = byId("settings");
    if (!column || !server) return;
    evt.preventDefault();
    const by = server.getBoundingClientRect().top - column.getBoundingClientRect().top;
    column.scrollBy({top: by, behavior: "instant"});
  });
  document.body.addEventListener("htmx:afterSettle", showLanes);
  // A reload with requests paused: the lanes on screen as after a step (once the page,
  // and the browser's restored scroll, stand).
  window.addEventListener("load", function () { requestAnimationFrame(showLanes); });
}

function showLanes() {
  const step = document.querySelector("#page.present #step [data-step-label]");
  if (step) followCode(); // the code box's own scroll first: the line's place depends on it
  const by = step ? lanesScroll(!lanesShown) : 0;
  if (by !== 0) window.scrollBy({top: by, behavior: "instant"});
  lanesShown = step !== null;
}

// Download the sequence diagram as PNG, for slides: the same SVG, drawn on a canvas.

function download(blob) {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = "idempotency-sequence.png";
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
}

function startDiagramPng() {
  document.body.addEventListener("click", function (evt) {
    const button = evt.target.closest && evt.target.closest("[data-png-from]");
    if (!button) return;
    const image = new Image();
    image.onload = function () {
      const canvas = document.createElement("canvas");
      canvas.width = image.naturalWidth * 2; // twice the pixels: sharp on a projector
      canvas.height = image.naturalHeight * 2;
      const context = canvas.getContext("2d");
      context.scale(2, 2);
      context.drawImage(image, 0, 0);
      canvas.toBlob(download, "image/png");
    };
    image.src = button.dataset.pngFrom + "?v=" + Date.now();
  });
}

// The server settings form: the failure lab stays open (or closed) when the form is
// swapped in anew, and the latency slider says its value.

let failuresOpen = null; // the failure lab's <details> state before the swap

// The line under the fault buttons follows the panels' own "Armed: …" (the settings form
// is not redrawn when this tab arms a fault, and a fault disarms itself once it fires).
function syncArmed() {
  const line = document.querySelector("#settings .armed-now");
  if (!line) return;
  const armed = document.querySelector("#explain .armed");
  const text = armed ? armed.textContent.trim() : line.dataset.none;
  if (line.textContent.trim() !== text) line.textContent = text;
}

function startSettings() {
  document.body.addEventListener("htmx:afterSettle", syncArmed);
  document.body.addEventListener("htmx:oobBeforeSwap", function (evt) {
    const details = document.querySelector("#settings details.failures");
    if (details && evt.detail.target && evt.detail.target.id === "settings") failuresOpen = details.open;
  });
  document.body.addEventListener("htmx:oobAfterSwap", function () {
    const details = document.querySelector("#settings details.failures");
    if (details && failuresOpen !== null) details.open = failuresOpen;
    failuresOpen = null;
  });
  document.body.addEventListener("input", function (evt) {
    if (evt.target.id === "latency") byId("latency-out").value = evt.target.value + " ms";
  });
}

// The wrap-up after ten of ten (free play): open when first seen, folded by the first
// answer to a click so the outcome and the ledger stay above the fold. Its title unfolds
// it; the choice lasts across the panels' redraws and reloads (this browser). Reaching it
// from the last lesson ("The wrap-up →", or space) is seeing it afresh: the closing slide
// opens, at the top of the screen, whatever a later click had folded.

const WRAP_UP = "wrap-up-folded"; // "true": folded, "false": opened by hand

function wrapUpState() {
  try { return window.localStorage.getItem(WRAP_UP); } catch (e) { return null; }
}

function keepWrapUp(state) {
  try { window.localStorage.setItem(WRAP_UP, state); } catch (e) { /* private mode: this page only */ }
}

let wrapUpFolded = null; // this page's choice, when storage is not available

const WRAP_UP_NEXT = "wrap-up-next"; // sessionStorage "true": the path's end was just chosen

function showWrapUp() {
  const details = document.querySelector("[data-wrap-up]");
  if (!details) return;
  const state = wrapUpState() || wrapUpFolded;
  if (state) details.open = state !== "true";
}

function reachedWrapUp() {
  let reached = false;
  try {
    reached = window.sessionStorage.getItem(WRAP_UP_NEXT) === "true";
    window.sessionStorage.removeItem(WRAP_UP_NEXT);
  } catch (e) { /* no storage: the wrap-up keeps its state */ }
  const details = document.querySelector("[data-wrap-up]");
  if (!reached || !details) return;
  details.open = true;
  if (!document.querySelector("#page.present")) {
    // On a laptop the path's own heading ("10 of 10 achieved") stays above the rules.
    const path = byId("path");
    if (path) window.scrollBy({top: path.getBoundingClientRect().top - 8, behavior: "instant"});
    return;
  }
  // Presenter mode: its title at the top of the screen, the closing slide, and the lesson
  // pills just above it out of view (8 px of margin left a sliver of them sliced).
  const edge = screenTop();
  let above = details.getBoundingClientRect().top - edge - 8;
  document.querySelectorAll("#path > ol > li").forEach(function (pill) {
    above = Math.max(above, Math.ceil(pill.getBoundingClientRect().bottom - edge));
  });
  window.scrollBy({top: above, behavior: "instant"});
}

function startWrapUp() {
  showWrapUp();
  reachedWrapUp();
  document.addEventListener("click", function (evt) {
    // Before the form leaves the page: the wrap-up it reaches opens as if first seen.
    if (!(evt.target.closest && evt.target.closest("[data-path-end]"))) return;
    wrapUpFolded = null;
    try {
      window.localStorage.removeItem(WRAP_UP);
      window.sessionStorage.setItem(WRAP_UP_NEXT, "true");
    } catch (e) { /* private mode: nothing kept */ }
  });
  document.body.addEventListener("htmx:afterSwap", showWrapUp);
  // A dropped connection (a lost response, a crash) answers with the refresh after it.
  let dropped = false;
  document.body.addEventListener("htmx:sendError", function () { dropped = true; });
  document.body.addEventListener("htmx:afterSettle", function (evt) {
    const target = evt.detail && evt.detail.target;
    const details = document.querySelector("[data-wrap-up]");
    const answer = target && (target.id === "panels-slot" || (dropped && target.id === "panels"));
    if (target && target.id === "panels") dropped = false;
    if (!details || !answer) return;
    if (!(wrapUpState() || wrapUpFolded)) {
      wrapUpFolded = "true";
      keepWrapUp("true");
      details.open = false;
    }
  });
  document.body.addEventListener("click", function (evt) {
    const summary = evt.target.closest && evt.target.closest("[data-wrap-up] > summary");
    if (!summary) return;
    // The click toggles it after this listener: keep the state it will have.
    wrapUpFolded = summary.parentElement.open ? "true" : "false";
    keepWrapUp(wrapUpFolded);
  });
}

export function start() {
  startPanels();
  startClock();
  startPresenter(); // after a swap settles: the lanes on screen, then the code's line
  startStepping();
  startDiagramPng();
  startSettings();
  startWrapUp();
}
