// A click the client refused to send (a key no HTTP header can carry) is the last
// attempt, so the explanation panel speaks of it, not of the server's answer before it
// (which may name another reason, such as a key too long). The refusal shows as the
// notice under the order form; nothing reached the server, so the server's panels stay
// as they are until the next request changes them.
import { byId, t } from "./page.js";

function speakOfRefusal() {
  const explain = byId("explain");
  if (!explain) return;
  const headline = document.createElement("p");
  headline.className = "headline";
  headline.textContent = t("refused_headline");
  const reason = document.createElement("p");
  reason.textContent = byId("notice").textContent;
  const nothing = document.createElement("p");
  nothing.textContent = t("refused_nothing_sent");
  const mode = explain.querySelector(".mode"); // the settings line stays true
  explain.replaceChildren(...[headline, reason, nothing].concat(mode ? [mode] : []));
  explain.className = "card explain tone-conflict";
  explain.dataset.refused = "true";
}

export function start() {
  const notice = byId("notice");
  if (!notice) return;
  new MutationObserver(function () {
    if (!notice.hidden && notice.dataset.kind === "bad-header-key") speakOfRefusal();
  }).observe(notice, { attributes: true, attributeFilter: ["hidden"], childList: true, characterData: true, subtree: true });
}
