// A lesson card's fix badge follows the switch its fix is made of as the attendee moves
// it: what the switch holds now, and "(set by hand)" or "(changed by hand)" when that is
// not what the card applied (templates/_partials/fix_state.html). The payment lab's
// client switches live in this page only, so the server cannot draw them: this does.

export function showHeld(badge, holds) {
  const fixed = badge.dataset.fixed === "1";
  badge.classList.toggle("on", holds);
  badge.classList.toggle("off", !holds);
  const how = holds === fixed ? "" : " " + (holds ? badge.dataset.set : badge.dataset.changed);
  badge.textContent = (holds ? badge.dataset.on : badge.dataset.off) + how;
  // Before the case without the fix is seen, the card says to undo it: as it is set.
  document.querySelectorAll("li.undo-first[data-fix='" + badge.dataset.fix + "']")
    .forEach(function (li) { li.hidden = !holds; });
  // After it is seen, the steps the switch now holds: the fix's, or the case's.
  document.querySelectorAll("li[data-fix-on='" + badge.dataset.fix + "']")
    .forEach(function (li) { li.hidden = !holds; });
  document.querySelectorAll("li[data-fix-off='" + badge.dataset.fix + "']")
    .forEach(function (li) { li.hidden = holds; });
  // The next press: the case's own button once the fix is set by hand, not Apply the fix.
  if (badge.dataset.fixed !== "1") {
    document.querySelectorAll("[data-primary-if='" + badge.dataset.fix + "']")
      .forEach(function (button) { button.classList.toggle("primary", holds); });
    document.querySelectorAll("[data-primary-unless='" + badge.dataset.fix + "']")
      .forEach(function (button) { button.classList.toggle("primary", !holds); });
  }
}

// Whether the page control a badge names (data-switch) holds the fix now: a box ticked
// or cleared (data-holds "checked", "unchecked"), or a choice made (the payment lab's key
// strategy: "stable"; the storm's Strategy: "all|full_jitter", either). null when the page
// has no such control.
function holdsNow(badge) {
  const control = document.querySelector(badge.dataset.switch);
  if (!control) return null;
  const want = badge.dataset.holds;
  if (control.type === "checkbox") return control.checked === (want === "checked");
  return want.split("|").includes(control.value); // a menu: any of the choices that hold it
}

// Every lab's card: the badge, and the steps it turns, follow the fix's switch as it
// moves, before anything is sent (a key strategy, Dedup, a retry policy's box).
function follow() {
  document.querySelectorAll(".fix-state[data-switch]").forEach(function (badge) {
    const holds = holdsNow(badge);
    if (holds !== null) showHeld(badge, holds);
  });
}

export function start() {
  document.addEventListener("change", follow);
  // The card is drawn again with each answer: from the server's view, the card's switch.
  document.body.addEventListener("htmx:afterSwap", follow);
  follow();
}
