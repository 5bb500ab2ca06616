// Optional enhancements; every page reads and works without them.
(function () {
  "use strict";

  var PARTS = ["live-now", "live-steps", "live-artifacts", "live-documents"];

  // A run page redraws its moving parts in place while the run moves: the server answers
  // 204 while nothing changed. The forms are redrawn only when the actions offered change,
  // so nothing a person is typing is lost.
  function poll(holder) {
    var url = holder.getAttribute("data-live");
    var token = holder.getAttribute("data-token");
    var interval = parseInt(holder.getAttribute("data-interval"), 10) || 3000;
    function swap(fresh, id) {
      var next = fresh.querySelector("#" + id);
      var current = document.getElementById(id);
      if (next && current) { current.replaceWith(next); }
    }
    function apply(html) {
      var fresh = document.createElement("div");
      fresh.innerHTML = html;
      var marker = fresh.querySelector("[data-live-token]");
      if (marker) { token = marker.getAttribute("data-live-token"); }
      PARTS.forEach(function (id) { swap(fresh, id); });
      var acts = fresh.querySelector("#live-act");
      var shown = document.getElementById("live-act");
      if (acts && shown && acts.getAttribute("data-actions") !== shown.getAttribute("data-actions")) {
        shown.replaceWith(acts);
        enhance(acts);
      }
    }
    function tick() {
      fetch(url + "?since=" + encodeURIComponent(token),
            { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (r) {
          if (r.status === 204) { return null; }
          return r.ok ? r.text() : Promise.reject(r.status);
        })
        .then(function (html) {
          if (html) { apply(html); }
          var facts = document.querySelector("#live-now dl");
          if (!facts || facts.getAttribute("data-terminal") !== "yes") {
            window.setTimeout(tick, interval);
          }
        })
        .catch(function () { window.setTimeout(tick, interval * 3); });
    }
    window.setTimeout(tick, interval);
  }

  // A decision form goes once: its button is disabled after the first submit (the server
  // makes a second post a no-op anyway).
  function once(form) {
    form.addEventListener("submit", function () {
      var button = form.querySelector("button[type=submit]");
      window.setTimeout(function () { if (button) { button.disabled = true; } }, 0);
    });
  }

  // Several files uploaded with a progress bar.
  function upload(form) {
    var bar = form.querySelector("progress");
    form.addEventListener("submit", function (event) {
      if (!window.XMLHttpRequest || !bar) { return; }
      event.preventDefault();
      var request = new XMLHttpRequest();
      request.open("POST", form.action);
      bar.hidden = false;
      request.upload.addEventListener("progress", function (e) {
        if (e.lengthComputable) { bar.value = Math.round(100 * e.loaded / e.total); }
      });
      request.addEventListener("load", function () {
        document.open(); document.write(request.responseText); document.close();
      });
      request.send(new FormData(form));
    });
  }

  // A search box narrows a long list of choices as one types (the server does the same
  // when the search form is sent).
  function filter(input) {
    var list = document.getElementById(input.getAttribute("data-filter"));
    if (!list) { return; }
    input.addEventListener("input", function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
      list.querySelectorAll("li[data-words]").forEach(function (item) {
        var text = item.getAttribute("data-words");
        var checked = item.querySelector("input[name=frameworks]:checked");
        item.hidden = !checked && !words.every(function (w) { return text.indexOf(w) >= 0; });
      });
    });
  }

  // One box ticks every row shown on the page (for an amendment of those rows).
  function tickAll(box) {
    var section = document.getElementById(box.getAttribute("data-tick-all"));
    box.addEventListener("change", function () {
      if (!section) { return; }
      section.querySelectorAll("input[name=rows]").forEach(function (row) {
        row.checked = box.checked;
      });
    });
  }

  // A running step's "running for" counts on between two redraws: the server answers 204
  // while nothing changed, and the time it printed is where the count starts.
  function span(seconds) {
    if (seconds < 120) { return seconds.toFixed(1) + " s"; }
    if (seconds < 7200) { return Math.round(seconds / 60) + " min"; }
    return (seconds / 3600).toFixed(1) + " h";
  }
  function tick() {
    var now = Date.now();
    document.querySelectorAll("time[data-running-s]").forEach(function (time) {
      if (!time.hasAttribute("data-seen")) { time.setAttribute("data-seen", String(now)); }
      var base = parseFloat(time.getAttribute("data-running-s"));
      var seen = parseFloat(time.getAttribute("data-seen"));
      time.textContent = span(base + (now - seen) / 1000);
    });
  }

  function enhance(root) {
    root.querySelectorAll("form[data-once]").forEach(once);
    root.querySelectorAll("form[data-upload]").forEach(upload);
    root.querySelectorAll("input[data-filter]").forEach(filter);
    root.querySelectorAll("input[data-tick-all]").forEach(tickAll);
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-live]").forEach(poll);
    enhance(document);
    window.setInterval(tick, 1000);
  });
})();
