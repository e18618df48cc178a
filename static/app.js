// The little the lab page needs beyond htmx attributes, as ES modules in js/, one job
// each. Loaded from files (no inline script), so the page runs under a
// Content-Security-Policy without 'unsafe-inline'.
//
// This module only starts the others, in this order. The order matters where two of
// them listen to the same event, since listeners run in the order they were added: after
// a swap settles, presenter mode scrolls the lanes on screen, then the code view follows
// its line, then the focus comes back (focus() scrolls too); a mouse click drops the
// focus (focus.js) before the shortcuts list remembers where the focus was.
//
// htmx is a classic deferred script placed before this module in the page: deferred and
// module scripts run in document order, once the page is parsed, so `htmx` exists here.
// The server writes each import's version into the module it serves ("./js/x.js?v=…",
// demo/web/js_modules.py): every module is cached, and none is stale after a deploy.
import * as labJson from "./js/lab-json.js";
import * as inFlight from "./js/in-flight.js";
import * as panels from "./js/panels.js";
import * as clock from "./js/clock.js";
import * as presenter from "./js/presenter.js";
import * as stepMode from "./js/step-mode.js";
import * as codeView from "./js/code-view.js";
import * as diagramPng from "./js/diagram-png.js";
import * as settings from "./js/settings.js";
import * as keyField from "./js/key-field.js";
import * as problems from "./js/problems.js";
import * as focus from "./js/focus.js";
import * as shortcuts from "./js/shortcuts.js";
import * as keyboard from "./js/keyboard.js";
import * as nextStep from "./js/next-step.js";
import * as autorun from "./js/autorun.js";
import * as refusal from "./js/refusal.js";

labJson.start(); // the "lab-json" extension, before htmx processes the page
inFlight.start();
panels.start();
clock.start();
presenter.start();
stepMode.start();
codeView.start();
diagramPng.start();
settings.start();
keyField.start();
problems.start();
focus.start();
shortcuts.start();
keyboard.start();
nextStep.start();
autorun.start(); // last: it may press a button at once
refusal.start();
