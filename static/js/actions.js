// The scenario's actions by name, as "Next step" and the autorun press them: real clicks
// on the page's buttons, real requests.
import { byId } from "./page.js";
import { valueOf } from "./lab-json.js";

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
