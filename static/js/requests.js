// Sending requests: the "lab-json" htmx extension (JSON body, key header), this tab's requests in
// flight and the client guard on them, the notice's problems. The key field: js/key-field.js.
import { byId, t, showNotice, hideNotice, announce, valueOf } from "./page.js";
import { unsendable, refuse } from "./refusal.js";
import { keepPress, pressFor, takePress } from "./queued.js";
import { showNextKey, startKeyField } from "./key-field.js";

// The "lab-json" htmx extension: sends a form as the JSON body the API expects, with the
// Idempotency-Key header the client's key strategy picks. Numeric inputs become JSON
// numbers and checkboxes booleans. A settings control sends only its own value, and a
// button with data-body sends exactly that body.

function randomKey() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  return "k-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2);
}

// The Idempotency-Key this request carries, by the client's key strategy:
// a stable key per intent, a fresh random one per click, or none at all.
function keyFor(elt) {
  const press = pressFor(elt);
  if (press && press.key !== null) return press.key;
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

function setHeaders(evt) {
  const elt = evt.detail.elt;
  const headers = evt.detail.headers;
  headers["Content-Type"] = "application/json";
  if (elt.dataset.action) headers["X-Lab-Action"] = elt.dataset.action;
  if (!isCharge(elt)) return;
  const key = keyFor(elt);
  const press = takePress(elt);
  if (press && press.stale) { // pressed before the lab was reset: not sent into the new one
    evt.preventDefault();
    showNotice(t("queued_reset").replace("{button}", press.label), false);
    return;
  }
  if (press) evt.detail.parameters = press.params; // the order as it was when pressed
  if (key === "") return; // no key: the request runs unprotected, on purpose
  // Anything else goes out, and the server answers 400 if bad.
  if (unsendable(key)) {
    evt.preventDefault();
    refuse(key); // told in the panel: the page stays put
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
    // Another amount all the same: at the most a charge may be, one below it (a 422
    // for the amount would hide the 409 this button is for).
    const most = Number(elt.dataset.amountMax);
    body.amount += body.amount + delta > most ? -delta : delta;
    // The field shows what was sent, so Retry sends (and replays) that same body.
    const amount = byId("amount");
    if (amount) amount.value = String(body.amount);
    showNextKey();
  }
  return JSON.stringify(body);
}

function startJson() {
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

// The requests this tab has in flight, and the client-side guard that counts on them:
// while a charge request is in flight, the buttons are disabled and further clicks in
// this tab are dropped. Other tabs know nothing of it.

let inFlight = 0; // charge requests this tab has open now
let pending = 0; // htmx requests of any kind this tab has open now (New order too)

export function chargesInFlight() {
  return inFlight;
}

export function requestsPending() {
  return pending;
}

function isCharge(elt) {
  return elt && elt.matches && elt.matches("[hx-post$='/api/charges']");
}

function guardOn() {
  return byId("guard") && byId("guard").checked;
}

function setDisabled(disabled) {
  document.querySelectorAll("#order-form button").forEach(function (b) {
    b.disabled = disabled;
  });
}

// The explanation's headline (201, 402, 409, 502 alike), said to a screen reader.
function announceOutcome() {
  const headline = document.querySelector("#explain .headline");
  if (headline) announce(headline.textContent);
}

function chargeSent(evt) {
  if (!isCharge(evt.detail.elt)) return;
  hideNotice();
  inFlight += 1;
  if (guardOn()) setDisabled(true);
  // Show the request in flight on the timeline while the gateway takes its time.
  setTimeout(function () {
    if (inFlight > 0) htmx.trigger(document.body, "lab-refresh");
  }, 150);
}

function chargeAnswered(evt) {
  if (!isCharge(evt.detail.elt)) return;
  if (evt.detail.xhr && evt.detail.xhr.status) announceOutcome(); // a lost answer: see sendError
  inFlight = Math.max(0, inFlight - 1);
  if (inFlight === 0) {
    setDisabled(false);
    // This answer's panels were rendered when it finished; a request that finished
    // just after it (another tab's) is not in them, and a refresh asked for meanwhile
    // went out from the panels this swap replaced, so its answer is lost. Ask once
    // more from the panels now shown, once they have settled (htmx settles on a timer
    // set before this one): a 204 when nothing changed.
    setTimeout(function () {
      htmx.trigger(document.body, "lab-refresh");
    }, 50);
  }
}

function startInFlight() {
  document.body.addEventListener("htmx:confirm", function (evt) {
    if (isCharge(evt.detail.elt) && guardOn() && inFlight > 0) {
      evt.preventDefault();
      showNotice(t("guard_dropped"));
    }
  });
  // htmx sends one request per element at a time and queues the next: a press while this
  // button's last request is paused (step mode) would otherwise wait unseen. (Capturing:
  // before htmx sends this press, whose own request would count as the one in flight.)
  document.addEventListener("click", function (evt) {
    const button = evt.target.closest ? evt.target.closest("#order-form button[data-action]") : null;
    if (!button || button.disabled || (guardOn() && inFlight > 0)) return; // the guard's own notice
    const sources = button.id === "double-submit"
      ? document.querySelectorAll("#order-form [data-action^='Double-submit ']")
      : [button];
    if (Array.prototype.some.call(sources, function (el) { return el.classList.contains("htmx-request"); })) {
      keepPress(button, sources);
      // Not scrolled to: the next click must land on the button it aims at.
      showNotice(t("queued").replace("{button}", button.textContent.trim()), false);
    }
  }, true);
  document.body.addEventListener("htmx:beforeRequest", function (evt) {
    pending += 1;
    // A notice answers the last thing pressed (a blocked lane's key, a lost response): the
    // next change sent takes it away. Not a GET: polls and redraws change nothing.
    const config = evt.detail.requestConfig;
    if (config && config.verb && config.verb.toLowerCase() !== "get") hideNotice();
  });
  document.body.addEventListener("htmx:afterRequest", function () {
    pending = Math.max(0, pending - 1);
  });
  document.body.addEventListener("htmx:beforeRequest", chargeSent);
  // A reset starts the lab afresh: a notice about the lab before it (the "press Shift+X"
  // tip, a lost answer) no longer holds. A refused reset says so again in its own notice.
  document.body.addEventListener("htmx:beforeRequest", function (evt) {
    const elt = evt.detail.elt;
    if (elt && elt.matches && elt.matches("[data-action='Reset']")) hideNotice();
  });
  document.body.addEventListener("htmx:afterRequest", chargeAnswered);
}

// Answers that are not panels, said in the notice line: a problem+json answer and a
// dropped connection.

// A problem+json answer in one line: "422 Invalid fault plan: …".
export function problemText(d) {
  return (d.status ? d.status + " " : "") + (d.title || t("error")) + ": " + (d.detail || "");
}

function startProblems() {
  // Problem+json answers to htmx carry HX-Reswap: none and this event.
  document.body.addEventListener("lab-problem", function (evt) {
    const text = problemText(evt.detail || {});
    // A form far down the page says it beside itself too, where the eye is: the page
    // then stays there (the notice line is not brought on screen).
    const form = evt.target && evt.target.closest ? evt.target.closest("form") : null;
    const slot = form ? form.querySelector("[data-problem-slot]") : null;
    showNotice(text, !slot);
    if (slot) {
      slot.textContent = text;
      slot.hidden = false;
    }
  });
  // A dropped connection: the lost-response and crash faults do exactly this. The panels'
  // headline then says "No response — did it charge?", on screen, once they are fetched
  // again: the notice says it only when that fetch fails too (the server is unreachable),
  // not as a second box under the buttons.
  document.body.addEventListener("htmx:sendError", function (evt) {
    if (evt.detail && evt.detail.elt && evt.detail.elt.id === "panels") {
      showNotice(t("no_response"), false);
      return;
    }
    announce(t("no_response")); // a screen reader hears it as the page shows it
    htmx.trigger(document.body, "lab-refresh");
  });
}

export function start() {
  startJson(); // the extension, before htmx processes the page
  startInFlight();
  startKeyField();
  startProblems();
}
