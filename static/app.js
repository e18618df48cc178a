// The little the lab page needs beyond htmx attributes. Loaded from a file (no inline
// script), so the page runs under a Content-Security-Policy without 'unsafe-inline'.
(function () {
  "use strict";

  var inFlight = 0; // charge requests this tab has open now
  var pending = 0; // htmx requests of any kind this tab has open now (New order too)

  function byId(id) {
    return document.getElementById(id);
  }

  // The words this script shows, translated by the server into the page's language
  // (a JSON block in the page: data, not a script).
  var strings = (function () {
    var block = byId("i18n-strings");
    try {
      return block ? JSON.parse(block.textContent) : {};
    } catch (e) {
      return {};
    }
  })();

  function t(key) {
    return strings[key] || key;
  }

  function isCharge(elt) {
    return elt && elt.matches && elt.matches("[hx-post$='/api/charges']");
  }

  function randomKey() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    return "k-" + Date.now().toString(36) + "-" + Math.random().toString(36).slice(2);
  }

  // The Idempotency-Key this request carries, by the client's key strategy:
  // a stable key per intent, a fresh random one per click, or none at all.
  function keyFor(elt) {
    var field = byId("idempotency-key");
    var strategy = byId("key-strategy") ? byId("key-strategy").value : "stable";
    if (elt.dataset.newKey === "true" || strategy === "random") {
      var fresh = randomKey();
      if (field) {
        field.value = fresh; // show the attendee the key that went out
        field.dataset.derived = "false";
        showNextKey();
      }
      return fresh;
    }
    if (strategy === "none" || !field) return "";
    return field.value;
  }

  // Sends the form as the JSON body the API expects, with the Idempotency-Key header.
  // Numeric inputs become JSON numbers and checkboxes booleans. A settings control
  // sends only its own value, and a button with data-body sends exactly that body.
  htmx.defineExtension("lab-json", {
    onEvent: function (name, evt) {
      if (name !== "htmx:configRequest") return;
      var elt = evt.detail.elt;
      var headers = evt.detail.headers;
      headers["Content-Type"] = "application/json";
      if (elt.dataset.action) headers["X-Lab-Action"] = elt.dataset.action;
      if (!isCharge(elt)) return;
      var key = keyFor(elt);
      if (key === "") return; // no key: the request runs unprotected, on purpose
      // A header cannot carry characters beyond Latin-1 or control characters: the
      // browser would throw. Anything else goes out, and the server answers 400 if bad.
      if (/[^\x20-\x7e\xa0-\xff]/.test(key)) {
        evt.preventDefault();
        showNotice(t("bad_header_key"));
        return;
      }
      headers["Idempotency-Key"] = key;
    },
    encodeParameters: function (xhr, parameters, elt) {
      xhr.overrideMimeType("text/json");
      if (elt.dataset.body) return elt.dataset.body;
      if (elt.closest("#settings") && elt.name) {
        var own = {};
        own[elt.name] = valueOf(elt, elt.value);
        return JSON.stringify(own);
      }
      var body = {};
      parameters.forEach(function (value, name) {
        body[name] = valueOf(document.getElementsByName(name)[0], value);
      });
      var delta = Number(elt.dataset.amountDelta);
      if (delta && typeof body.amount === "number") {
        body.amount += delta;
        // The field shows what was sent, so Retry sends (and replays) that same body.
        var amount = byId("amount");
        if (amount) amount.value = String(body.amount);
      }
      return JSON.stringify(body);
    }
  });

  function valueOf(input, value) {
    if (!input) return value;
    if (input.type === "checkbox") return input.checked;
    var numeric = input.type === "number" || input.type === "range" || input.dataset.json === "number";
    var number = Number(value);
    // Send what the user typed: 100000.5 goes as a number so the server can say why it is refused.
    return numeric && String(value).trim() !== "" && isFinite(number) ? number : value;
  }

  // The explanation's headline (201, 402, 409, 502 alike) into a live region that stays
  // in the page: the panels are replaced on each answer, and a region that is itself new
  // is not announced.
  function announceOutcome() {
    var region = byId("outcome-announce");
    var headline = document.querySelector("#explain .headline");
    if (!region || !headline) return;
    region.textContent = "";
    setTimeout(function () { region.textContent = headline.textContent; }, 50);
  }

  function showNotice(text) {
    var notice = byId("notice");
    if (!notice) return;
    notice.textContent = text;
    notice.hidden = false;
  }

  function hideNotice() {
    var notice = byId("notice");
    if (notice) notice.hidden = true;
  }

  // The client-side guard: while a charge request is in flight, the buttons are
  // disabled and further clicks in this tab are dropped. Other tabs know nothing of it.
  function guardOn() {
    return byId("guard") && byId("guard").checked;
  }

  function setDisabled(disabled) {
    document.querySelectorAll("#order-form button").forEach(function (b) {
      b.disabled = disabled;
    });
  }

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
  document.body.addEventListener("htmx:beforeRequest", function (evt) {
    if (!isCharge(evt.detail.elt)) return;
    hideNotice();
    inFlight += 1;
    if (guardOn()) setDisabled(true);
    // Show the request in flight on the timeline while the gateway takes its time.
    setTimeout(function () {
      if (inFlight > 0) htmx.trigger(document.body, "lab-refresh");
    }, 150);
  });
  document.body.addEventListener("htmx:afterRequest", function (evt) {
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
  });

  // Two answers can arrive out of order (Double-submit): never let an older render of
  // the panels replace a newer one. The server stamps each render with the lab's version.
  document.body.addEventListener("htmx:beforeSwap", function (evt) {
    var current = byId("panels");
    var target = evt.detail.target;
    if (!current || (target !== current && target.id !== "panels-slot")) return;
    var match = /data-version="(\d+)"/.exec(evt.detail.serverResponse || "");
    if (match && Number(match[1]) < Number(current.dataset.version)) evt.detail.shouldSwap = false;
  });

  // Another tab switched this lab's scenario, language or presenter mode: this page is
  // stale, start over.
  document.body.addEventListener("htmx:afterSwap", function () {
    var panels = byId("panels");
    var layout = document.querySelector("main.layout");
    var page = byId("page");
    if (!panels || !layout || !page) return;
    var present = page.classList.contains("present") ? "true" : "false";
    if (panels.dataset.scenario !== layout.dataset.scenario ||
        panels.dataset.lang !== document.documentElement.lang ||
        panels.dataset.present !== present) {
      window.location.reload();
    }
  });

  // The lab clock's line beside its buttons follows the panels (+1 h / +25 h, Reset).
  document.body.addEventListener("htmx:afterSwap", function () {
    var panels = byId("panels");
    var out = byId("clock-now");
    if (panels && out && panels.dataset.clock && out.textContent !== panels.dataset.clock) {
      out.textContent = panels.dataset.clock;
    }
  });

  // Presenter mode: when requests stop in step mode, bring their lanes on screen (a
  // presenter remote cannot scroll).
  var lanesShown = false;
  document.body.addEventListener("htmx:afterSettle", function () {
    var step = document.querySelector("#page.present #step [data-step-label]");
    if (step && !lanesShown) byId("step").scrollIntoView({block: "start"});
    lanesShown = step !== null;
  });

  // The code view follows the current line: the line of the lane just stepped (else the
  // first marked line). A redraw keeps the code box where it was, and scrolls only
  // when that line is out of view, so the marker never vanishes below the box's edge.
  var followLane = null;
  var codeScroll = 0;
  document.body.addEventListener("htmx:beforeRequest", function (evt) {
    var elt = evt.detail.elt;
    if (elt && elt.dataset && elt.dataset.stepLabel) followLane = elt.dataset.stepLabel;
  });
  document.body.addEventListener("htmx:beforeSwap", function () {
    var code = document.querySelector("pre.code");
    if (code) codeScroll = code.scrollTop;
  });
  function followCode() {
    var code = document.querySelector("pre.code");
    if (!code) return;
    var chip = followLane && code.querySelector(".here .chip-" + followLane);
    var line = chip ? chip.closest(".line") : code.querySelector(".here");
    if (code.dataset.followed !== "true") {
      code.scrollTop = codeScroll; // the new box opens where the old one was
      code.dataset.followed = "true";
    }
    if (!line) return;
    var top = line.getBoundingClientRect().top - code.getBoundingClientRect().top;
    if (top < 0 || top + line.offsetHeight > code.clientHeight) {
      code.scrollTop = Math.max(0, code.scrollTop + top - code.clientHeight / 3);
    }
    codeScroll = code.scrollTop;
  }
  document.body.addEventListener("htmx:afterSwap", followCode);
  document.body.addEventListener("htmx:afterSettle", followCode);
  followCode();

  // Download the sequence diagram as PNG, for slides: the same SVG, drawn on a canvas.
  document.body.addEventListener("click", function (evt) {
    var button = evt.target.closest && evt.target.closest("[data-png-from]");
    if (!button) return;
    var image = new Image();
    image.onload = function () {
      var canvas = document.createElement("canvas");
      canvas.width = image.naturalWidth * 2; // twice the pixels: sharp on a projector
      canvas.height = image.naturalHeight * 2;
      var context = canvas.getContext("2d");
      context.scale(2, 2);
      context.drawImage(image, 0, 0);
      canvas.toBlob(function (blob) {
        var link = document.createElement("a");
        link.href = URL.createObjectURL(blob);
        link.download = "idempotency-sequence.png";
        document.body.appendChild(link);
        link.click();
        link.remove();
        setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
      }, "image/png");
    };
    image.src = button.dataset.pngFrom + "?v=" + Date.now();
  });

  // Keep the failure lab open (or closed) when the settings form is swapped in anew.
  var failuresOpen = null;
  document.body.addEventListener("htmx:oobBeforeSwap", function (evt) {
    var details = document.querySelector("#settings details.failures");
    if (details && evt.detail.target && evt.detail.target.id === "settings") failuresOpen = details.open;
  });
  document.body.addEventListener("htmx:oobAfterSwap", function () {
    var details = document.querySelector("#settings details.failures");
    if (details && failuresOpen !== null) details.open = failuresOpen;
    failuresOpen = null;
  });

  // The key field shows what the client strategy will send: when the strategy changes,
  // when the page loads (a scenario may start with "no key"), and after New order.
  function showStrategy() {
    var strategy = byId("key-strategy");
    var field = byId("idempotency-key");
    var order = byId("order-id");
    if (!strategy || !field) return;
    if (strategy.value === "stable") {
      if (order && field.dataset.derived !== "true") {
        field.value = order.dataset.keyTemplate.replace("{order}", order.value);
        field.dataset.derived = "true";
      }
    } else {
      field.value = "";
      field.placeholder = t(strategy.value === "none" ? "no_key_placeholder" : "random_key_placeholder");
      field.dataset.derived = "false";
    }
  }
  // Under the key field: which key the next Retry sends, said in words (after "Retry with
  // a new key" the field holds that random key, not the order's stable key).
  function showNextKey() {
    var out = byId("key-next");
    var strategy = byId("key-strategy");
    var field = byId("idempotency-key");
    var order = byId("order-id");
    if (!out || !field) return;
    var value = strategy ? strategy.value : "stable";
    var stable = order ? order.dataset.keyTemplate.replace("{order}", order.value) : "";
    var text;
    if (value === "random") text = t("next_key_random");
    else if (value === "none" || field.value === "") text = t("next_key_none");
    else if (field.value === stable) text = t("next_key_stable").replace("{key}", field.value);
    else text = t("next_key_other").replace("{key}", field.value).replace("{stable}", stable);
    out.textContent = text;
    out.classList.toggle("differs", value === "stable" && field.value !== "" && field.value !== stable);
  }
  showStrategy();
  showNextKey();
  document.body.addEventListener("change", function (evt) {
    if (evt.target.id === "key-strategy") {
      byId("idempotency-key").dataset.derived = "false"; // derive the key afresh
      showStrategy();
      showNextKey();
    }
  });
  document.body.addEventListener("htmx:afterSwap", function (evt) {
    if (evt.detail.target && evt.detail.target.id === "order-form") {
      showStrategy();
      showNextKey();
    }
  });

  // Problem+json answers to htmx carry HX-Reswap: none and this event.
  document.body.addEventListener("lab-problem", function (evt) {
    var d = evt.detail || {};
    showNotice((d.status ? d.status + " " : "") + (d.title || t("error")) + ": " + (d.detail || ""));
  });
  // A dropped connection: the lost-response and crash faults do exactly this.
  document.body.addEventListener("htmx:sendError", function () {
    showNotice(t("no_response"));
    htmx.trigger(document.body, "lab-refresh");
  });

  // The key follows the order id (one intent, one key) until the user edits the key.
  document.body.addEventListener("input", function (evt) {
    var target = evt.target;
    if (target.id === "order-id") {
      var key = byId("idempotency-key");
      if (key && key.dataset.derived === "true") {
        key.value = target.dataset.keyTemplate.replace("{order}", target.value);
      }
    } else if (target.id === "idempotency-key") {
      target.dataset.derived = "false";
    } else if (target.id === "latency") {
      byId("latency-out").value = target.value + " ms";
    }
    if (target.id === "order-id" || target.id === "idempotency-key") showNextKey();
  });

  // Keyboard: space or "." (what a presenter remote sends) is "next step": step the paused
  // requests in turn, else do the lesson's next step. p/r/d press Pay, Retry and
  // Double-submit, a/b/c step a lane, Shift+X resets (destructive: never one plain key),
  // m toggles presenter mode, ? shows the shortcuts.
  // A focused control always gets its own keys: no single-key shortcut fires while a
  // button, switch, field, link or the scrollable code view has the focus. A mouse click
  // leaves no focus on a button or switch (see below), so after a click space is "next
  // step" again; keyboard focus stays where it is. A switch in the shortcuts list turns
  // the single-key shortcuts off (WCAG 2.1.4), remembered in this browser.
  var KEYS = {
    p: "button[data-action='Pay']",
    r: "button[data-action='Retry']",
    d: "#double-submit",
    X: "button[data-action='Reset']",
    m: ".present-switch"
  };
  var SHORTCUTS_STORE = "idempotency-lab.single-key-shortcuts";
  function shortcutsOn() {
    try {
      return window.localStorage.getItem(SHORTCUTS_STORE) !== "off";
    } catch (e) {
      return true; // storage blocked: the default
    }
  }
  function showShortcutsSwitch() {
    var toggle = byId("single-key-shortcuts");
    if (toggle) toggle.checked = shortcutsOn();
  }
  showShortcutsSwitch();
  document.addEventListener("change", function (evt) {
    if (evt.target.id !== "single-key-shortcuts") return;
    try {
      window.localStorage.setItem(SHORTCUTS_STORE, evt.target.checked ? "on" : "off");
    } catch (e) {
      /* storage blocked: the switch holds for this page only */
    }
  });

  var CONTROLS = "input, select, textarea, button, a[href], summary, [contenteditable], " +
    "[role=button], [role=switch], [role=checkbox], [role=link], [tabindex]:not([tabindex='-1'])";
  function isControl(target) {
    return !!(target && target.closest && target !== document.body && target.closest(CONTROLS));
  }

  var returnFocus = null; // where the focus was before the shortcuts list opened
  function overlayOpen() {
    return byId("shortcuts") !== null && !byId("shortcuts").hidden;
  }
  function toggleShortcuts(show) {
    var overlay = byId("shortcuts");
    if (!overlay) return;
    var open = show === undefined ? overlay.hidden : show;
    if (open === !overlay.hidden) return;
    if (open) {
      returnFocus = document.activeElement;
      showShortcutsSwitch();
      overlay.hidden = false;
      var card = overlay.querySelector(".card");
      if (card) card.focus(); // a modal dialog takes the focus (WAI-ARIA APG, dialog)
    } else {
      overlay.hidden = true;
      // Back where it was: the control that opened the list, or nothing (opened with ?
      // or the mouse), so that space is "next step" again.
      var back = returnFocus;
      returnFocus = null;
      if (back && back !== document.body && back.isConnected && back.focus) back.focus();
      else if (document.activeElement && document.activeElement.blur) document.activeElement.blur();
    }
  }
  // Tab and Shift+Tab stay inside the open list.
  function trapTab(evt) {
    var overlay = byId("shortcuts");
    var focusable = Array.prototype.filter.call(
      overlay.querySelectorAll("button, input, a[href]"),
      function (el) { return !el.disabled && el.offsetParent !== null; }
    );
    if (!focusable.length) {
      evt.preventDefault();
      return;
    }
    var first = focusable[0];
    var last = focusable[focusable.length - 1];
    var inside = overlay.contains(document.activeElement);
    if (evt.shiftKey && (document.activeElement === first || !inside)) {
      evt.preventDefault();
      last.focus();
    } else if (!evt.shiftKey && (document.activeElement === last || !inside)) {
      evt.preventDefault();
      first.focus();
    }
  }

  document.addEventListener("keydown", function (evt) {
    var target = evt.target;
    // The key field wraps a long key but holds one line: Enter adds no line break.
    if (target && target.id === "idempotency-key" && evt.key === "Enter") {
      evt.preventDefault();
      return;
    }
    if (evt.ctrlKey || evt.metaKey || evt.altKey) return;
    if (overlayOpen()) {
      if (evt.key === "Escape" || (evt.key === "?" && shortcutsOn())) {
        toggleShortcuts(false); // Esc closes it, whatever has the focus inside
        evt.preventDefault();
      } else if (evt.key === "Tab") {
        trapTab(evt);
      } else if (isControl(target) && (evt.key === " " || evt.key === "Enter")) {
        return; // the list's own button and switch
      } else if (evt.key === " " || /^[a-zA-Z.]$/.test(evt.key)) {
        // The list is open: a key closes it rather than acting behind it.
        toggleShortcuts(false);
        evt.preventDefault();
      }
      return;
    }
    if (isControl(target) || !shortcutsOn()) return;
    var button = null;
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
  });

  // A mouse click leaves no focus on the button or switch it pressed: the next space is
  // "next step", not that button again. A key press (Enter, space) keeps the focus there.
  document.addEventListener("click", function (evt) {
    if (!evt.detail) return; // 0: a key press or a script's click, not the mouse
    var active = document.activeElement;
    if (!active || !active.matches) return;
    if (active.matches("button, input[type=checkbox], input[type=radio], [role=switch]") &&
        !(byId("shortcuts") && byId("shortcuts").contains(active))) {
      active.blur();
    }
  });

  // A swap that replaces the focused control puts the focus back on its replacement (the
  // same id, lane, action or name), or, when the control is gone (a lane that ran to its
  // end), on the nearest control that stands in for it: the next lane's Step button, else
  // the section it was in. Never on <body>.
  var focusWas = null;
  function describe(el) {
    if (!el || el === document.body || !el.closest) return null;
    var quote = function (v) { return "'" + String(v).replace(/\\/g, "\\\\").replace(/'/g, "\\'") + "'"; };
    var selector = null;
    if (el.id) selector = "#" + (window.CSS && CSS.escape ? CSS.escape(el.id) : el.id);
    else if (el.dataset.stepLabel) selector = "[data-step-label=" + quote(el.dataset.stepLabel) + "]";
    else if (el.dataset.action) selector = el.tagName.toLowerCase() + "[data-action=" + quote(el.dataset.action) + "]";
    else if (el.dataset.body) selector = el.tagName.toLowerCase() + "[data-body=" + quote(el.dataset.body) + "]";
    else if (el.name) selector = el.tagName.toLowerCase() + "[name=" + quote(el.name) + "]";
    var section = el.closest("section[id], form[id]");
    return {el: el, selector: selector, section: section ? "#" + section.id : null};
  }
  document.body.addEventListener("htmx:beforeSwap", function () {
    var active = document.activeElement;
    if (!focusWas || focusWas.el.isConnected) focusWas = describe(active);
  });
  document.body.addEventListener("htmx:afterSettle", function () {
    var was = focusWas;
    if (!was || (was.el.isConnected && document.activeElement !== document.body)) {
      focusWas = null;
      return;
    }
    if (document.activeElement && document.activeElement !== document.body && document.activeElement !== was.el) {
      focusWas = null; // the focus has moved on by itself
      return;
    }
    focusWas = null;
    var candidates = [];
    if (was.selector) candidates.push(document.querySelector(was.selector));
    if (was.section === "#step") {
      candidates.push(document.querySelector("[data-step-label]:not([disabled])"));
    }
    var section = was.section && document.querySelector(was.section);
    candidates.push(section);
    for (var i = 0; i < candidates.length; i++) {
      var next = candidates[i];
      if (!next || next.disabled || next.offsetParent === null) continue;
      if (next === section && !next.hasAttribute("tabindex")) next.setAttribute("tabindex", "-1");
      next.focus();
      if (document.activeElement === next) return;
    }
  });

  document.addEventListener("click", function (evt) {
    if (evt.target.id === "shortcuts") {
      toggleShortcuts(false); // a click on the backdrop, outside the list
      return;
    }
    var target = evt.target.closest ? evt.target.closest("[data-next-step], [data-shortcuts], [data-close-shortcuts]") : null;
    if (!target) return;
    if (target.hasAttribute("data-close-shortcuts")) toggleShortcuts(false);
    else if (target.hasAttribute("data-shortcuts")) toggleShortcuts();
    else nextStep();
  });

  // "Next step": the scenario's clicks one at a time, then the fix, then the next lesson.
  // Pressing the step's button yourself (or its key) counts as doing that step.
  var nextIndex = 0;
  document.addEventListener("click", function (evt) {
    var el = evt.target.closest ? evt.target.closest("button[data-action]") : null;
    var layout = document.querySelector("main[data-script]");
    if (!el || !layout || !layout.dataset.script) return;
    var script = layout.dataset.script.split("|");
    if (script[nextIndex] === el.dataset.action) nextIndex += 1;
  }, true);
  var nextQueued = false;
  function nextStep() {
    var layout = document.querySelector("main[data-script]");
    var script = layout && layout.dataset.script ? layout.dataset.script.split("|") : [];
    // Step mode: the paused requests take turns (A, B, A, …; a blocked one is skipped),
    // the lane after the one stepped last: so "next step" alone plays the interleaving
    // the lesson teaches (both pass lookup; with the lock, B blocks on A's lock).
    var lanes = Array.prototype.slice.call(document.querySelectorAll("[data-step-label]"));
    var last = -1;
    lanes.forEach(function (el, i) { if (el.dataset.stepLabel === followLane) last = i; });
    for (var i = 1; i <= lanes.length; i++) {
      var lane = lanes[(last + i) % lanes.length];
      if (!lane.disabled) {
        lane.click();
        return;
      }
    }
    if (document.querySelector("[data-step-label]")) return;
    if (inFlight > 0) {
      // Let the last step answer first, then go on: one queued press, kept for 2 s at most,
      // so a press cannot fire long after, on its own.
      if (!nextQueued) {
        nextQueued = true;
        var tries = 0;
        var timer = setInterval(function () {
          tries += 1;
          if (inFlight === 0 || tries >= 20) {
            clearInterval(timer);
            nextQueued = false;
            if (inFlight === 0) nextStep();
          }
        }, 100);
      }
      return;
    }
    if (nextIndex < script.length) {
      var name = script[nextIndex];
      clickAction(name); // the click listener below moves nextIndex on
      if (name === "Pay from two tabs") nextIndex += 1;
      return;
    }
    var onward = document.querySelector("[data-apply-fix]") ||
      document.querySelector("[data-next-lesson]") ||
      document.querySelector("#path .start button"); // free play: start the lessons
    if (onward) onward.click();
    else if (script.length) showNotice(t("path_done"));
  }

  // "Run the steps": click the scenario's buttons one after the other, each once the
  // requests of the one before have answered. Real clicks, real requests.
  // A second tab is a second client this tab's guard knows nothing about: the same
  // request, sent at the same moment, straight from the browser.
  function payFromAnotherTab() {
    var pay = document.querySelector("button[data-action='Pay']");
    var body = {};
    document.querySelectorAll("#order-form [name]").forEach(function (input) {
      body[input.name] = valueOf(input, input.value);
    });
    var headers = {"Content-Type": "application/json", "X-Lab-Action": "Pay (second tab)"};
    var key = byId("idempotency-key").value;
    if (key) headers["Idempotency-Key"] = key;
    fetch(pay.getAttribute("hx-post"), {method: "POST", headers: headers, body: JSON.stringify(body)})
      .then(function () { htmx.trigger(document.body, "lab-refresh"); });
    pay.click();
  }

  function clickAction(name) {
    if (name === "Pay from two tabs") {
      payFromAnotherTab();
      return true;
    }
    var button = document.querySelector("[data-action='" + name + "']:not(span)");
    if (button) button.click();
    return button !== null;
  }

  function runScript(names) {
    if (!names.length || !clickAction(names[0])) return;
    // Wait for 300 ms of quiet after the last answer, so each step draws as its own
    // group on the timeline (counting from the click, a slow answer left no gap). Every
    // request counts, not only charges: on a busy machine New order can take longer than
    // the quiet time, and a Pay sent before it answered would pay the old order.
    var waited = 0;
    var quiet = 0;
    var timer = setInterval(function () {
      waited += 100;
      quiet = inFlight === 0 && pending === 0 ? quiet + 100 : 0;
      if (quiet >= 300 || waited > 10000) {
        clearInterval(timer);
        runScript(names.slice(1));
      }
    }, 100);
  }

  // Run only once a person has the page on screen: never in a prerender (which runs
  // scripts before anyone asked) or a background tab.
  function whenSeen(action) {
    if (!document.prerendering && document.visibilityState === "visible") {
      action();
      return;
    }
    var done = false;
    function check() {
      if (done || document.prerendering || document.visibilityState !== "visible") return;
      done = true;
      action();
    }
    document.addEventListener("prerenderingchange", check);
    document.addEventListener("visibilitychange", check);
  }

  var layout = document.querySelector("[data-autorun='true']");
  if (layout && layout.dataset.script) {
    history.replaceState(null, "", window.location.pathname);
    whenSeen(function () {
      setTimeout(function () {
        runScript(layout.dataset.script.split("|"));
      }, 300);
    });
  }

  // A link that changes the lab (?lesson=, ?scenario=, ?present=) opens with its change
  // offered as a form: a GET changes nothing, so a link preview or a prefetch cannot reset
  // a lab. For a person the link stays one click: press the button for them, and replace
  // this page in the history, so Back does not open the lesson afresh again.
  var offer = document.querySelector("form[data-auto-open]");
  if (offer) {
    whenSeen(function () {
      var button = offer.querySelector("button");
      if (button) button.disabled = true;
      fetch(offer.action, {method: "POST", credentials: "same-origin"})
        .then(function (response) {
          if (response.ok && response.redirected) window.location.replace(response.url);
          else offer.submit(); // show the problem (a read-only replay, no free lab slot)
        })
        .catch(function () { offer.submit(); });
    });
  }
})();
