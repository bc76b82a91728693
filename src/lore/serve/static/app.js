/* lore serve: the little JavaScript the pages use. Everything works without it. */
(function () {
  "use strict";

  // Live search that respects input methods (Chinese, Japanese, Korean): nothing is
  // searched while a composition is open, and a pause in typing searches once.
  // The pause can be shortened by a page's owner (the browser tests do) before this runs.
  var PAUSE_MS = window.loreSearchPauseMs || 400;

  function liveSearch(input) {
    var form = input.form;
    var composing = false;
    var timer = null;
    var last = input.value;

    function schedule() {
      window.clearTimeout(timer);
      timer = window.setTimeout(function () {
        if (composing || input.value === last) { return; }
        last = input.value;
        if (window.htmx) { window.htmx.trigger(form, "lore:search"); }
      }, PAUSE_MS);
    }

    input.addEventListener("compositionstart", function () {
      composing = true;
      window.clearTimeout(timer);
    });
    input.addEventListener("compositionend", function () {
      composing = false;
      schedule();
    });
    input.addEventListener("input", function (event) {
      if (composing || event.isComposing) { return; }
      schedule();
    });
    input.addEventListener("keydown", function (event) {
      // Enter that picks an IME candidate must not submit the half-typed query.
      if (event.key === "Enter" && (composing || event.isComposing)) { event.preventDefault(); }
    });
    form.addEventListener("submit", function () {
      window.clearTimeout(timer);
      last = input.value;
    });
  }

  // The interest map: the point under the pointer (or keyboard focus) is named beside it.
  function mapInfo(svg) {
    var info = document.getElementById("point-info");
    if (!info) { return; }
    function show(event) {
      var point = event.target.closest ? event.target.closest("a.point") : null;
      if (!point) { return; }
      info.textContent = "";
      var title = document.createElement("strong");
      title.textContent = point.getAttribute("data-title");
      var path = document.createElement("div");
      path.textContent = point.getAttribute("data-path");
      var date = document.createElement("div");
      date.textContent = point.getAttribute("data-date");
      info.appendChild(title);
      info.appendChild(path);
      info.appendChild(date);
      var cluster = point.getAttribute("data-cluster");
      document.querySelectorAll("tr[data-cluster]").forEach(function (row) {
        row.classList.toggle("active", row.getAttribute("data-cluster") === cluster);
      });
    }
    svg.addEventListener("mouseover", show);
    svg.addEventListener("focusin", show);
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("input[data-live-search]").forEach(liveSearch);
    var svg = document.getElementById("map");
    if (svg) { mapInfo(svg); }
  });
})();
