// Keyboard: space or "." (what a presenter remote sends) is "next step": step the paused
// requests in turn, else do the lesson's next step. p/r/d press Pay, Retry and
// Double-submit, a/b/c step a lane, Shift+X resets (destructive: never one plain key),
// m toggles presenter mode, ? shows the shortcuts.
// A focused control always gets its own keys: no single-key shortcut fires while a
// button, switch, field, link or the scrollable code view has the focus. A mouse click
// leaves no focus on a button or switch (focus.js), so after a click space is "next
// step" again; keyboard focus stays where it is.
import { t, showNotice } from "./page.js";
import { shortcutsOn, overlayOpen, toggleShortcuts, trapTab } from "./shortcuts.js";
import { nextStep } from "./next-step.js";

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
    button = document.querySelector("[data-step-label='" + evt.key.toUpperCase() + "']:not([disabled])");
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

export function start() {
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
    if (isControl(target) || !shortcutsOn()) return;
    keyOnPage(evt);
  });
}
