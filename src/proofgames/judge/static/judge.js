// proofgames judge: keyboard shortcuts and the timer on the rater's queue.
// Y / N choose the answer, 1-5 the confidence, Enter submits; the timer shows the time
// spent on the current step and is sent with the answer (elapsed_ms).
(function () {
  "use strict";
  function layout() { return document.querySelector(".step-layout"); }
  function start() {
    var el = layout();
    if (el && el.dataset.shownAt === "0") { el.dataset.shownAt = String(Date.now()); }
  }
  function elapsed() {
    var el = layout();
    return el ? Date.now() - Number(el.dataset.shownAt || Date.now()) : 0;
  }
  function tick() {
    var timer = document.querySelector(".timer");
    if (!timer) { return; }
    var s = Math.floor(elapsed() / 1000);
    timer.textContent = Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }
  function pick(name, value) {
    var input = document.querySelector('#answer-form input[name="' + name + '"][value="' + value + '"]');
    if (input) { input.checked = true; input.focus(); }
  }
  function stamp() {
    var field = document.querySelector('#answer-form input[name="elapsed_ms"]');
    if (field) { field.value = String(elapsed()); }
  }
  document.addEventListener("keydown", function (e) {
    if (!document.getElementById("answer-form") || e.ctrlKey || e.metaKey || e.altKey) { return; }
    var tag = (e.target && e.target.tagName) || "";
    if (tag === "TEXTAREA" || (tag === "INPUT" && e.target.type !== "radio")) { return; }
    var key = e.key.toLowerCase();
    if (key === "y") { pick("answer", "yes"); e.preventDefault(); }
    else if (key === "n") { pick("answer", "no"); e.preventDefault(); }
    else if ("12345".indexOf(key) >= 0 && key.length === 1) { pick("confidence", key); e.preventDefault(); }
    else if (key === "enter") {
      var form = document.getElementById("answer-form");
      var button = form.querySelector("button[type=submit]");
      if (button && !button.disabled) { e.preventDefault(); form.requestSubmit(); }
    }
  });
  document.addEventListener("submit", stamp, true);
  document.addEventListener("htmx:afterSwap", start);
  document.addEventListener("DOMContentLoaded", start);
  setInterval(tick, 500);
})();
