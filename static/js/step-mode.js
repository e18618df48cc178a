// Step mode: the paused requests' lanes (A, B, C), each with its Step button. Remembers
// the lane stepped last, and steps the next one in turn.

let lastLane = null; // the label of the lane stepped last: "A", "B", …

// The label of the lane stepped last (null before any): the code view follows it.
export function lastSteppedLane() {
  return lastLane;
}

// Step the paused requests in turn (A, B, A, …; a blocked one is skipped), the lane
// after the one stepped last: so "next step" alone plays the interleaving the lesson
// teaches (both pass lookup; with the lock, B blocks on A's lock). True when requests
// are paused (stepped, or all blocked), false when none is.
export function stepNextLane() {
  const lanes = Array.prototype.slice.call(document.querySelectorAll("[data-step-label]"));
  let last = -1;
  lanes.forEach(function (el, i) { if (el.dataset.stepLabel === lastLane) last = i; });
  for (let i = 1; i <= lanes.length; i++) {
    const lane = lanes[(last + i) % lanes.length];
    if (!lane.disabled) {
      lane.click();
      return true;
    }
  }
  return lanes.length > 0;
}

export function start() {
  document.body.addEventListener("htmx:beforeRequest", function (evt) {
    const elt = evt.detail.elt;
    if (elt && elt.dataset && elt.dataset.stepLabel) lastLane = elt.dataset.stepLabel;
  });
}
