// The server settings form: the failure lab stays open (or closed) when the form is
// swapped in anew, and the latency slider says its value.
import { byId } from "./page.js";

let failuresOpen = null; // the failure lab's <details> state before the swap

export function start() {
  document.body.addEventListener("htmx:oobBeforeSwap", function (evt) {
    const details = document.querySelector("#settings details.failures");
    if (details && evt.detail.target && evt.detail.target.id === "settings") failuresOpen = details.open;
  });
  document.body.addEventListener("htmx:oobAfterSwap", function () {
    const details = document.querySelector("#settings details.failures");
    if (details && failuresOpen !== null) details.open = failuresOpen;
    failuresOpen = null;
  });
  document.body.addEventListener("input", function (evt) {
    if (evt.target.id === "latency") byId("latency-out").value = evt.target.value + " ms";
  });
}
