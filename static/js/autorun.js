// What a link asks for, done for the person who opened it once they see the page: a
// lesson's "Run the steps" (the scenario's buttons pressed one after the other, as real
// clicks), and a link's change offered as a form (a GET changes nothing, so a link
// preview or a prefetch cannot reset a lab).
import { clickAction } from "./lessons.js";
import { chargesInFlight, requestsPending } from "./requests.js";
import { stepNextLane } from "./stepping.js";

// Run only once a person has the page on screen: never in a prerender (which runs
// scripts before anyone asked) or a background tab.
function whenSeen(action) {
  if (!document.prerendering && document.visibilityState === "visible") {
    action();
    return;
  }
  let done = false;
  function check() {
    if (done || document.prerendering || document.visibilityState !== "visible") return;
    done = true;
    action();
  }
  document.addEventListener("prerenderingchange", check);
  document.addEventListener("visibilitychange", check);
}

// Step mode (lesson 5): the scenario's buttons leave their requests paused. "Run the
// steps" then steps the lanes in turn, as "." does, one step a while after the last one
// was answered (its button redrawn) and no lane is on its way: the race plays in slow
// motion, by real steps, until no lane is left.
const LANE_STEP_MS = 700;

function playLanes() {
  let pressed = null; // the lane button pressed last: drawn anew once its step answered
  let idle = 0; // ticks with nothing to step (a lane on its way, or every lane blocked)
  const timer = setInterval(function () {
    if (!document.querySelector("[data-step-label]") || idle > 40) {
      clearInterval(timer); // no lane left, or none could step for 28 s
      return;
    }
    const open = document.querySelector("[data-step-label]:not([disabled])");
    if ((pressed && pressed.isConnected) || document.querySelector("#step .where.running") || !open) {
      idle += 1;
      return;
    }
    idle = 0;
    pressed = stepNextLane();
  }, LANE_STEP_MS);
}

// In step mode the charges stay open, paused: the page is as quiet as it gets once each
// stands at a step (its lane drawn, none "running…").
function lanesStanding() {
  return document.querySelectorAll("[data-step-label]").length >= chargesInFlight() &&
    !document.querySelector("#step .where.running");
}

// "Run the steps": click the scenario's buttons one after the other, each once the
// requests of the one before have answered. Real clicks, real requests.
function runScript(names) {
  if (!names.length) {
    if (document.querySelector("[data-step-label]")) playLanes();
    return;
  }
  if (!clickAction(names[0])) return;
  // Wait for 300 ms of quiet after the last answer, so each step draws as its own
  // group on the timeline (counting from the click, a slow answer left no gap). Every
  // request counts, not only charges: on a busy machine New order can take longer than
  // the quiet time, and a Pay sent before it answered would pay the old order.
  let waited = 0;
  let quiet = 0;
  const timer = setInterval(function () {
    waited += 100;
    const open = chargesInFlight() === 0 || lanesStanding();
    quiet = open && requestsPending() <= chargesInFlight() ? quiet + 100 : 0;
    if (quiet >= 300 || waited > 10000) {
      clearInterval(timer);
      runScript(names.slice(1));
    }
  }, 100);
}

// A link that changes the lab (?lesson=, ?scenario=, ?present=) opens with its change
// offered as a form. For a person the link stays one click: press the button for them,
// and replace this page in the history, so Back does not open the lesson afresh again.
function openOffer(offer) {
  const button = offer.querySelector("button");
  if (button) button.disabled = true;
  fetch(offer.action, {method: "POST", credentials: "same-origin"})
    .then(function (response) {
      if (response.ok && response.redirected) window.location.replace(response.url);
      else offer.submit(); // show the problem (a read-only replay, no free lab slot)
    })
    .catch(function () { offer.submit(); });
}

export function start() {
  const layout = document.querySelector("[data-autorun='true']");
  if (layout && layout.dataset.script) {
    history.replaceState(null, "", window.location.pathname);
    whenSeen(function () {
      setTimeout(function () {
        runScript(layout.dataset.script.split("|"));
      }, 300);
    });
  }
  const offer = document.querySelector("form[data-auto-open]");
  if (offer) whenSeen(function () { openOffer(offer); });
}
