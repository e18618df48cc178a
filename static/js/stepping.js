// Step mode: the paused requests' lanes (A, B, C), each with its Step button; the lane
// "next step" steps (it remembers the lane stepped last, and steps the next one in turn);
// and the code view that follows the current line. Started by panels.js right after
// presenter mode: after a swap settles, the lanes come on screen first, then the code
// view follows its line.

let lastLane = null; // the label of the lane stepped last: "A", "B", …

// The lane stepped last survives a reload of this tab (so "." steps the other lane, as
// before the reload), and is forgotten once no request is paused.
const LAST_LANE_STORE = "last-lane|" + location.pathname;

function keepLastLane(label) {
  lastLane = label;
  try {
    if (label) sessionStorage.setItem(LAST_LANE_STORE, label);
    else sessionStorage.removeItem(LAST_LANE_STORE);
  } catch (e) { /* storage off: this page only */ }
}

function restoreLastLane() {
  try {
    if (document.querySelector("[data-step-label]")) lastLane = sessionStorage.getItem(LAST_LANE_STORE);
    else sessionStorage.removeItem(LAST_LANE_STORE);
  } catch (e) { /* storage off */ }
}

// The label of the lane stepped last (null before any): the code view follows it.
function lastSteppedLane() {
  return lastLane;
}

// Step the paused requests in turn (A, B, A, …; a blocked one is skipped), the lane
// after the one stepped last: so "next step" alone plays the interleaving the lesson
// teaches (both pass lookup; with the lock, B blocks on A's lock). The button pressed,
// else true when requests are paused (all blocked), false when none is.
export function stepNextLane() {
  const lanes = Array.prototype.slice.call(document.querySelectorAll("[data-step-label]"));
  let last = -1;
  lanes.forEach(function (el, i) { if (el.dataset.stepLabel === lastLane) last = i; });
  for (let i = 1; i <= lanes.length; i++) {
    const lane = lanes[(last + i) % lanes.length];
    if (!lane.disabled) {
      lane.click();
      return lane;
    }
  }
  return lanes.length > 0;
}

// A lane drawn "running…" is on its way to its next step (its thread was slow to get
// there, on a loaded machine): look again shortly, until it stands somewhere.
let lookAgain = null;
let looks = 0; // looks since a swap last showed no running lane (at most 60: 18 s, as a
// loaded machine can take that long to schedule a stepped request's thread)

function followRunning() {
  if (!document.querySelector("#step .where.running")) {
    looks = 0;
    return;
  }
  if (lookAgain || looks >= 60) return;
  lookAgain = setTimeout(function () {
    lookAgain = null;
    looks += 1;
    htmx.trigger(document.body, "lab-refresh"); // 204 while nothing changed
    followRunning();
  }, 300);
}

function startStepMode() {
  document.body.addEventListener("htmx:beforeRequest", function (evt) {
    const elt = evt.detail.elt;
    if (elt && elt.dataset && elt.dataset.stepLabel) keepLastLane(elt.dataset.stepLabel);
  });
  restoreLastLane();
  document.body.addEventListener("htmx:afterSettle", function () {
    // No request paused: the next ones start from A again.
    if (lastLane && !document.querySelector("[data-step-label]")) keepLastLane(null);
  });
  document.body.addEventListener("htmx:afterSettle", followRunning);
}

// The code view follows the current line: the line of the lane just stepped (else the
// first marked line). A redraw keeps the code box where it was, and scrolls only when
// that line is out of view (presenter mode: always to the same place), so the marker
// never vanishes below the box's edge.

let codeScroll = 0; // the code box's scrollTop before the swap replaced it

// The code line the view follows: the lane stepped last's, else the first marked one.
export function followedLine() {
  const code = document.querySelector("pre.code");
  if (!code) return null;
  const lane = lastSteppedLane();
  const chip = lane && code.querySelector(".here .chip-" + lane);
  return chip ? chip.closest(".line") : code.querySelector(".here");
}

export function followCode() {
  const code = document.querySelector("pre.code");
  if (!code) return;
  const line = followedLine();
  if (code.dataset.followed !== "true") {
    code.scrollTop = codeScroll; // the new box opens where the old one was
    code.dataset.followed = "true";
  }
  if (!line) return;
  const top = line.getBoundingClientRect().top - code.getBoundingClientRect().top;
  // Presenter mode: the line always stands a third of the way down the box, so the room's
  // eyes stay put and the page need not scroll to it; elsewhere only when out of view.
  const present = document.querySelector("#page.present") !== null;
  if (present || top < 0 || top + line.offsetHeight > code.clientHeight) {
    code.scrollTop = Math.max(0, code.scrollTop + top - code.clientHeight / 3);
  }
  codeScroll = code.scrollTop;
}

function startCodeView() {
  document.body.addEventListener("htmx:beforeSwap", function () {
    const code = document.querySelector("pre.code");
    if (code) codeScroll = code.scrollTop;
  });
  document.body.addEventListener("htmx:afterSwap", followCode);
  document.body.addEventListener("htmx:afterSettle", followCode);
  followCode();
}

export function start() {
  startStepMode();
  startCodeView();
}
