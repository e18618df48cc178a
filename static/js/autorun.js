// What a link asks for, done for the person who opened it once they see the page: a
// lesson's "Run the steps", and a link's change offered as a form (a GET changes
// nothing, so a link preview or a prefetch cannot reset a lab).
import { chargesInFlight, requestsPending } from "./in-flight.js";
import { clickAction } from "./actions.js";

// Run only once a person has the page on screen: never in a prerender (which runs
// scripts before anyone asked) or a background tab.
function whenSeen(action) {
  if (!document.prerendering && document.visibilityState === "visible") {
    action();
    return;
  }
  let done = false;
  function check() {
    if (done || document.prerendering || document.visibilityState !== "visible") return;
    done = true;
    action();
  }
  document.addEventListener("prerenderingchange", check);
  document.addEventListener("visibilitychange", check);
}

// "Run the steps": click the scenario's buttons one after the other, each once the
// requests of the one before have answered. Real clicks, real requests.
function runScript(names) {
  if (!names.length || !clickAction(names[0])) return;
  // Wait for 300 ms of quiet after the last answer, so each step draws as its own
  // group on the timeline (counting from the click, a slow answer left no gap). Every
  // request counts, not only charges: on a busy machine New order can take longer than
  // the quiet time, and a Pay sent before it answered would pay the old order.
  let waited = 0;
  let quiet = 0;
  const timer = setInterval(function () {
    waited += 100;
    quiet = chargesInFlight() === 0 && requestsPending() === 0 ? quiet + 100 : 0;
    if (quiet >= 300 || waited > 10000) {
      clearInterval(timer);
      runScript(names.slice(1));
    }
  }, 100);
}

// A link that changes the lab (?lesson=, ?scenario=, ?present=) opens with its change
// offered as a form. For a person the link stays one click: press the button for them,
// and replace this page in the history, so Back does not open the lesson afresh again.
function openOffer(offer) {
  const button = offer.querySelector("button");
  if (button) button.disabled = true;
  fetch(offer.action, {method: "POST", credentials: "same-origin"})
    .then(function (response) {
      if (response.ok && response.redirected) window.location.replace(response.url);
      else offer.submit(); // show the problem (a read-only replay, no free lab slot)
    })
    .catch(function () { offer.submit(); });
}

export function start() {
  const layout = document.querySelector("[data-autorun='true']");
  if (layout && layout.dataset.script) {
    history.replaceState(null, "", window.location.pathname);
    whenSeen(function () {
      setTimeout(function () {
        runScript(layout.dataset.script.split("|"));
      }, 300);
    });
  }
  const offer = document.querySelector("form[data-auto-open]");
  if (offer) whenSeen(function () { openOffer(offer); });
}
