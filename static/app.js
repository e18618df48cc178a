// The little the lab page needs beyond htmx attributes. Loaded from a file (no inline
// script), so the page runs under a Content-Security-Policy without 'unsafe-inline'.
(function () {
  "use strict";

  // Sends a form as the JSON body the API expects, with the Idempotency-Key header taken
  // from the key field. Numeric inputs become JSON numbers, a checkbox becomes a boolean.
  htmx.defineExtension("lab-json", {
    onEvent: function (name, evt) {
      if (name !== "htmx:configRequest") return;
      var elt = evt.detail.elt;
      var headers = evt.detail.headers;
      headers["Content-Type"] = "application/json";
      if (elt.dataset.action) headers["X-Lab-Action"] = elt.dataset.action;
      var keyField = document.getElementById("idempotency-key");
      if (!keyField || evt.detail.verb !== "post") return;
      var key = keyField.value;
      if (key === "") return; // no key: the request runs unprotected, on purpose
      // A header cannot carry characters beyond Latin-1 or control characters: the
      // browser would throw. Anything else goes out, and the server answers 400 if bad.
      if (/[^\x20-\x7e\xa0-\xff]/.test(key)) {
        evt.preventDefault();
        showNotice("This key cannot be sent in an HTTP header (control or non-Latin-1 characters). Keys are printable ASCII.");
        return;
      }
      headers["Idempotency-Key"] = key;
    },
    encodeParameters: function (xhr, parameters, elt) {
      xhr.overrideMimeType("text/json");
      var body = {};
      parameters.forEach(function (value, name) {
        var input = document.getElementsByName(name)[0];
        var numeric = input && (input.type === "number" || input.type === "range");
        var number = Number(value);
        // Send what the user typed: 100000.5 goes as a number so the server can say why it is refused.
        body[name] = numeric && String(value).trim() !== "" && isFinite(number) ? number : value;
      });
      if (elt.type === "checkbox") body[elt.name] = elt.checked;
      var delta = Number(elt.dataset.amountDelta);
      if (delta && typeof body.amount === "number") body.amount += delta;
      return JSON.stringify(body);
    }
  });

  function showNotice(text) {
    var notice = document.getElementById("notice");
    if (!notice) return;
    notice.textContent = text;
    notice.hidden = false;
  }

  function hideNotice() {
    var notice = document.getElementById("notice");
    if (notice) notice.hidden = true;
  }

  // Two answers can arrive out of order (Double-submit): never let an older render of
  // the panels replace a newer one. The server stamps each render with the lab's version.
  document.body.addEventListener("htmx:beforeSwap", function (evt) {
    var current = document.getElementById("panels");
    if (!current || evt.detail.target !== current) return;
    var match = /data-version="(\d+)"/.exec(evt.detail.serverResponse || "");
    if (match && Number(match[1]) < Number(current.dataset.version)) evt.detail.shouldSwap = false;
  });

  // Problem+json answers to htmx carry HX-Reswap: none and this event.
  document.body.addEventListener("lab-problem", function (evt) {
    var d = evt.detail || {};
    showNotice((d.status ? d.status + " " : "") + (d.title || "Error") + ": " + (d.detail || ""));
  });
  document.body.addEventListener("htmx:beforeRequest", hideNotice);
  document.body.addEventListener("htmx:sendError", function () {
    showNotice("No response: the server could not be reached. Did it charge? Only the server knows.");
  });

  // The key follows the order id (one intent, one key) until the user edits the key.
  document.body.addEventListener("input", function (evt) {
    var target = evt.target;
    if (target.id === "order-id") {
      var key = document.getElementById("idempotency-key");
      if (key && key.dataset.derived === "true") {
        key.value = target.dataset.keyTemplate.replace("{order}", target.value);
      }
    } else if (target.id === "idempotency-key") {
      target.dataset.derived = "false";
    } else if (target.id === "latency") {
      document.getElementById("latency-out").value = target.value + " ms";
    }
  });
})();
