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

  // a rater's page of a judging task: a key per grade saves the current document's grade at once
  // (the JSON address in data-judging, with the session's CSRF token) and moves on; j / k or the
  // arrows move, s skips; once the page's documents are all graded, the next query with some left
  function judging(list) {
    var texts = JSON.parse(list.getAttribute("data-texts"));
    var status = document.querySelector(".judging-status");
    var docs = Array.prototype.slice.call(list.querySelectorAll("article.doc"));
    var current = docs.findIndex(function (d) { return d.classList.contains("current"); });
    function focus(index) {
      if (index < 0 || index >= docs.length) { return; }
      docs.forEach(function (d) { d.classList.remove("current"); });
      current = index;
      docs[index].classList.add("current");
      docs[index].focus({preventScroll: true});
      docs[index].scrollIntoView({block: "nearest"});
    }
    function onward() {
      for (var i = current + 1; i < docs.length; i++) {
        if (docs[i].getAttribute("data-grade") === "") { focus(i); return; }
      }
      var left = docs.findIndex(function (d) { return d.getAttribute("data-grade") === ""; });
      if (left >= 0) { focus(left); return; }
      var next = list.getAttribute("data-next");
      if (next) { window.location.assign(next); } else { status.textContent = texts.all_done; }
    }
    function grade(button) {
      var doc = docs[current];
      var form = button.form;
      var body = new URLSearchParams();
      ["query_id", "doc_id"].forEach(function (name) { body.append(name, form.elements[name].value); });
      body.append("grade", button.value);
      return fetch(list.getAttribute("data-judging"), {
        method: "POST", credentials: "same-origin", body: body,
        headers: {"X-CSRF-Token": list.getAttribute("data-csrf"), "Accept": "application/json",
                  "Content-Type": "application/x-www-form-urlencoded; charset=UTF-8"}
      }).then(function (answer) {
        return answer.json().then(function (result) { return {ok: answer.ok, result: result}; });
      }).then(function (saved) {
        if (!saved.ok) { status.textContent = texts.saved_error.replace("{error}", saved.result.error); return; }
        doc.setAttribute("data-grade", String(saved.result.grade));
        doc.querySelector(".mine").textContent = texts.your_grade.replace("{label}", texts.labels[saved.result.grade]);
        form.querySelectorAll("button").forEach(function (b) {
          b.setAttribute("aria-pressed", b === button ? "true" : "false");
        });
        document.querySelector(".mine-count").textContent = String(saved.result.mine);
        status.textContent = "";
        onward();
      }).catch(function (failure) { status.textContent = texts.saved_error.replace("{error}", String(failure)); });
    }
    list.addEventListener("submit", function (event) {
      // a click on a grade button: the same as its key, without leaving the page
      event.preventDefault();
      var button = event.submitter;
      var index = docs.indexOf(button.closest("article.doc"));
      if (index >= 0) { focus(index); grade(button); }
    });
    document.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey || current < 0) { return; }
      if (/^(input|textarea|select)$/i.test(event.target.tagName)) { return; }
      var key = event.key;
      var button = docs[current].querySelector("button[data-key='" + key + "']");
      if (button) { event.preventDefault(); grade(button); } else if (key === "j" || key === "ArrowDown") {
        event.preventDefault(); focus(Math.min(current + 1, docs.length - 1));
      } else if (key === "k" || key === "ArrowUp") {
        event.preventDefault(); focus(Math.max(current - 1, 0));
      } else if (key === "s") {
        event.preventDefault();
        if (current + 1 < docs.length) { focus(current + 1); } else if (list.getAttribute("data-next")) {
          window.location.assign(list.getAttribute("data-next"));
        }
      }
    });
    if (current < 0 && docs.length) { current = 0; }
    if (docs.length) { focus(current); }
    if (!docs.some(function (d) { return d.getAttribute("data-grade") === ""; })) { status.textContent = texts.all_done; }
  }

  function start() {
    document.querySelectorAll("[data-figure]").forEach(draw);
    document.querySelectorAll("table.sortable").forEach(sortable);
    document.querySelectorAll("[data-poll]").forEach(poll);
    document.querySelectorAll("form[data-upload]").forEach(upload);
    document.querySelectorAll("[data-judging]").forEach(judging);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
}());
