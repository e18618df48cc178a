// Where the focus goes. A mouse click leaves no focus on the button or switch it pressed
// (so the next space is "next step", not that button again), and a swap that replaces
// the focused control puts the focus on its replacement, never on <body>.
import { byId } from "./page.js";

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
  const candidates = [];
  if (was.selector) candidates.push(document.querySelector(was.selector));
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

export function start() {
  document.addEventListener("click", blurAfterMouse);
  document.body.addEventListener("htmx:beforeSwap", function () {
    const active = document.activeElement;
    if (!focusWas || focusWas.el.isConnected) focusWas = describe(active);
  });
  document.body.addEventListener("htmx:afterSettle", restoreFocus);
}
