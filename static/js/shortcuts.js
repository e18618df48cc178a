// The shortcuts list: a modal dialog (opened with ?, its button, closed with Esc, Close
// or a click outside) that keeps Tab inside, and its switch that turns the single-key
// shortcuts off (WCAG 2.1.4), remembered in this browser.
import { byId } from "./page.js";

const SHORTCUTS_STORE = "idempotency-lab.single-key-shortcuts";
let returnFocus = null; // where the focus was before the list opened

export function shortcutsOn() {
  try {
    return window.localStorage.getItem(SHORTCUTS_STORE) !== "off";
  } catch (e) {
    return true; // storage blocked: the default
  }
}

function showShortcutsSwitch() {
  const toggle = byId("single-key-shortcuts");
  if (toggle) toggle.checked = shortcutsOn();
}

export function overlayOpen() {
  return byId("shortcuts") !== null && !byId("shortcuts").hidden;
}

// Open (show true), close (false) or toggle (no argument) the list.
export function toggleShortcuts(show) {
  const overlay = byId("shortcuts");
  if (!overlay) return;
  const open = show === undefined ? overlay.hidden : show;
  if (open === !overlay.hidden) return;
  if (open) {
    returnFocus = document.activeElement;
    showShortcutsSwitch();
    overlay.hidden = false;
    const card = overlay.querySelector(".card");
    if (card) card.focus(); // a modal dialog takes the focus (WAI-ARIA APG, dialog)
  } else {
    overlay.hidden = true;
    // Back where it was: the control that opened the list, or nothing (opened with ?
    // or the mouse), so that space is "next step" again.
    const back = returnFocus;
    returnFocus = null;
    if (back && back !== document.body && back.isConnected && back.focus) back.focus();
    else if (document.activeElement && document.activeElement.blur) document.activeElement.blur();
  }
}

// Tab and Shift+Tab stay inside the open list.
export function trapTab(evt) {
  const overlay = byId("shortcuts");
  const focusable = Array.prototype.filter.call(
    overlay.querySelectorAll("button, input, a[href]"),
    function (el) { return !el.disabled && el.offsetParent !== null; }
  );
  if (!focusable.length) {
    evt.preventDefault();
    return;
  }
  const first = focusable[0];
  const last = focusable[focusable.length - 1];
  const inside = overlay.contains(document.activeElement);
  if (evt.shiftKey && (document.activeElement === first || !inside)) {
    evt.preventDefault();
    last.focus();
  } else if (!evt.shiftKey && (document.activeElement === last || !inside)) {
    evt.preventDefault();
    first.focus();
  }
}

export function start() {
  showShortcutsSwitch();
  document.addEventListener("change", function (evt) {
    if (evt.target.id !== "single-key-shortcuts") return;
    try {
      window.localStorage.setItem(SHORTCUTS_STORE, evt.target.checked ? "on" : "off");
    } catch (e) {
      /* storage blocked: the switch holds for this page only */
    }
  });
  document.addEventListener("click", function (evt) {
    if (evt.target.id === "shortcuts") {
      toggleShortcuts(false); // a click on the backdrop, outside the list
      return;
    }
    const target = evt.target.closest ? evt.target.closest("[data-shortcuts], [data-close-shortcuts]") : null;
    if (!target) return;
    if (target.hasAttribute("data-close-shortcuts")) toggleShortcuts(false);
    else toggleShortcuts();
  });
}
