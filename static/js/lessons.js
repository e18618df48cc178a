// The lessons: "Next step", the scenario's buttons pressed by name (js/autorun.js presses
// them for a link's "Run the steps").
import { byId, t, showNotice, valueOf } from "./page.js";
import { chargesInFlight } from "./requests.js";
import { stepNextLane } from "./stepping.js";

// The scenario's actions by name, as "Next step" and the autorun press them: real clicks
// on the page's buttons, real requests.

// A second tab is a second client this tab's guard knows nothing about: the same
// request, sent at the same moment, straight from the browser.
function payFromAnotherTab() {
  const pay = document.querySelector("button[data-action='Pay']");
  const body = {};
  document.querySelectorAll("#order-form [name]").forEach(function (input) {
    body[input.name] = valueOf(input, input.value);
  });
  const headers = {"Content-Type": "application/json", "X-Lab-Action": "Pay (second tab)"};
  const key = byId("idempotency-key").value;
  if (key) headers["Idempotency-Key"] = key;
  fetch(pay.getAttribute("hx-post"), {method: "POST", headers: headers, body: JSON.stringify(body)})
    .then(function () { htmx.trigger(document.body, "lab-refresh"); });
  pay.click();
}

// Press the button of the action called name ("Pay", "Retry", …). False when the page
// has no such button.
export function clickAction(name) {
  if (name === "Pay from two tabs") {
    payFromAnotherTab();
    return true;
  }
  const button = document.querySelector("[data-action='" + name + "']:not(span)");
  if (button) button.click();
  return button !== null;
}

// "Next step": the scenario's clicks one at a time, then the fix, then the next lesson.
// In step mode the paused requests take their steps first. Pressing the step's button
// yourself (or its key) counts as doing that step.

let nextIndex = 0; // the scenario's next click, an index into main[data-script]
let nextQueued = false; // a press waits for the last step's answer
let stepsPending = 0; // step requests this tab has open (a Retry it, New order's form)

// A step that replaces the order form (New order) must have answered before the next
// step presses Pay: Pay sends the form, and the old form holds the old order. So must any
// step's own request (a Retry it on the operations lab): till its answer, the card is the
// one from before it, and a press on it went on as if the step had proved nothing.
function stepRequest(evt) {
  const target = evt.detail.target;
  const elt = evt.detail.elt;
  const step = Boolean(elt && elt.matches) &&
    (elt.matches("[data-action]") || elt.querySelector("[data-action]") !== null);
  return step || (Boolean(target) && target.id === "order-form");
}

function trackSteps() {
  document.body.addEventListener("htmx:beforeRequest", function (evt) {
    if (stepRequest(evt)) stepsPending += 1;
  });
  document.body.addEventListener("htmx:afterRequest", function (evt) {
    if (stepRequest(evt)) stepsPending = Math.max(0, stepsPending - 1);
  });
}

// The last step still has an answer on its way: a charge, a step's request, a new order form.
function stepAnswering() {
  return chargesInFlight() > 0 || stepsPending > 0;
}

// The steps taken are the lab's, not one tab's: they survive a reload (a projector
// laptop that refreshes) and a second tab on the same lab goes on from them (run L: a new
// tab pressed Pay again). Kept per lab page, scenario and script in localStorage, read
// again at each press, and back to 0 once the lab shows no request (a reset, a case
// started afresh).
function stepsKey() {
  const layout = document.querySelector("main[data-script]");
  return ["lesson-steps", location.pathname, layout ? layout.dataset.scenario : "",
    script().join("|")].join("|");
}

function keepSteps() {
  try { localStorage.setItem(stepsKey(), String(nextIndex)); } catch (e) { /* storage off */ }
}

// One step of the script done: count it, and keep the count for a reload.
function advance() {
  nextIndex += 1;
  keepSteps();
}

// The steps start over: the lab was emptied (Reset), or the case's fault armed again.
function forgetSteps() {
  nextIndex = 0;
  keepSteps();
}

