// A key no HTTP header can carry: the browser would throw, so the page refuses to send it.
// The click is then the last attempt, so the explanation panel speaks of it, not of the
// server's answer before it (which may name another reason, such as a key too long).
// Nothing reached the server, so its other panels stay as they are. The line under the
// buttons names the character too; the panel is the one place that tells the whole rule.
import { byId, t, announce, hideNotice } from "./page.js";

// Beyond Latin-1, or a control character.
const UNSENDABLE = /[^\x20-\x7e\xa0-\xff]/;

export function unsendable(key) {
  return UNSENDABLE.test(key);
}

// The first character the header cannot carry, by its code point ("“к” (U+043A)"; a
// control character by its code point alone: it shows as nothing).
export function firstUnsendable(key) {
  const c = Array.from(key).find(function (ch) { return UNSENDABLE.test(ch); });
  const code = "U+" + c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0");
  return /[\x00-\x1f\x7f-\x9f]/.test(c) ? code : "“" + c + "” (" + code + ")";
}

export function refuse(key) {
  hideNotice(); // an older notice would speak of another press
  const explain = byId("explain");
  if (!explain) return;
  const headline = document.createElement("p");
  headline.className = "headline";
  headline.textContent = t("refused_headline");
  const reason = document.createElement("p");
  reason.textContent = t("bad_header_key").replace("{char}", firstUnsendable(key));
  const nothing = document.createElement("p");
  nothing.textContent = t("refused_nothing_sent");
  const mode = explain.querySelector(".mode"); // the settings line stays true
  explain.replaceChildren(...[headline, reason, nothing].concat(mode ? [mode] : []));
  explain.className = "card explain tone-conflict";
  explain.dataset.refused = "true";
  announce(headline.textContent + " " + reason.textContent);
}
