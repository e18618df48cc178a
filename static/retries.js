// The retry lab's page: the fault plan's preset menu and its free list stay one plan,
// and the answer to Run or Storm is brought on screen.

// Choosing a preset writes its list into the field; editing the field makes the plan
// "your own list" (the server reads the field only then).
function startPlan() {
  const presets = document.querySelector("[data-fault-presets]");
  const plan = document.querySelector("[data-fault-plan]");
  if (!presets || !plan) return;
  presets.addEventListener("change", function () {
    const chosen = presets.selectedOptions[0];
    if (chosen && chosen.dataset.plan) plan.value = chosen.dataset.plan;
  });
  plan.addEventListener("input", function () {
    presets.value = "custom";
  });
}

// The forms sit in the left column, their answers in the right one: once the panels
// have settled, scroll the answer (the run, or the storm's chart) into view if it is
// not, by as little as it takes. A poll's refresh moves nothing.
const ANSWERS = {"policy-form": "#run", "storm-form": "#storm"};

function startAnswerInView() {
  let shown = null;
  document.body.addEventListener("htmx:afterRequest", function (evt) {
    const elt = evt.detail.elt;
    shown = elt && ANSWERS[elt.id] && evt.detail.successful ? ANSWERS[elt.id] : null;
  });
  document.body.addEventListener("htmx:afterSettle", function () {
    const answer = shown && document.querySelector(shown);
    shown = null;
    if (answer) answer.scrollIntoView({block: "nearest"});
  });
}

startPlan();
startAnswerInView();
