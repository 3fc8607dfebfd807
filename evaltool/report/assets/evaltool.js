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

  function start() {
    document.querySelectorAll("[data-figure]").forEach(draw);
    document.querySelectorAll("table.sortable").forEach(sortable);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
}());
