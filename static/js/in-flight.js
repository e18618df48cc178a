// The requests this tab has in flight, and the client-side guard that counts on them:
// while a charge request is in flight, the buttons are disabled and further clicks in
// this tab are dropped. Other tabs know nothing of it.
import { byId, t, showNotice, hideNotice } from "./page.js";

let inFlight = 0; // charge requests this tab has open now
let pending = 0; // htmx requests of any kind this tab has open now (New order too)

export function chargesInFlight() {
  return inFlight;
}

export function requestsPending() {
  return pending;
}

export function isCharge(elt) {
  return elt && elt.matches && elt.matches("[hx-post$='/api/charges']");
}

function guardOn() {
  return byId("guard") && byId("guard").checked;
}

function setDisabled(disabled) {
  document.querySelectorAll("#order-form button").forEach(function (b) {
    b.disabled = disabled;
  });
}

// The explanation's headline (201, 402, 409, 502 alike) into a live region that stays
// in the page: the panels are replaced on each answer, and a region that is itself new
// is not announced.
function announceOutcome() {
  const region = byId("outcome-announce");
  const headline = document.querySelector("#explain .headline");
  if (!region || !headline) return;
  region.textContent = "";
  setTimeout(function () { region.textContent = headline.textContent; }, 50);
}

function chargeSent(evt) {
  if (!isCharge(evt.detail.elt)) return;
  hideNotice();
  inFlight += 1;
  if (guardOn()) setDisabled(true);
  // Show the request in flight on the timeline while the gateway takes its time.
  setTimeout(function () {
    if (inFlight > 0) htmx.trigger(document.body, "lab-refresh");
  }, 150);
}

function chargeAnswered(evt) {
  if (!isCharge(evt.detail.elt)) return;
  if (evt.detail.xhr && evt.detail.xhr.status) announceOutcome(); // a lost answer has its notice
  inFlight = Math.max(0, inFlight - 1);
  if (inFlight === 0) {
    setDisabled(false);
    // This answer's panels were rendered when it finished; a request that finished
    // just after it (another tab's) is not in them, and a refresh asked for meanwhile
    // went out from the panels this swap replaced, so its answer is lost. Ask once
    // more from the panels now shown, once they have settled (htmx settles on a timer
    // set before this one): a 204 when nothing changed.
    setTimeout(function () {
      htmx.trigger(document.body, "lab-refresh");
    }, 50);
  }
}

export function start() {
  document.body.addEventListener("htmx:confirm", function (evt) {
    if (isCharge(evt.detail.elt) && guardOn() && inFlight > 0) {
      evt.preventDefault();
      showNotice(t("guard_dropped"));
    }
  });
  document.body.addEventListener("htmx:beforeRequest", function () {
    pending += 1;
  });
  document.body.addEventListener("htmx:afterRequest", function () {
    pending = Math.max(0, pending - 1);
  });
  document.body.addEventListener("htmx:beforeRequest", chargeSent);
  document.body.addEventListener("htmx:afterRequest", chargeAnswered);
}