// The lab shows what its steps did: the payment lab's timeline, the other labs' cards
// (data-ran). A lab without it (reset, or a case started afresh) starts its steps over.
function labRan() {
  return document.querySelector("#timeline .lane, " + CARD + "[data-ran='true']") !== null;
}

// The count as another tab (or this one, before a reload) left it.
function syncSteps() {
  try {
    const saved = localStorage.getItem(stepsKey());
    if (saved === null) return;
    const n = Number(saved);
    if (n >= 0 && n <= script().length) nextIndex = n;
  } catch (e) { /* storage off: this tab's own count */ }
}

function restoreSteps() {
  if (!labRan()) {
    forgetSteps();
    return;
  }
  syncSteps(); // storage off: the card's data-steps-done still resumes
}

function script() {
  const layout = document.querySelector("main[data-script]");
  return layout && layout.dataset.script ? layout.dataset.script.split("|") : [];
}

// Let the last step answer first, then go on: one queued press, kept for 2 s at most,
// so a press cannot fire long after, on its own.
function queueNextStep() {
  if (nextQueued) return;
  nextQueued = true;
  let tries = 0;
  const timer = setInterval(function () {
    tries += 1;
    if (!stepAnswering() || tries >= 20) {
      clearInterval(timer);
      nextQueued = false;
      if (!stepAnswering()) nextStep();
    }
  }, 100);
}

// The fix set by hand before the case it needs off: the steps would prove nothing, then
// leave the lesson unachieved. The case's own settings changed by hand: its steps would
// not do what they say. The card's first step says so: a press of Next step (the key, or
// the queue card's own button) says it too, on the card under the button, and is true.
// Where the step offers to set the fix back, a second press does (a presenter remote
// cannot untick a box; run M: the press said "set that back first" again and again).
let undoAskedAt = 0; // when a press last asked to set the fix back, 0: not
function askFirst() {
  const first = document.querySelector(
    CARD + " li.undo-first:not([hidden]), " + CARD + " li.case-changed");
  if (!first) return false;
  const back = first.querySelector("[data-set-back]:not([disabled])");
  const now = Date.now();
  if (back && undoAskedAt !== 0 && now - undoAskedAt > BOUNCE_MS && now - undoAskedAt < ASK_MS) {
    undoAskedAt = 0;
    forgetSteps();
    back.click();
    return true;
  }
  undoAskedAt = back ? now : 0;
  const words = (first.querySelector(".undo-words") || first).textContent.trim();
  askText = back ? words + " " + t("set_back_again") : words;
  if (!showAsk(true)) showNotice(askText); // a notice elsewhere goes unseen
  return true;
}

