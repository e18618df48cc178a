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
}

// The key strategy the card's fix asks for (lessons 1 and 3: a stable key per intent).
function followKeyStrategy() {
  const select = document.getElementById("key-strategy");
  const badge = document.querySelector(".fix-state[data-fix='key-strategy']");
  if (select && badge) showHeld(badge, select.value === badge.dataset.fixValue);
}

export function start() {
  document.addEventListener("change", function (evt) {
    if (evt.target.id === "key-strategy") followKeyStrategy();
  });
  // The card is drawn again with each answer: from the server's view, the card's switch.
  document.body.addEventListener("htmx:afterSwap", followKeyStrategy);
  followKeyStrategy();
}
