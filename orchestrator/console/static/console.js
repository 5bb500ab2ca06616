// Optional enhancements; every page reads and works without them.
(function () {
  "use strict";

  // A run page refreshes its "Now" section while the run moves, and says when to reload.
  function poll(section) {
    var url = section.getAttribute("data-live");
    var version = section.getAttribute("data-version");
    var interval = parseInt(section.getAttribute("data-interval"), 10) || 3000;
    function tick() {
      fetch(url, { credentials: "same-origin", headers: { "Accept": "text/html" } })
        .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
        .then(function (html) {
          var holder = document.createElement("div");
          holder.innerHTML = html;
          var facts = holder.querySelector("dl");
          var current = section.querySelector("dl");
          if (facts && current) { current.replaceWith(facts); }
          var seen = facts ? facts.getAttribute("data-run-version") : version;
          section.querySelector(".changed").hidden = seen === version;
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

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-live]").forEach(poll);
    document.querySelectorAll("form[data-once]").forEach(once);
    document.querySelectorAll("form[data-upload]").forEach(upload);
  });
})();
