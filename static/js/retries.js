// The retry lab's page: the fault plan's preset menu and its free list stay one plan.
// Choosing a preset writes its list into the field; editing the field makes the plan
// "your own list" (the server reads the field only then).
function start() {
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

start();
