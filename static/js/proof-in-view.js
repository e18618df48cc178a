// Presenter mode: after an answer lands, bring its proof on screen (the outcome's headline
// and the ledger's tally), which stack under the lesson card at 1280x720. A presenter
// remote cannot scroll, and the room must see what happened, not only the checks tick.
// The page scrolls down no further than keeps the check ticked last and the lesson's
// expected/actual numbers (and, once achieved, the takeaway under them) in view, unless
// the headline needs it; it scrolls up only to bring those back (after step mode's lanes,
// which come first while requests are paused: panels.js, have gone).

import { byId, screenTop } from "./page.js";

function proofScroll() {
  const lesson = document.querySelector("#page.present #lesson");
  const headline = document.querySelector("#page.present #explain .headline");
  if (!lesson || !headline) return 0;
  if (document.querySelector("#page.present #step [data-step-label]")) return 0;
  const tally = document.querySelector("#ledger .tally") || headline;
  const verdict = lesson.querySelector(".expected") || lesson; // "expected 1 actual 2"
  const fold = window.innerHeight - 8;
  const wanted = tally.getBoundingClientRect().bottom - fold; // the tally's last line in view
  // The check ticked last (checks are met in order) stays in view with the proof when both
  // fit; else the verdict's top does.
  const edge = screenTop() + 8; // below the presenter's header, which stays on screen
  const numbers = verdict.getBoundingClientRect().top - edge; // the verdict's top in view
  const met = lesson.querySelectorAll(".checks li.met");
  const ticked = met.length ? met[met.length - 1].getBoundingClientRect().top - edge : numbers;
  const keep = wanted <= ticked ? ticked : numbers;
  const least = headline.getBoundingClientRect().bottom - fold; // the headline, whatever it costs
  const by = uncut(Math.max(Math.min(wanted, keep), least), lesson, edge, keep);
  return keep >= 0 ? Math.max(by, 0) : by; // up only when those are above the screen
}

// The queue lab in presenter mode: "What just happened" comes on screen under the card, as
// much of it as keeps the card's checks and numbers in view (the checks come first), its
// headline whatever it costs (run N: the room saw only "E-mails for one key … actual 2",
// never the answer or the mailbox).
function queueScroll() {
  const explain = document.querySelector("#page.present #explain");
  const headline = explain && explain.querySelector(".headline, p");
  if (!headline) return 0;
  const fold = window.innerHeight - 8;
  const card = document.querySelector("#lesson");
  const proof = card && card.querySelector(".checks, .numbers"); // the first in the card
  const keep = proof ? proof.getBoundingClientRect().top - (screenTop() + 8) : Infinity;
  const wanted = explain.getBoundingClientRect().bottom - fold;
  const least = headline.getBoundingClientRect().bottom - fold;
  return Math.max(Math.min(wanted, keep), least, 0);
}

// A row of the lesson's buttons is never left half under the screen's top edge: the page
// scrolls on past them when what must stay in view allows it.
function uncut(by, lesson, edge, keep) {
  const actions = lesson.querySelector(".lesson-actions");
  if (!actions || by <= 0) return by;
  const box = actions.getBoundingClientRect();
  const top = edge - 8; // the header's bottom: a row just under it is out of view
  const past = Math.ceil(box.bottom - top);
  // keep leaves 8 px of margin under the header; the row after the buttons may use them.
  return box.top - top < by && by < past && past <= keep + 8 ? past : by;
}

// A dropped connection (the crash and lost-response faults) answers nothing: the panels
// that tell "No response — did it charge?" come with the refresh that follows it.
let dropped = false;
// A lesson can be marked achieved by a later redraw than the answer's (the last request
// finishing in the background): its takeaway then pushes the proof down, so look again.
let achievedBefore = false;

function achieved() {
  return document.querySelector("#page.present #lesson .achieved") !== null;
}

// Requests that pause in step mode (sent from down the page, by the server card) are the
// answer too: their lanes, at the step card, are pointed to when it is off screen.
let lanesBefore = false;
let finishedBefore = 0; // finished lanes when a step was sent
let stepSent = false; // a step was sent, and no lane has finished since

function lanes() {
  return document.querySelector("#step [data-step-label]") !== null;
}

