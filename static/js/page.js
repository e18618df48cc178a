// What every part of the page script needs: an element by its id, the page's words in
// its language, and the notice line under the order form.

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

export function showNotice(text) {
  const notice = byId("notice");
  if (!notice) return;
  notice.textContent = text;
  notice.hidden = false;
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
