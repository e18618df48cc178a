// The lab clock's line beside its buttons follows the panels (+1 h / +25 h, Reset): the
// panels carry the clock's time, the line outside them says it.
import { byId } from "./page.js";

export function start() {
  document.body.addEventListener("htmx:afterSwap", function () {
    const panels = byId("panels");
    const out = byId("clock-now");
    if (panels && out && panels.dataset.clock && out.textContent !== panels.dataset.clock) {
      out.textContent = panels.dataset.clock;
    }
  });
}