export function start() {
  document.body.addEventListener("htmx:sendError", function () { dropped = true; });
  document.body.addEventListener("htmx:beforeSwap", function () {
    achievedBefore = achieved();
    lanesBefore = lanes();
  });
  document.body.addEventListener("htmx:afterSettle", function () {
    const present = document.querySelector("#page.present");
    if (!lanesBefore && lanes() && !present) pointToLanes();
    lanesBefore = lanes();
    // A step that ran a lane to its end has an answer too, beside the lanes still paused:
    // in the step's own answer, or (a slow thread, on a loaded machine) a redraw after it.
    const finished = document.querySelectorAll("#step .step-lane.finished").length;
    if (stepSent && finished > finishedBefore) {
      stepSent = false;
      if (!present) pointToOutcome();
    }
    if (!document.querySelector("#step .step-lane")) stepSent = false;
  });
  document.body.addEventListener("htmx:afterSettle", function (evt) {
    const target = evt.detail && evt.detail.target;
    if (!target) return;
    // An answer to this page's click: the payment lab's panels, or the queue lab's page.
    const answer = target.id === "panels-slot" || target.id === "queue-slot";
    const panels = document.getElementById("panels") !== null;
    const newlyAchieved = panels && !achievedBefore && achieved();
    if (!answer && !(dropped && panels) && !newlyAchieved) return;
    const wasDropped = dropped;
    dropped = false;
    const by = panels ? proofScroll() : (answer ? queueScroll() : 0);
    if (by !== 0) window.scrollBy({top: by, behavior: "instant"});
    // Only a charge's answer (or the queue's: a job sent or worked, [data-answers]) is
    // pointed to: a clock or a settings change, or a refresh, leaves the last answer where
    // it was (pointing to it would read as their answer).
    const answers = evt.detail.xhr && evt.detail.xhr.labAnswer; // set as it was sent, below
    if (!document.querySelector("#page.present") && (answers || (wasDropped && panels))) {
      pointToOutcome();
    }
  });
  document.body.addEventListener("htmx:beforeRequest", function (evt) {
    const elt = evt.detail.elt; // here: the element that sends the request
    const answers = elt && elt.matches &&
      (elt.matches("[hx-post$='/api/charges']") || elt.closest("[data-answers]") !== null);
    if (answers && evt.detail.xhr) evt.detail.xhr.labAnswer = true;
    if (elt && elt.matches && elt.matches("#step [hx-post]")) {
      stepSent = true;
      finishedBefore = document.querySelectorAll("#step .step-lane.finished").length;
    }
  });
  // Scrolling either way dismisses it: the reader has taken over, and it must not stay on
  // top of what they scroll to.
  window.addEventListener("scroll", function () {
    const button = byId("to-outcome");
    if (!button || button.hidden) return;
    if (inView(pointedTo) || Math.abs(window.scrollY - shownAt) > 48) button.hidden = true;
  }, {passive: true});
  document.addEventListener("click", function (evt) {
    const button = evt.target.closest && evt.target.closest("#to-outcome");
    if (!button) return;
    const target = document.querySelector(pointedTo); // its card comes whole into view
    const card = target && target.closest(".card");
    if (card) card.scrollIntoView({block: "start", behavior: "instant"});
    button.hidden = true;
  });
}

// Outside presenter mode the page never scrolls on its own (the reader may be reading
// elsewhere), but an answer whose headline lands off screen (the page scrolled down to the
// clock or the failure lab) is pointed to: a small button at that edge of the screen,
// "↑ DOUBLE CHARGE — see the answer", which brings the outcome into view. It names only the
// outcome, so it is never cut short, and sits at the screen's bottom right, clear of the
// lesson card and of the results it points to.
let shownAt = 0; // window.scrollY when the pointer appeared
let pointedTo = "#explain .headline"; // what the pointer brings into view

function inView(selector) {
  const element = document.querySelector(selector);
  if (!element) return true;
  const box = element.getBoundingClientRect();
  return box.bottom > 0 && box.top < window.innerHeight;
}

function point(button, selector, above, text) {
  pointedTo = selector;
  button.textContent = (above ? "↑ " : "↓ ") + text;
  shownAt = window.scrollY;
  button.hidden = false;
}

function pointToLanes() {
  const button = byId("to-outcome");
  const card = document.querySelector("#step h2");
  if (!button || !card || inView("#step h2")) return;
  point(button, "#step h2", card.getBoundingClientRect().bottom <= 0, button.dataset.paused);
}

function pointToOutcome() {
  const button = byId("to-outcome");
  const headline = document.querySelector("#explain .headline");
  if (!button) return;
  // Paused lanes are the answer in step mode (the step card is on screen with them), and a
  // lane run to its end shows its own answer ("finished: CHARGED"): while any lane is still
  // paused there is no pointer, which would cover the Lock switch or the stepped code.
  const stepping = document.querySelector("#step [data-step-label]") !== null;
  if (stepping || !headline || inView("#explain .headline")) {
    button.hidden = true;
    return;
  }
  const above = headline.getBoundingClientRect().bottom <= 0;
  // "DOUBLE CHARGE"; a sentence (the queue's "Enqueue: job … in the queue.") loses its stop.
  const outcome = headline.textContent.trim().split(" — ")[0].replace(/\.$/, "");
  point(button, "#explain .headline", above, outcome + " — " + button.dataset.see);
}
