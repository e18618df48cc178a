// The retry lab's page: the fault plan's preset menu and its free list stay one plan,
// the answer to Run or Storm is brought on screen, and a refused Run marks the last one.

import { hideNotice, t } from "./js/page.js";
import { problemText } from "./js/requests.js";

// Choosing a preset writes its list into the field; editing the field makes the plan
// "your own list" (the server reads the field only then).
function startPlan() {
  const presets = document.querySelector("[data-fault-presets]");
  const plan = document.querySelector("[data-fault-plan]");
  if (!presets || !plan) return;
  presets.addEventListener("change", function () {
    const chosen = presets.selectedOptions[0];
    if (chosen && chosen.dataset.plan) plan.value = chosen.dataset.plan;
  });
  plan.addEventListener("input", function () {
    presets.value = "custom";
  });
}

// A refused Run (a problem beside the form) leaves the last run on screen: it says it is
// from before, so it is not read as this Run's answer.
// Run pressed on the lesson card, the form below the fold: its refusal is said on the card
// too, where the eye is (the form's own line says it beside the plan).
let cardPressAt = 0;

function sayOnCard(evt) {
  const actions = document.querySelector("#lesson .lesson-actions");
  if (!actions || Date.now() - cardPressAt > 10000) return;
  let line = document.querySelector("#lesson .card-problem");
  if (!line) {
    line = document.createElement("p");
    line.className = "card-problem";
    line.setAttribute("role", "alert");
    actions.after(line);
  }
  line.textContent = problemText(evt.detail || {});
}

function startStaleRun() {
  document.addEventListener("click", function (evt) {
    if (evt.target.closest && evt.target.closest("#lesson [data-card-action]")) cardPressAt = Date.now();
  }, true);
  document.body.addEventListener("lab-problem", function (evt) {
    sayOnCard(evt);
    const form = evt.target && evt.target.closest ? evt.target.closest("#policy-form") : null;
    const run = document.querySelector("#run");
    if (!form || !run || !run.querySelector(".run-headline")) return;
    run.classList.add("stale-run");
    let note = run.querySelector(".stale-run-note");
    if (!note) {
      note = document.createElement("p");
      note.className = "stale-run-note";
      run.querySelector("h2").after(note);
    }
    // The reason itself, not "beside the form": at 1280x720 the form's own line sits
    // below the fold when the answer is in view (run P).
    note.textContent = t("run_before_refusal").replace("{reason}", problemText(evt.detail || {}));
  });
}

// The forms sit in the left column, their answers in the right one: once the answer
// is in, bring the answer (the run, or the storm's chart) on screen. In a lesson,
// the card's checks and numbers stay above it when both fit: they say what the run meant.
// Otherwise the answer's top comes first (its headline), never its bottom alone. A poll's
// refresh moves nothing. An achieved lesson's "Lesson achieved" line counts as the card's
// top: the run that achieved it is not shown with its achievement scrolled away.
const ANSWERS = {"policy-form": "#run", "storm-form": "#storm"};
const MARGIN = 8; // px above what is brought to the top

function showAnswer(answer) {
  const cardTop = document.querySelector("#lesson .achieved, #lesson .checks"); // first in the card
  const line = answer.querySelector(".run-headline, svg") || answer;
  const height = window.innerHeight;
  if (cardTop) {
    const top = cardTop.getBoundingClientRect().top;
    if (line.getBoundingClientRect().bottom - top <= height - 2 * MARGIN) {
      window.scrollBy(0, top - MARGIN);
      return;
    }
  }
  const box = answer.getBoundingClientRect();
  if (box.top < 0 || line.getBoundingClientRect().bottom > height) window.scrollBy(0, box.top - MARGIN);
}

// A Run or Storm that achieved the lesson, its answer too tall to show with the card: the
// answer comes on screen, and "↑ Lesson achieved" at the screen's edge points to the card
// (as the payment lab points to an answer off screen), until that line is in view.
let achievedBefore = false;

function achievedLine() {
  return document.querySelector("#lesson .achieved");
}

function pointToAchieved() {
  const button = document.getElementById("to-achieved");
  const line = achievedLine();
  if (!button) return;
  const box = line ? line.getBoundingClientRect() : null;
  button.hidden = !box || achievedBefore || (box.bottom > 0 && box.top < window.innerHeight);
}

// The page settles a swap at once (defaultSettleDelay 0, base.html): by the request's
// end, its answer is in the page.
function startAnswerInView() {
  document.body.addEventListener("htmx:beforeRequest", function (evt) {
    const elt = evt.detail.elt;
    if (elt && ANSWERS[elt.id]) achievedBefore = achievedLine() !== null;
  });
  document.body.addEventListener("htmx:afterRequest", function (evt) {
    const elt = evt.detail.elt;
    const answer = elt && ANSWERS[elt.id] && evt.detail.successful ? document.querySelector(ANSWERS[elt.id]) : null;
    if (!answer) return;
    showAnswer(answer);
    pointToAchieved();
  });
  window.addEventListener("scroll", function () {
    const button = document.getElementById("to-achieved");
    if (button && !button.hidden) pointToAchieved();
  }, {passive: true});
  document.addEventListener("click", function (evt) {
    const button = evt.target.closest && evt.target.closest("#to-achieved");
    const line = achievedLine();
    if (!button || !line) return;
    line.closest(".card").scrollIntoView({block: "start", behavior: "instant"});
    button.hidden = true;
  });
}

// The policy counts once Run sends it. A change to the form leaves the card's "set that
// back first" (or "changed by hand") about the policy last run: it steps aside for a line
// that says so, and Next step presses Run (run N: 400 ticked back, the card still said
// to set it back, and Next step ran nothing).
function startFormPending() {
  const form = document.getElementById("policy-form");
  if (!form) return;
  const changed = function () {
    // A refused Run's problem spoke of the form as it was: edited since, it is no longer
    // so (run T: "max_attempts must be …" stayed under a corrected field).
    hideNotice();
    document.querySelectorAll("#lesson .card-problem").forEach(function (p) { p.remove(); });
    const stale = document.querySelectorAll(
      "#lesson li.undo-first:not([hidden]), #lesson li.case-changed:not([hidden])");
    if (!stale.length) return;
    stale.forEach(function (li) { li.hidden = true; });
    const line = document.createElement("li");
    line.className = "form-pending";
    line.textContent = t("policy_pending");
    stale[0].before(line);
  };
  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
}

startPlan();
startFormPending();
startStaleRun();
startAnswerInView();
