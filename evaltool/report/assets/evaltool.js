/* evaltool pages: draw the plotly figure each [data-figure] element carries, sort tables.
   Data never becomes script: figures are JSON in an attribute, read with JSON.parse. */
(function () {
  "use strict";

  function follow(element) {
    element.on("plotly_click", function (event) {
      var point = event.points && event.points[0];
      var target = point && point.customdata;
      if (Array.isArray(target)) { target = target[0]; }
      // only a path on this server: never another origin, never a javascript: URL
      if (typeof target === "string" && /^\/(?!\/)/.test(target)) { window.location.assign(target); }
    });
  }

  function draw(element) {
    var figure = JSON.parse(element.getAttribute("data-figure"));
    var config = {displaylogo: false, responsive: true, modeBarButtonsToRemove: ["sendDataToCloud"]};
    Plotly.newPlot(element, figure.data, figure.layout, config).then(function () {
      element.setAttribute("data-drawn", "true");
    });
    if (element.hasAttribute("data-follow")) { follow(element); }
  }

  function sortKey(cell) {
    var value = cell.getAttribute("data-value");
    if (value === null) { return {number: false, text: cell.textContent}; }
    if (value === "") { return {number: true, value: -Infinity}; }
    return {number: true, value: parseFloat(value)};
  }

  function compareKeys(a, b) {
    if (a.number && b.number) { return a.value - b.value; }
    var x = a.number ? String(a.value) : a.text, y = b.number ? String(b.value) : b.text;
    return x < y ? -1 : (x > y ? 1 : 0);
  }

  function sortable(table) {
    var headers = table.querySelectorAll("thead th");
    headers.forEach(function (header, column) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (header.firstChild) { button.appendChild(header.firstChild); }
      header.appendChild(button);
      button.addEventListener("click", function () {
        var body = table.tBodies[0];
        var ascending = header.getAttribute("aria-sort") !== "ascending";
        headers.forEach(function (other) { other.removeAttribute("aria-sort"); });
        header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (r, s) {
          var order = compareKeys(sortKey(r.cells[column]), sortKey(s.cells[column]));
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  }

  // a run's page: its numbers follow the job's JSON until it ends (the page itself shows the stored state,
  // so a reload shows the same job where it is)
  var OPEN_STATES = ["queued", "running", "cancelling"];

  function poll(element) {
    var address = element.getAttribute("data-poll");
    var texts = JSON.parse(element.getAttribute("data-texts"));
    var lang = element.getAttribute("data-lang");
    function show(selector, text) { element.querySelector(selector).textContent = text; }
    function update(job) {
      show(".done", job.done);
      show(".total", job.total);
      show(".failures", job.failures);
      show(".elapsed", job.elapsed === null ? "" : job.elapsed.toFixed(1));
      var bar = element.querySelector("progress");
      bar.max = Math.max(job.total, 1);
      bar.value = job.done;
      var state = element.querySelector(".state");
      state.textContent = texts["state-" + job.state] || job.state;
      state.className = "state state-" + job.state;
      state.setAttribute("data-state", job.state);
      var error = element.querySelector(".job-error");
      error.textContent = job.error || "";
      error.className = job.error ? "job-error warning" : "job-error";
      if (job.execution_id) {
        var holder = element.querySelector(".job-execution");
        var anchor = document.createElement("a");
        anchor.href = "/executions/" + Number(job.execution_id) + (lang === "es" ? "?lang=es" : "");
        anchor.textContent = element.getAttribute("data-execution-text");
        holder.textContent = "";
        holder.appendChild(anchor);
      }
      return OPEN_STATES.indexOf(job.state) >= 0;
    }
    function tick() {
      fetch(address, {credentials: "same-origin", headers: {"Accept": "application/json"}})
        .then(function (answer) { return answer.ok ? answer.json() : null; })
        .then(function (job) { if (!job || update(job)) { window.setTimeout(tick, 1000); } })
        .catch(function () { window.setTimeout(tick, 2000); });
    }
    tick();
  }

  // a queries file sent as the request's body, with the session's CSRF token; errors shown as text
  function upload(form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var input = form.querySelector("input[type=file]");
      var out = form.querySelector(".upload-result");
      if (!input.files.length) { return; }
      var file = input.files[0];
      fetch(form.getAttribute("data-upload") + "?filename=" + encodeURIComponent(file.name), {
        method: "POST", credentials: "same-origin", body: file,
        headers: {"X-CSRF-Token": form.getAttribute("data-csrf"), "Content-Type": "application/octet-stream"}
      }).then(function (answer) {
        return answer.json().then(function (body) { return {ok: answer.ok, body: body}; });
      }).then(function (result) {
        if (result.ok) {
          out.textContent = form.getAttribute("data-done").replace("{version}", result.body.version)
            .replace("{count}", result.body.queries.length);
          window.setTimeout(function () { window.location.reload(); }, 600);
        } else {
          out.textContent = result.body.error;
        }
      }).catch(function (failure) { out.textContent = String(failure); });
    });
  }

  function start() {
    document.querySelectorAll("[data-figure]").forEach(draw);
    document.querySelectorAll("table.sortable").forEach(sortable);
    document.querySelectorAll("[data-poll]").forEach(poll);
    document.querySelectorAll("form[data-upload]").forEach(upload);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
}());
