// Presenter mode: when requests stop in step mode, bring their lanes on screen (a
// presenter remote cannot scroll).
import { byId } from "./page.js";

let lanesShown = false;

export function start() {
  document.body.addEventListener("htmx:afterSettle", function () {
    const step = document.querySelector("#page.present #step [data-step-label]");
    if (step && !lanesShown) byId("step").scrollIntoView({block: "start"});
    lanesShown = step !== null;
  });
}
