// "Next step": the scenario's clicks one at a time, then the fix, then the next lesson.
// In step mode the paused requests take their steps first. Pressing the step's button
// yourself (or its key) counts as doing that step.
import { t, showNotice } from "./page.js";
import { chargesInFlight } from "./in-flight.js";
import { stepNextLane } from "./step-mode.js";
import { clickAction } from "./actions.js";

let nextIndex = 0; // the scenario's next click, an index into main[data-script]
let nextQueued = false; // a press waits for the last step's answer

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
    if (chargesInFlight() === 0 || tries >= 20) {
      clearInterval(timer);
      nextQueued = false;
      if (chargesInFlight() === 0) nextStep();
    }
  }, 100);
}

export function nextStep() {
  const names = script();
  if (stepNextLane()) return;
  if (chargesInFlight() > 0) {
    queueNextStep();
    return;
  }
  if (nextIndex < names.length) {
    const name = names[nextIndex];
    clickAction(name); // the capturing click listener moves nextIndex on
    if (name === "Pay from two tabs") nextIndex += 1;
    return;
  }
  const onward = document.querySelector("[data-apply-fix]") ||
    document.querySelector("[data-next-lesson]") ||
    document.querySelector("#path .start button"); // free play: start the lessons
  if (onward) onward.click();
  else if (names.length) showNotice(t("path_done"));
}

export function start() {
  document.addEventListener("click", function (evt) {
    const target = evt.target.closest ? evt.target.closest("[data-next-step]") : null;
    if (target) nextStep();
  });
  document.addEventListener("click", function (evt) {
    const el = evt.target.closest ? evt.target.closest("button[data-action]") : null;
    const layout = document.querySelector("main[data-script]");
    if (!el || !layout || !layout.dataset.script) return;
    if (layout.dataset.script.split("|")[nextIndex] === el.dataset.action) nextIndex += 1;
  }, true);
}
