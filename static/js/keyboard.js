// The keyboard: where the focus goes, the shortcuts list, and the single-key shortcuts.
import { byId, t, showNotice } from "./page.js";
import { nextStep } from "./lessons.js";

// Where the focus goes. A mouse click leaves no focus on the button or switch it pressed
// (so the next space is "next step", not that button again), and a swap that replaces
// the focused control puts the focus on its replacement, never on <body>.

let focusWas = null; // the focused control before a swap, as describe() gives it

// A key press (Enter, space) keeps the focus where it is; the mouse leaves none.
function blurAfterMouse(evt) {
  if (!evt.detail) return; // 0: a key press or a script's click, not the mouse
  const active = document.activeElement;
  if (!active || !active.matches) return;
  if (active.matches("button, input[type=checkbox], input[type=radio], [role=switch]") &&
      !(byId("shortcuts") && byId("shortcuts").contains(active))) {
    active.blur();
  }
}

// How to find a control again after a swap: a selector for its replacement (the same
// id, lane, action or name) and the section it was in.
function describe(el) {
  if (!el || el === document.body || !el.closest) return null;
  const quote = function (v) { return "'" + String(v).replace(/\\/g, "\\\\").replace(/'/g, "\\'") + "'"; };
  let selector = null;
  if (el.id) selector = "#" + (window.CSS && CSS.escape ? CSS.escape(el.id) : el.id);
  else if (el.dataset.stepLabel) selector = "[data-step-label=" + quote(el.dataset.stepLabel) + "]";
  else if (el.dataset.action) selector = el.tagName.toLowerCase() + "[data-action=" + quote(el.dataset.action) + "]";
  else if (el.dataset.cardAction) selector = "[data-card-action=" + quote(el.dataset.cardAction) + "]";
  else if (el.dataset.body) selector = el.tagName.toLowerCase() + "[data-body=" + quote(el.dataset.body) + "]";
  else if (el.name) selector = el.tagName.toLowerCase() + "[name=" + quote(el.name) + "]";
  const section = el.closest("section[id], form[id]");
  return {el: el, selector: selector, section: section ? "#" + section.id : null};
}

// The focused control's replacement, or, when the control is gone (a lane that ran to
// its end), the nearest control that stands in for it: the next lane's Step button, else
// the section it was in.
function restoreFocus() {
  const was = focusWas;
  if (!was || (was.el.isConnected && document.activeElement !== document.body)) {
    focusWas = null;
    return;
  }
  if (document.activeElement && document.activeElement !== document.body && document.activeElement !== was.el) {
    focusWas = null; // the focus has moved on by itself
    return;
  }
  focusWas = null;
  const same = was.selector ? document.querySelector(was.selector) : null;
  if (same && same.disabled && !was.waiting) {
    was.waiting = true; // htmx enables it again when its request ends
    focusWas = was;
    return;
  }
  const candidates = [same];
  if (was.section === "#step") {
    candidates.push(document.querySelector("[data-step-label]:not([disabled])"));
  }
  const section = was.section && document.querySelector(was.section);
  candidates.push(section);
  for (const next of candidates) {
    if (!next || next.disabled || next.offsetParent === null) continue;
    if (next === section && !next.hasAttribute("tabindex")) next.setAttribute("tabindex", "-1");
    next.focus();
    if (document.activeElement === next) return;
  }
}

function startFocus() {
  document.addEventListener("click", blurAfterMouse);
  // A button htmx disables while its request runs (hx-disabled-elt) loses the focus then:
  // it is remembered as it was when the request left.
  let atRequest = null;
  document.body.addEventListener("htmx:beforeRequest", function () {
    atRequest = describe(document.activeElement);
  });
  document.body.addEventListener("htmx:beforeSwap", function () {
    const active = document.activeElement;
    const lost = active === document.body && atRequest && atRequest.el.disabled;
    if (!focusWas || focusWas.el.isConnected) focusWas = lost ? atRequest : describe(active);
  });
  document.body.addEventListener("htmx:afterSettle", restoreFocus);
  document.body.addEventListener("htmx:afterRequest", function () {
    if (focusWas && focusWas.waiting) restoreFocus();
  });
}

// The shortcuts list: a modal dialog (opened with ?, its button, closed with Esc, Close
// or a click outside) that keeps Tab inside, and its switch that turns the single-key
// shortcuts off (WCAG 2.1.4), remembered in this browser.

const SHORTCUTS_STORE = "idempotency-lab.single-key-shortcuts";
let returnFocus = null; // where the focus was before the list opened

function shortcutsOn() {
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

function overlayOpen() {
  return byId("shortcuts") !== null && !byId("shortcuts").hidden;
}

// Open (show true), close (false) or toggle (no argument) the list.
function toggleShortcuts(show) {
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
function trapTab(evt) {
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

function startShortcuts() {
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

// Keyboard: space or "." (what a presenter remote sends) is "next step": step the paused
// requests in turn, else do the lesson's next step. p/r/d press Pay, Retry and
// Double-submit, a/b/c step a lane, Shift+X resets (destructive: never one plain key),
// m toggles presenter mode, ? shows the shortcuts.
// A focused control always gets its own keys: no single-key shortcut fires while a
// button, switch, field, link or the scrollable code view has the focus. A mouse click
// leaves no focus on a button or switch (above), so after a click space is "next
// step" again; keyboard focus stays where it is.

const KEYS = {
  p: "button[data-action='Pay']",
  r: "button[data-action='Retry']",
  d: "#double-submit",
  X: "button[data-action='Reset']",
  m: ".present-switch"
};

const CONTROLS = "input, select, textarea, button, a[href], summary, [contenteditable], " +
  "[role=button], [role=switch], [role=checkbox], [role=link], [tabindex]:not([tabindex='-1'])";

function isControl(target) {
  return !!(target && target.closest && target !== document.body && target.closest(CONTROLS));
}

// A scroll region (the ledger, the code view) takes the focus on a click, for its arrow
// keys and Space: the letters and "." still act on the page (run AC: p did nothing).
function inRegion(target, key) {
  return !!(target && target.matches && target.matches("[tabindex='0']:not(button, a, input, select, textarea)")) &&
    key !== " ";
}

// While the shortcuts list is open, keys act on the list, never behind it.
function keyInList(evt) {
  if (evt.key === "Escape" || (evt.key === "?" && shortcutsOn())) {
    toggleShortcuts(false); // Esc closes it, whatever has the focus inside
    evt.preventDefault();
  } else if (evt.key === "Tab") {
    trapTab(evt);
  } else if (isControl(evt.target) && (evt.key === " " || evt.key === "Enter")) {
    return; // the list's own button and switch
  } else if (evt.key === " " || /^[a-zA-Z.]$/.test(evt.key)) {
    // The list is open: a key closes it rather than acting behind it.
    toggleShortcuts(false);
    evt.preventDefault();
  }
}

// A single-key shortcut on the page.
function keyOnPage(evt) {
  let button = null;
  if (evt.key === "?") {
    toggleShortcuts(true);
    evt.preventDefault();
    return;
  }
  // A read-only replay runs nothing: only presenter mode and the list stay.
  if (document.querySelector("#page.read-only") && evt.key !== "m") return;
  if (/^[abc]$/.test(evt.key)) {
    const label = evt.key.toUpperCase();
    button = document.querySelector("[data-step-label='" + label + "']:not([disabled])");
    // A blocked lane cannot step: say why and what can, rather than do nothing.
    const blocked = document.querySelector("[data-step-label='" + label + "'][data-blocked-by]");
    if (!button && blocked) {
      const by = blocked.dataset.blockedBy;
      showNotice(t("lane_blocked").replaceAll("{label}", label).replaceAll("{by}", by)
        .replaceAll("{key}", by.toLowerCase()));
      return;
    }
  } else if (evt.key === "." || evt.key === " ") {
    evt.preventDefault();
    nextStep();
    return;
  } else if (evt.key === "x") {
    showNotice(t("reset_needs_shift")); // one slip of a finger must not wipe the lab
    return;
  } else if (KEYS[evt.key] && (evt.key !== "X" || evt.shiftKey)) {
    button = document.querySelector(KEYS[evt.key]);
  }
  if (button) {
    evt.preventDefault();
    button.click();
  }
}

function startKeyboard() {
  document.addEventListener("keydown", function (evt) {
    const target = evt.target;
    // The key field wraps a long key but holds one line: Enter adds no line break.
    if (target && target.id === "idempotency-key" && evt.key === "Enter") {
      evt.preventDefault();
      return;
    }
    if (evt.ctrlKey || evt.metaKey || evt.altKey) return;
    if (overlayOpen()) {
      keyInList(evt);
      return;
    }
    if ((isControl(target) && !inRegion(target, evt.key)) || !shortcutsOn()) return;
    keyOnPage(evt);
  });
}

export function start() {
  startFocus(); // first: a mouse click drops the focus before the list remembers it
  startShortcuts();
  startKeyboard();
}
