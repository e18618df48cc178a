// The little the lab page needs beyond htmx attributes, as ES modules in js/, one
// concern each. Loaded from files (no inline script), so the page runs under a
// Content-Security-Policy without 'unsafe-inline'.
//
// This module only starts the others, in this order. The order matters where two of
// them listen to the same event, since listeners run in the order they were added: after
// a swap settles, presenter mode scrolls the lanes on screen, then the code view follows
// its line (panels.js, then its stepping.js), then the focus comes back (keyboard.js; focus() scrolls
// too); a mouse click drops the focus before the shortcuts list remembers where the
// focus was (both keyboard.js, in that order).
//
// htmx is a classic deferred script placed before this module in the page: deferred and
// module scripts run in document order, once the page is parsed, so `htmx` exists here.
// The server writes each import's version into the module it serves ("./js/x.js?v=…",
// demo/web/js_modules.py): every module is cached, and none is stale after a deploy.
import * as requests from "./js/requests.js";
import * as panels from "./js/panels.js";
import * as keyboard from "./js/keyboard.js";
import * as lessons from "./js/lessons.js";
import * as autorun from "./js/autorun.js";
import * as proofInView from "./js/proof-in-view.js";
import * as fixBadge from "./js/fix-badge.js";

requests.start(); // first: the "lab-json" extension, before htmx processes the page
panels.start();
keyboard.start();
lessons.start();
autorun.start(); // may press a button at once: after the lessons' listeners
proofInView.start(); // presenter mode: the answer's proof on screen
fixBadge.start(); // the card's fix badge follows the page's client switches

// A page the browser keeps and shows again on Back or Forward (its back/forward cache)
// shows the lab as it was, with any menu choice left unsubmitted: load it afresh. (Form
// values it would restore otherwise are kept out by autocomplete="off" on the forms.)
window.addEventListener("pageshow", function (evt) {
  if (evt.persisted) location.reload();
});

// Every listener is in place: a key pressed from now on is heard. (A page that a
// navigation just replaced shows its HTML before this line runs; the browser tests wait
// for it before they press a key.)
document.documentElement.dataset.script = "started";