export function nextStep() {
  if (askFirst()) return;
  // The retry policy changed on its form since the last Run (retries.js says so on the
  // card): Next step runs it, as that line promises, rather than the steps' next press.
  if (document.querySelector(CARD + " li.form-pending") && clickAction("run")) return;
  // The case's fault fired and the lab was emptied (Reset), or the fix was set by hand
  // after it fired: the card says to arm it again before the first step. Arm it, and
  // start the steps over (run K: Next step pressed Retry on a lab with no fault armed).
  const arm = document.querySelector(CARD + " li.arm-first[data-fault]");
  if (arm) {
    const button = document.querySelector(
      "button[data-body='{\"fault\": \"" + arm.dataset.fault + "\"}']");
    if (button) {
      forgetSteps();
      button.click();
      return;
    }
  }
  // A card whose lab runs its steps on the server (the queue lab's) has its own Next step
  // button: press it, asking first when it leaves a lesson just achieved.
  const server = document.querySelector("[data-next-step-server]:not([disabled])");
  if (server) {
    if (!server.hasAttribute("data-onward") || mayLeave(server, false)) server.click();
    return;
  }
  const names = script();
  syncSteps();
  if (stepNextLane()) return;
  if (stepAnswering()) {
    queueNextStep();
    return;
  }
  // The fix applied before the first check was met: the card says its steps tick nothing
  // ("The checks count in order… Press Back to the first case"), so Next step does that
  // first (run O: it pressed the fix's Pay and Retry, then went back).
  const firstCase = document.querySelector(CARD + " .checks-order") &&
    document.querySelector("[data-unfix]");
  if (firstCase) {
    forgetSteps();
    firstCase.click();
    return;
  }
  // The page forgets how far the steps went when it reloads: the server's card says
  // whether this case's steps are done (its first check met, or the lesson achieved), and
  // with their requests on the timeline Next step goes on (the fix, the next lesson)
  // rather than run them again.
  // An empty lab (Reset) under a first check met goes on to the fix, as its card says; an
  // achieved lesson's empty lab walks its steps again.
  const resumed = nextIndex === 0 &&
    document.querySelector("#lesson[data-steps-done='true']") &&
    (document.querySelector("#timeline .lane") || !document.querySelector(CARD + " .achieved"));
  if (!resumed && nextIndex < names.length) {
    const name = names[nextIndex];
    clickAction(name); // the capturing click listener moves nextIndex on
    if (name === "Pay from two tabs") advance();
    return;
  }
  // The steps done and the first check still open (a press by hand between them proved
  // nothing): the case afresh, asked first, not the fix, which would tick nothing (run N).
  // The same after the fix's steps, a later check open: the fix's case afresh (run P:
  // lesson 5, A run to the end before B; Next step left the lesson unachieved).
  const afresh = document.querySelector("form[data-case-afresh], form[data-fix-afresh]");
  if (afresh) {
    const words = afresh.hasAttribute("data-fix-afresh") ? "fix_again" : "case_again";
    if (!mayLeave(afresh, true, words)) return;
    forgetSteps();
    afresh.requestSubmit();
    return;
  }
  const fix = document.querySelector("[data-apply-fix]");
  const start = document.querySelector("#path .start button"); // free play: the lessons
  const onward = fix || document.querySelector("[data-next-lesson]") || start;
  // Asked always: leaving a scenario's card for the path, the closing slide (the wrap-up)
  // for lesson 1 again, and free play with requests on it: lesson 1 starts the lab afresh
  // (run L: Space, pressed to scroll, wiped an attendee's work without a word).
  const onCard = document.querySelector("#lesson, [data-wrap-up]") !== null;
  const always = onward === start && (onCard || labRan());
  // The steps done and a check still open (a case pressed by hand between them): going on
  // would leave the lesson unachieved without a word. Asked every time.
  const open = onward !== null && onward.matches("[data-next-lesson]") &&
    document.querySelector(CARD + " ul.checks") !== null &&
    document.querySelector(CARD + " .achieved") === null;
  const words = open ? "leave_unachieved"
    : onward === start && !onCard ? "leave_free_play" : "leave_ask";
  if (onward && onward !== fix && (onward !== start || always || open) &&
    !mayLeave(onward, always || open, words)) return;
  if (onward) onward.click();
  else if (names.length) showNotice(t("path_done"));
}

// Right after a lesson is achieved, leaving it takes a second, deliberate press: one press
// too many (a presenter remote's double press, or a press queued behind the last step's
// answer) says so on the card instead of taking the room away from the proof. Later, or
// after a reload, one press goes on. A scenario's card and the wrap-up ask every time:
// going on leaves them for the lessons path.
const RECENT_MS = 10000; // how long after the achievement a press may be one too many
const BOUNCE_MS = 600; // a second press sooner than this is the same press, bounced
const ASK_MS = 20000; // how long the question stays open
// The open lesson's card: the payment, retry and queue labs' #lesson, the operations lab's own.
const CARD = ":is(#lesson, #natural-lesson)";
let achievedAt = 0; // when this page saw the lesson achieved (ms since the epoch), 0: not
let askedAt = 0; // when a press last asked, 0: not asked
let askText = ""; // what it asked

function mayLeave(onward, always, words = "leave_ask") {
  const now = Date.now();
  const asking = askedAt !== 0 && now - askedAt < ASK_MS;
  if (!asking && !always && !(achievedAt !== 0 && now - achievedAt < RECENT_MS)) return true;
  if (asking) {
    if (now - askedAt < BOUNCE_MS) return false;
    askedAt = achievedAt = 0;
    return true;
  }
  askedAt = now;
  askText = t(words).replace("{button}", onward.dataset.goesTo || onward.textContent.trim());
  if (!showAsk(true)) showNotice(askText); // the wrap-up: no card to say it on
  return false;
}

