// A key the page keeps: no HTTP header can carry it (the browser would throw), or the lab's
// server would refuse the whole request before the lab reads it.
// The click is then the last attempt, so the explanation panel speaks of it, not of the
// server's answer before it (which may name another reason, such as a key too long).
// Nothing reached the server, so its other panels stay as they are. The line under the
// buttons names the character too; the panel is the one place that tells the whole rule.
import { byId, t, announce, hideNotice } from "./page.js";

// Beyond Latin-1 (a header value is bytes), or NUL, CR, LF: the browser throws on these
// (Fetch: a header value).
const UNSENDABLE = /[\x00\r\n]|[^\x00-\xff]/;
// A control character but the tab: the browser sends it, and the lab's server refuses the
// whole request before the lab reads it, with a plain-text 400 the page cannot explain. A
// tab (or "é") does reach the lab, which refuses it with 400: its keys are printable ASCII.
const AT_THE_DOOR = /[\x01-\x08\x0b-\x1f\x7f]/;

// A character by its code point ("“к” (U+043A)"; a control character by its code point
// alone: it shows as nothing).
function named(c) {
  if (c === "\t") return t("tab_named"); // it shows as a space: said by name
  const code = "U+" + c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
  return /[\x00-\x1f\x7f-\x9f]/.test(c) ? code : "“" + c + "” (" + code + ")";
}

function refusedChar(key) {
  return Array.from(key).find(function (ch) { return UNSENDABLE.test(ch) || AT_THE_DOOR.test(ch); });
}

export function unsendable(key) {
  return refusedChar(key) !== undefined;
}

// Why the page keeps this key, in the words ``said`` names for each case ({browser, door}).
export function refusalOf(key, said) {
  const c = refusedChar(key);
  return t(UNSENDABLE.test(c) ? said.browser : said.door).replace("{char}", named(c));
}

// A key sent quoted, as the IETF draft does: one structured-field string (RFC 8941 §3.3.3).
const SF_STRING = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*"$/;

// What the line under the buttons adds for a key that goes out as typed, yet not as the
// server takes it: HTTP trims the spaces at either end; a character outside printable
// ASCII (a tab, "é") is refused with 400, and so is a comma, or an unbalanced quote.
export function keyCaveats(key) {
  const said = [];
  const trimmed = key.replace(/^[ \t]+|[ \t]+$/g, "");
  if (trimmed !== key) said.push(t("key_trimmed").replace("{key}", trimmed));
  const odd = Array.from(trimmed).find(function (ch) { return !/[\x20-\x7e]/.test(ch); });
  if (odd) said.push(t("key_not_ascii").replace("{char}", named(odd)));
  else if (trimmed.includes(",")) said.push(t("key_comma"));
  else if (trimmed.startsWith('"') && !SF_STRING.test(trimmed)) said.push(t("key_bad_quote"));
  return said.join(" ");
}

export function refuse(key) {
  hideNotice(); // an older notice would speak of another press
  const explain = byId("explain");
  if (!explain) return;
  const headline = document.createElement("p");
  headline.className = "headline";
  headline.textContent = t("refused_headline");
  const reason = document.createElement("p");
  reason.textContent = refusalOf(key, {browser: "bad_header_key", door: "door_header_key"});
  const nothing = document.createElement("p");
  nothing.textContent = t("refused_nothing_sent");
  const mode = explain.querySelector(".mode"); // the settings line stays true
  // Not its line on the last request's missing key: this press sent nothing (run AF).
  const keyless = mode ? mode.querySelector(".keyless") : null;
  if (keyless) keyless.remove();
  explain.replaceChildren(...[headline, reason, nothing].concat(mode ? [mode] : []));
  explain.className = "card explain tone-conflict";
  explain.dataset.refused = "true";
  announce(headline.textContent + " " + reason.textContent);
}
