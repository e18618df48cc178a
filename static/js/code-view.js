// The code view follows the current line: the line of the lane just stepped (else the
// first marked line). A redraw keeps the code box where it was, and scrolls only when
// that line is out of view, so the marker never vanishes below the box's edge.
import { lastSteppedLane } from "./step-mode.js";

let codeScroll = 0; // the code box's scrollTop before the swap replaced it

function followCode() {
  const code = document.querySelector("pre.code");
  if (!code) return;
  const lane = lastSteppedLane();
  const chip = lane && code.querySelector(".here .chip-" + lane);
  const line = chip ? chip.closest(".line") : code.querySelector(".here");
  if (code.dataset.followed !== "true") {
    code.scrollTop = codeScroll; // the new box opens where the old one was
    code.dataset.followed = "true";
  }
  if (!line) return;
  const top = line.getBoundingClientRect().top - code.getBoundingClientRect().top;
  if (top < 0 || top + line.offsetHeight > code.clientHeight) {
    code.scrollTop = Math.max(0, code.scrollTop + top - code.clientHeight / 3);
  }
  codeScroll = code.scrollTop;
}

export function start() {
  document.body.addEventListener("htmx:beforeSwap", function () {
    const code = document.querySelector("pre.code");
    if (code) codeScroll = code.scrollTop;
  });
  document.body.addEventListener("htmx:afterSwap", followCode);
  document.body.addEventListener("htmx:afterSettle", followCode);
  followCode();
}