// The question on the card, under its buttons; false where there is no card. A redraw of
// the panels (a poll) while the question is open draws it again. Asked (reveal), it is
// brought on screen: at 1280x720 the line can fall at the bottom edge, half cut, and the
// press looks ignored.
function showAsk(reveal = false) {
  const actions = document.querySelector(CARD + " .lesson-actions");
  if (!actions) return false;
  let line = document.querySelector(CARD + " .onward-ask");
  if (!line) {
    line = document.createElement("p");
    line.className = "onward-ask";
    line.setAttribute("role", "status");
    // Under the way on: the buttons, or the "Lesson achieved" line that holds it.
    const onward = document.querySelector(CARD + " .achieved [data-next-lesson]");
    (onward ? onward.closest(".achieved") : actions).after(line);
  }
  line.textContent = askText;
  if (reveal) line.scrollIntoView({block: "nearest", behavior: "instant"});
  return true;
}

function watchAchievement() {
  const achieved = () => document.querySelector(CARD + " .achieved") !== null;
  let before = achieved();
  // Before and after one swap, in the same task (a second answer's swap can come before
  // the first one's settle).
  document.body.addEventListener("htmx:beforeSwap", function () { before = achieved(); });
  // The queue card's last step shown again in a lesson achieved earlier (its Next step
  // now goes on): a press too many right after it asks too, as on the payment card.
  document.body.addEventListener("htmx:afterSwap", function (evt) {
    const stepped = evt.detail.requestConfig &&
      evt.detail.requestConfig.elt.querySelector("[data-next-step-server]:not([data-onward])");
    const lastShown = stepped && document.querySelector("[data-next-step-server][data-onward]");
    if ((!before || lastShown) && achieved()) achievedAt = Date.now();
    before = achieved();
    if (askedAt !== 0 && Date.now() - askedAt < ASK_MS) showAsk();
  });
}

function startNextStep() {
  restoreSteps();
  // A lesson card's copy of a button elsewhere (the lab clock's +25 h) presses that button.
  document.addEventListener("click", function (evt) {
    const proxy = evt.target.closest ? evt.target.closest("[data-proxy-action]") : null;
    if (proxy) clickAction(proxy.dataset.proxyAction);
  });
  document.addEventListener("click", function (evt) {
    const target = evt.target.closest ? evt.target.closest("[data-next-step]") : null;
    if (target) nextStep();
  });
  // The queue card's Next step submits a form of its own: a click that would leave a
  // lesson just achieved asks first there too (this script's own click has asked).
  document.addEventListener("click", function (evt) {
    const server = evt.target.closest ? evt.target.closest("[data-next-step-server]") : null;
    if (!server || !evt.isTrusted) return;
    // Not on settings that cannot meet the first check (run K).
    if (askFirst()) evt.preventDefault();
    else if (server.hasAttribute("data-onward") && !mayLeave(server, false)) evt.preventDefault();
  }, true);
  // A card's copy of a lab's button (the retry lab's Run on its lesson card) is that action.
  document.addEventListener("click", function (evt) {
    const el = evt.target.closest
      ? evt.target.closest("button[data-action], button[data-card-action]")
      : null;
    const layout = document.querySelector("main[data-script]");
    if (!el || !layout || !layout.dataset.script) return;
    const action = el.dataset.action || el.dataset.cardAction;
    // Reset empties the lab: its steps start over from the first.
    if (action === "Reset") {
      forgetSteps();
      return;
    }
    const names = layout.dataset.script.split("|");
    syncSteps();
    if (names[nextIndex] !== action) return;
    advance();
    // The last step of a lesson achieved earlier, shown again: a press too many right
    // after it asks too, as after the achievement itself.
    if (nextIndex === names.length && document.querySelector(CARD + " .achieved")) {
      achievedAt = Date.now();
    }
  }, true);
}

export function start() {
  trackSteps();
  startNextStep();
  watchAchievement();
}
