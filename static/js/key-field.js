// The key field and the line under it show what the client's key strategy will send:
// the order's stable key, a new random key per click, or no key. The key follows the
// order id (one intent, one key) until the user edits the key.
import { byId, t } from "./page.js";

function stableKey(order) {
  return order.dataset.keyTemplate.replace("{order}", order.value);
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

// Under the key field: which key the next Retry sends, said in words (after "Retry with
// a new key" the field holds that random key, not the order's stable key).
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
  else if (value === "none" || field.value === "") text = t("next_key_none");
  else if (field.value === stable) text = t("next_key_stable").replace("{key}", field.value);
  else text = t("next_key_other").replace("{key}", field.value).replace("{stable}", stable);
  out.textContent = text;
  out.classList.toggle("differs", value === "stable" && field.value !== "" && field.value !== stable);
}

export function start() {
  showStrategy();
  showNextKey();
  document.body.addEventListener("change", function (evt) {
    if (evt.target.id === "key-strategy") {
      byId("idempotency-key").dataset.derived = "false"; // derive the key afresh
      showStrategy();
      showNextKey();
    }
  });
  document.body.addEventListener("htmx:afterSwap", function (evt) {
    if (evt.detail.target && evt.detail.target.id === "order-form") {
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
    if (target.id === "order-id" || target.id === "idempotency-key") showNextKey();
  });
}
