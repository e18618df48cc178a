// A press that htmx queues behind its button's last request goes out later, and htmx reads
// the form only then: it would send whatever the attendee typed meanwhile (another amount,
// another order). What was pressed is kept here, element → [{params, key, label, resets}]
// in the order pressed (each button queues them all: hx-sync "queue all"), and sent
// (requests.js). A press made before the lab was reset, here or in another tab,
// belongs to the lab before: it is not sent into the new one.
import { byId, t, showNotice } from "./page.js";

const queued = new Map();

// The lab's reset count as the panels show it ("" before they have drawn).
function resetsNow() {
  const panels = byId("panels");
  return panels && panels.dataset.resets !== undefined ? panels.dataset.resets : "";
}

export function keepPress(button, sources) {
  const field = byId("idempotency-key");
  const strategy = byId("key-strategy") ? byId("key-strategy").value : "stable";
  const fresh = button.dataset.newKey === "true" || strategy === "random";
  const press = {
    params: new FormData(byId("order-form")),
    key: fresh ? null : (strategy === "none" || !field ? "" : field.value), // null: a new key when sent
    label: button.textContent.trim(),
    resets: resetsNow()
  };
  Array.prototype.forEach.call(sources, function (el) {
    if (!queued.has(el)) queued.set(el, []);
    queued.get(el).push(press);
  });
}

// The press kept for elt's next request, or undefined.
export function pressFor(elt) {
  const presses = queued.get(elt);
  return presses ? presses[0] : undefined;
}

// The press kept for elt's request, taken as the request leaves (undefined if none), with
// stale: true when the lab was reset since it was pressed.
export function takePress(elt) {
  const presses = queued.get(elt);
  if (!presses) return undefined;
  const press = presses.shift();
  if (!presses.length) queued.delete(elt);
  return Object.assign({}, press, {stale: press.resets !== "" && press.resets !== resetsNow()});
}

// New order replaces the form, and htmx drops a press queued on a button that is gone.
export function dropGonePresses() {
  let label = null;
  queued.forEach(function (presses, el) {
    if (document.body.contains(el)) return;
    queued.delete(el);
    label = presses[presses.length - 1].label;
  });
  if (label !== null) showNotice(t("queued_dropped").replace("{button}", label), false);
}
