// What every part of the page script needs: an element by its id, the page's words in
// its language, the notice line under the order form, and the status region.

export function byId(id) {
  return document.getElementById(id);
}

// The words this script shows, translated by the server into the page's language
// (a JSON block in the page: data, not a script).
const strings = (function () {
  const block = byId("i18n-strings");
  try {
    return block ? JSON.parse(block.textContent) : {};
  } catch (e) {
    return {};
  }
})();

export function t(key) {
  return strings[key] || key;
}

export function showNotice(text, reveal = true) {
  const notice = byId("notice");
  if (!notice) return;
  notice.textContent = text;
  notice.hidden = false;
  // The only answer to what was just pressed, so on screen (presenter mode's client column
  // scrolls on its own, and the notice sits under its buttons). Not when the panels tell
  // it too (a lost response): the buttons then stay under the pointer.
  if (reveal) notice.scrollIntoView({block: "nearest", behavior: "instant"});
}

// Said to a screen reader through the page's status region, which stays in the page: the
// panels are replaced on each answer, and a region that is itself new is not announced.
export function announce(text) {
  const region = byId("outcome-announce");
  if (!region) return;
  region.textContent = "";
  setTimeout(function () { region.textContent = text; }, 50);
}

export function hideNotice() {
  const notice = byId("notice");
  if (notice) notice.hidden = true;
}

// The top of the screen the page's content can use: below presenter mode's header, which
// stays on screen (sticky) above the results column; 0 elsewhere.
export function screenTop() {
  const header = document.querySelector("#page.present > .top");
  if (!header || window.getComputedStyle(header).position !== "sticky") return 0;
  return Math.max(0, header.getBoundingClientRect().bottom);
}

// ``text`` in ``el``, each of ``keys`` in it kept whole on one line when it fits: a key
// wrapped at its hyphen ("order-" at a line's end, "42:v1" below) read as two. Only where
// it stands as a word: a one-letter key "a" is no part of "Pay" or "and".
export function showKeepingKeys(el, text, keys) {
  const whole = keys.filter(Boolean).sort(function (a, b) { return b.length - a.length; });
  const starts = function (i) { return i === 0 || /[\s(“"]/.test(text[i - 1]); };
  const ends = function (j) { return j >= text.length || !/[\p{L}\p{N}_-]/u.test(text[j]); };
  const stands = function (i, k) { return starts(i) && ends(i + k.length); };
  const nodes = [];
  let from = 0;
  let done = 0; // text before it is in nodes already
  while (from < text.length) {
    let at = -1;
    let key = "";
    whole.forEach(function (k) {
      let i = text.indexOf(k, from);
      while (i >= 0 && !stands(i, k)) i = text.indexOf(k, i + 1);
      if (i >= 0 && (at < 0 || i < at)) { at = i; key = k; }
    });
    if (at < 0) break;
    // The key's opening bracket or quote, and the marks that close it (").", ":"), stay
    // with it: a "(" left at a line's end read as a stray mark before the key.
    const lead = at > done && /[(“"]/.test(text[at - 1]) ? 1 : 0;
    const end = at + key.length;
    const tail = (/^[)”"]?[.,:;]?/.exec(text.slice(end)) || [""])[0].length;
    if (at - lead > done) nodes.push(text.slice(done, at - lead));
    const keep = document.createElement("span");
    keep.className = "key-keep";
    const span = document.createElement("span");
    span.className = "key-whole";
    span.textContent = key;
    keep.append(text.slice(at - lead, at), span, text.slice(end, end + tail));
    nodes.push(keep);
    from = done = end + tail;
  }
  if (done < text.length) nodes.push(text.slice(done));
  el.replaceChildren(...nodes);
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
