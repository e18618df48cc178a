// The key field and the line under it (payment lab) show what the client's key strategy
// will send: the order's stable key, a new random key per click, or no key. The key follows
// the order id (one intent, one key) until the user edits the key. And the explanation's
// "A Retry from here", true of this tab's form only.
import { byId, t, showKeepingKeys, valueOf } from "./page.js";
import { unsendable, refusalOf, keyCaveats } from "./refusal.js";
import { dropGonePresses } from "./queued.js";

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

// An amount as the ledger writes it (100,000; Vietnamese 100.000), or as typed past the
// integers a number holds exactly (run P: 99999999999999999999 read as 1 followed by 20 zeros).
function shownAmount(sent, input) {
  if (typeof sent !== "number" || !Number.isSafeInteger(sent)) return input.value.trim();
  return new Intl.NumberFormat(document.documentElement.lang || "en").format(sent);
}

// Under the key field, which key the next Retry sends (after "Retry with a new key", its own).
export function showNextKey() {
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
  // "no key": a key in the field (the one Retry with a new key sent) is not sent by Pay,
  // Retry or Double-submit; greyed and struck through, as the line says (run AC).
  field.classList.toggle("unsent", value === "none" && field.value !== "");
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
// Nor under a Key strategy that sends no key, or a new one per click: the server cannot
// know the page's strategy, and its Retry would charge again (run AC).
function checkRetryAdvice() {
  const advice = document.querySelector("#explain [data-about-order]");
  const order = byId("order-id");
  if (!advice || !order) return;
  const about = advice.dataset.aboutOrder;
  const strategy = byId("key-strategy") ? byId("key-strategy").value : "stable";
  if (strategy === "none" || strategy === "random") {
    advice.textContent = t(strategy === "none" ? "retry_no_key" : "retry_random_key");
    return;
  }
  advice.textContent = order.value === about ? advice.dataset.said
    : t("retry_other_order").replaceAll("{order}", about).replaceAll("{form}", order.value);
}

export function startKeyField() {
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
      checkRetryAdvice();
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
