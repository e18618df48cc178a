// Answers that are not panels, said in the notice line: a problem+json answer and a
// dropped connection.
import { t, showNotice } from "./page.js";

export function start() {
  // Problem+json answers to htmx carry HX-Reswap: none and this event.
  document.body.addEventListener("lab-problem", function (evt) {
    const d = evt.detail || {};
    showNotice((d.status ? d.status + " " : "") + (d.title || t("error")) + ": " + (d.detail || ""));
  });
  // A dropped connection: the lost-response and crash faults do exactly this.
  document.body.addEventListener("htmx:sendError", function () {
    showNotice(t("no_response"));
    htmx.trigger(document.body, "lab-refresh");
  });
}
