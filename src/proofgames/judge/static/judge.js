// proofgames judge: keyboard shortcuts, the timer, and failures made visible on the queue.
// Y / N / C choose the answer, 1-5 the confidence, Enter submits; the timer shows the time
// spent on the current step and is sent with the answer (elapsed_ms; the server measures
// its own). When an answer cannot be saved (the session ended, the page expired, the
// server refused it or could not be reached) the queue says so in an alert, hides the
// previous "Answer saved." and keeps the step on screen to submit again.
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
    else if (key === "c") { pick("answer", "cant_tell"); e.preventDefault(); }
    else if ("12345".indexOf(key) >= 0 && key.length === 1) { pick("confidence", key); e.preventDefault(); }
    else if (key === "enter") {
      var form = document.getElementById("answer-form");
      var button = form.querySelector("button[type=submit]");
      if (button && !button.disabled) { e.preventDefault(); form.requestSubmit(); }
    }
  });
  function alertText(xhr) {
    if (xhr.status === 401) { return "Your session has ended, so this answer was not saved. Log in again (the link below) and answer this step again."; }
    if (xhr.status === 403) { return "This page has expired, so this answer was not saved. Reload the page and answer again."; }
    var detail = "";
    try {
      var doc = new DOMParser().parseFromString(xhr.responseText || "", "text/html");
      var found = doc.querySelector("p.error");
      detail = found ? found.textContent : "";
    } catch (err) { detail = ""; }
    return "Not saved (error " + xhr.status + ")" + (detail ? ": " + detail : "") + ".";
  }
  function show(text, login) {
    var banner = document.getElementById("connection");
    if (!banner) { window.alert(text); return; }
    document.querySelectorAll("#item .message[role=status]").forEach(function (n) { n.remove(); });
    banner.textContent = text;
    if (login) {
      var link = document.createElement("a");
      link.href = "/login"; link.textContent = " Log in";
      banner.appendChild(link);
    }
    banner.hidden = false;
    banner.focus && banner.focus();
  }
  document.addEventListener("htmx:beforeRequest", function () {
    var banner = document.getElementById("connection");
    if (banner) { banner.hidden = true; banner.textContent = ""; }
  });
  document.addEventListener("htmx:responseError", function (e) {
    show(alertText(e.detail.xhr), e.detail.xhr.status === 401);
  });
  document.addEventListener("htmx:sendError", function () {
    show("The server could not be reached, so this answer was not saved. Check your connection and submit again.", false);
  });
  document.addEventListener("submit", stamp, true);
  document.addEventListener("htmx:afterSwap", start);
  document.addEventListener("DOMContentLoaded", start);
  setInterval(tick, 500);
})();
