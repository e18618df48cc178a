// The "lab-json" htmx extension: sends a form as the JSON body the API expects, with the
// Idempotency-Key header the client's key strategy picks. Numeric inputs become JSON
// numbers and checkboxes booleans. A settings control sends only its own value, and a
// button with data-body sends exactly that body.
import { byId, t, showNotice } from "./page.js";
import { isCharge } from "./in-flight.js";
import { showNextKey } from "./key-field.js";

function randomKey() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  return "k-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2);
}

// The Idempotency-Key this request carries, by the client's key strategy:
// a stable key per intent, a fresh random one per click, or none at all.
function keyFor(elt) {
  const field = byId("idempotency-key");
  const strategy = byId("key-strategy") ? byId("key-strategy").value : "stable";
  if (elt.dataset.newKey === "true" || strategy === "random") {
    const fresh = randomKey();
    if (field) {
      field.value = fresh; // show the attendee the key that went out
      field.dataset.derived = "false";
      showNextKey();
    }
    return fresh;
  }
  if (strategy === "none" || !field) return "";
  return field.value;
}

// An input's value as JSON: a boolean for a checkbox, a number for a numeric input.
export function valueOf(input, value) {
  if (!input) return value;
  if (input.type === "checkbox") return input.checked;
  const numeric = input.type === "number" || input.type === "range" || input.dataset.json === "number";
  const number = Number(value);
  // Send what the user typed: 100000.5 goes as a number so the server can say why it is refused.
  return numeric && String(value).trim() !== "" && isFinite(number) ? number : value;
}

function setHeaders(evt) {
  const elt = evt.detail.elt;
  const headers = evt.detail.headers;
  headers["Content-Type"] = "application/json";
  if (elt.dataset.action) headers["X-Lab-Action"] = elt.dataset.action;
  if (!isCharge(elt)) return;
  const key = keyFor(elt);
  if (key === "") return; // no key: the request runs unprotected, on purpose
  // A header cannot carry characters beyond Latin-1 or control characters: the
  // browser would throw. Anything else goes out, and the server answers 400 if bad.
  if (/[^\x20-\x7e\xa0-\xff]/.test(key)) {
    evt.preventDefault();
    showNotice(t("bad_header_key"));
    return;
  }
  headers["Idempotency-Key"] = key;
}

function encodeBody(parameters, elt) {
  if (elt.dataset.body) return elt.dataset.body;
  if (elt.closest("#settings") && elt.name) {
    const own = {};
    own[elt.name] = valueOf(elt, elt.value);
    return JSON.stringify(own);
  }
  const body = {};
  parameters.forEach(function (value, name) {
    body[name] = valueOf(document.getElementsByName(name)[0], value);
  });
  const delta = Number(elt.dataset.amountDelta);
  if (delta && typeof body.amount === "number") {
    body.amount += delta;
    // The field shows what was sent, so Retry sends (and replays) that same body.
    const amount = byId("amount");
    if (amount) amount.value = String(body.amount);
  }
  return JSON.stringify(body);
}

export function start() {
  htmx.defineExtension("lab-json", {
    onEvent: function (name, evt) {
      if (name === "htmx:configRequest") setHeaders(evt);
    },
    encodeParameters: function (xhr, parameters, elt) {
      xhr.overrideMimeType("text/json");
      return encodeBody(parameters, elt);
    }
  });
}
