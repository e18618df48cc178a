// Sending requests: the "lab-json" htmx extension (JSON body, key header), this tab's requests in
// flight and the client guard on them, the key field's next-key line, the notice's problems.
import { byId, t, showNotice, hideNotice, announce, showKeepingKeys } from "./page.js";
import { unsendable, refusalOf, refuse, keyCaveats } from "./refusal.js";
import { keepPress, pressFor, takePress, dropGonePresses } from "./queued.js";

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

// An input's value as JSON: a boolean for a checkbox, a number for a numeric input.
// An amount as the ledger writes it (100,000; Vietnamese 100.000), or as typed past the
// integers a number holds exactly (run P: 99999999999999999999 read as 1 followed by 20 zeros).
function shownAmount(sent, input) {
  if (typeof sent !== "number" || !Number.isSafeInteger(sent)) return input.value.trim();
  return new Intl.NumberFormat(document.documentElement.lang || "en").format(sent);
}

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

// The key field and the line under it show what the client's key strategy will send:
// the order's stable key, a new random key per click, or no key. The key follows the
// order id (one intent, one key) until the user edits the key.

// Outside printable ASCII, the order id's characters are percent-encoded (UTF-8), as the
// server's intent_key() does: a key the page builds is always one a header can carry. A
// comma too: the server refuses it (it cannot be told from a second key header).
function stableKey(order) {
  const part = Array.from(order.value).map(function (c) {
    return c >= "!" && c <= "~" && c !== "," ? c : encodeURIComponent(c);
  }).join("");
  return order.dataset.keyTemplate.replace("{order}", part);
}

// When the strategy changes, when the page loads (a scenario may start with "no key"),
// and after New order.
function showStrategy() {
  const strategy = byId("key-strategy");
  const field = byId("idempotency-key");
  const order = byId("order-id");
  if (!strategy || !field) return;
  if (strategy.value === "stable") {
    if (order && field.dataset.derived !== "true") {
      field.value = stableKey(order);
      field.dataset.derived = "true";
    }
  } else {
    field.value = "";
    field.placeholder = t(strategy.value === "none" ? "no_key_placeholder" : "random_key_placeholder");
    field.dataset.derived = "false";
  }
}

// Under the key field, which key the next Retry sends (after "Retry with a new key", its own).
function showNextKey() {
  const out = byId("key-next");
  const strategy = byId("key-strategy");
  const field = byId("idempotency-key");
  const order = byId("order-id");
  if (!out || !field) return;
  const value = strategy ? strategy.value : "stable";
  const stable = order ? stableKey(order) : "";
  let text;
  if (value === "random") text = t("next_key_random");
  else if (value === "none" || field.value === "") {
    text = t(field.value ? "next_key_ignored" : "next_key_none"); // the strategy wins
  }
  else if (field.value.trim() === "") text = t("next_key_blank"); // HTTP trims a header value
  else if (unsendable(field.value)) {
    text = refusalOf(field.value, {browser: "next_key_unsendable", door: "next_key_door"});
  }
  else if (field.value === stable) {
    // The amount too: the same key with another amount is a 409, not a replay.
    // As the body carries it: "1e3" goes out as 1000; an empty field as nothing to charge.
    const amount = byId("amount");
    const sent = amount ? valueOf(amount, amount.value) : "";
    text = sent === ""
      ? t("next_key_stable_no_amount").replace("{key}", field.value)
      : t("next_key_stable").replace("{key}", field.value).replace("{amount}", shownAmount(sent, amount));
    // The order charged under other keys only, or none (a request from outside the page):
    // the store never saw this one, so Retry would charge again, not replay.
    const charges = Array.from(document.querySelectorAll("#ledger tr[data-order='" + CSS.escape(order.value) + "']"));
    const kept = document.querySelector("#store tr[data-key='" + CSS.escape(field.value) + "']");
    if (charges.length && !kept && !charges.some((row) => row.dataset.key === field.value)) {
      text += ". " + t("next_key_unseen");
    }
  }
  else text = t("next_key_other").replace("{key}", field.value).replace("{stable}", stable);
  if (field.value.trim() !== "" && !unsendable(field.value)) {
    text = (text + " " + keyCaveats(field.value)).trim();
  }
  // A pasted key longer than the field takes is cut without a word from the browser: said
  // first, before the key it cut (255 characters to read past).
  if (field.maxLength > 0 && field.value.length >= field.maxLength) {
    text = t("key_at_limit").replace("{max}", String(field.maxLength)) + " " + text;
  }
  showKeepingKeys(out, text, [field.value, stable]);
  const differs = value === "stable" && field.value !== "" && field.value !== stable;
  out.classList.toggle("differs", differs);
  const restore = document.querySelector("[data-restore-key]");
  if (restore) restore.hidden = !differs;
}

function restoreKey() {
  const field = byId("idempotency-key");
  const order = byId("order-id");
  if (!field || !order) return;
  field.value = stableKey(order);
  field.dataset.derived = "true"; // it follows the order id again
  showNextKey();
}

// "A Retry from here sends the same key and body" is true of this tab's form only while it
// holds the answer's order: after another tab's request, it says what Retry sends instead.
function checkRetryAdvice() {
  const advice = document.querySelector("#explain [data-about-order]");
  const order = byId("order-id");
  if (!advice || !order) return;
  const about = advice.dataset.aboutOrder;
  advice.textContent = order.value === about ? advice.dataset.said
    : t("retry_other_order").replaceAll("{order}", about).replaceAll("{form}", order.value);
}

function startKeyField() {
  showStrategy();
  showNextKey();
  checkRetryAdvice();
  document.body.addEventListener("htmx:afterSettle", checkRetryAdvice);
  document.body.addEventListener("htmx:afterSettle", showNextKey); // the ledger and store moved
  document.addEventListener("click", function (evt) {
    if (evt.target.closest && evt.target.closest("[data-restore-key]")) restoreKey();
  });
  document.body.addEventListener("change", function (evt) {
    if (evt.target.id === "key-strategy") {
      byId("idempotency-key").dataset.derived = "false"; // derive the key afresh
      showStrategy();
      showNextKey();
    }
  });
  document.body.addEventListener("htmx:afterSwap", function (evt) {
    if (evt.detail.target && evt.detail.target.id === "order-form") {
      dropGonePresses();
      showStrategy();
      showNextKey();
    }
  });
  document.body.addEventListener("input", function (evt) {
    const target = evt.target;
    if (target.id === "order-id") {
      const key = byId("idempotency-key");
      if (key && key.dataset.derived === "true") key.value = stableKey(target);
    } else if (target.id === "idempotency-key") {
      target.dataset.derived = "false";
    }
    if (["order-id", "idempotency-key", "amount"].includes(target.id)) showNextKey();
    if (target.id === "order-id") checkRetryAdvice();
  });
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
