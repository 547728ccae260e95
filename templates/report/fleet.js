// The fleet page's script (fleetscope report writes it once into assets/): sorts the lab hosts' table and the
// reference hosts' table by a clicked heading, filters both tables and the charts by the words typed (every
// word must appear in a host's row, its groups or its CPU model), and draws each chart with one line per
// shown host, coloured by the grouping chosen (a reference host's line dashed). Plain JavaScript, no network:
// Vega comes from the vega-embed bundle beside it.
(function () {
  "use strict";
  var root = document.documentElement;
  var data = JSON.parse(document.getElementById("fleet-data").textContent);
  var tables = ["hosts", "references-table"].map(function (id) { return document.getElementById(id); })
    .filter(Boolean);
  var rows = [];
  var haystacks = [];
  var filter = document.getElementById("fleet-filter");
  var colour = document.getElementById("fleet-colour");
  var counter = document.getElementById("fleet-count");
  var containers = Array.prototype.slice.call(document.querySelectorAll("div.chart[data-curve]"));
  var views = {};
  var shown = data.hosts.map(function () { return true; });

  function collectRows() {  // every host row of both tables, in the order the page shows them
    rows = [];
    tables.forEach(function (table) { rows = rows.concat(Array.prototype.slice.call(table.tBodies[0].rows)); });
    haystacks = rows.map(function (row) {
      var host = data.hosts[Number(row.dataset.index)];
      return (row.textContent + " " + host.inventory + " " + host.cpu + " " + host.microarchitecture).toLowerCase();
    });
  }

  function hosts(count) { return count + (count === 1 ? " host" : " hosts"); }

  function applyFilter() {
    var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    var count = 0;
    rows.forEach(function (row, position) {
      var match = words.every(function (word) { return haystacks[position].indexOf(word) >= 0; });
      shown[Number(row.dataset.index)] = match;
      row.hidden = !match;
      count += match ? 1 : 0;
    });
    counter.textContent = count === rows.length ? hosts(rows.length) : count + " of " + hosts(rows.length);
    draw();
  }

  function sortBy(heading) {
    var body = heading.closest("table").tBodies[0];
    var column = Array.prototype.indexOf.call(heading.parentNode.children, heading);
    var numeric = heading.classList.contains("num");
    var descending = heading.getAttribute("aria-sort") === "ascending";
    Array.prototype.forEach.call(heading.parentNode.children, function (other) { other.removeAttribute("aria-sort"); });
    heading.setAttribute("aria-sort", descending ? "descending" : "ascending");
    var keyed = Array.prototype.slice.call(body.rows).map(function (row) {
      var cell = row.cells[column];
      var raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
      return {row: row, key: numeric ? (raw === "" ? null : Number(raw)) : raw.toLowerCase()};
    });
    keyed.sort(function (a, b) {
      if (a.key === b.key) { return 0; }
      if (a.key === null) { return 1; }  // no value: last, whichever the direction
      if (b.key === null) { return -1; }
      return (a.key < b.key ? -1 : 1) * (descending ? -1 : 1);
    });
    keyed.forEach(function (item) { body.appendChild(item.row); });
    collectRows();
  }

  var pending = null;
  function draw() {
    delete root.dataset.charts;  // set again once every chart has drawn (or one failed)
    if (pending) { clearTimeout(pending); }
    pending = setTimeout(drawNow, 150);
  }

  function drawNow() {
    pending = null;
    if (typeof vegaEmbed !== "function") {
      containers.forEach(function (container) {
        container.textContent = "The charts need the Vega script beside this page (assets/), and it did not load.";
        container.classList.add("error");
      });
      root.dataset.charts = "failed";
      return;
    }
    var grouping = colour.value;
    Promise.all(containers.map(function (container) {
      var id = container.dataset.curve;
      var records = [];
      data.curves[id].forEach(function (curve) {
        var host = data.hosts[curve[0]];
        if (!shown[curve[0]]) { return; }
        for (var point = 0; point < curve[1].length; point++) {
          records.push({line: host.name, group: host[grouping], kind: host.kind, x: curve[1][point],
                        y: curve[2][point]});
        }
      });
      if (views[id]) { views[id].finalize(); delete views[id]; }
      if (!records.length) {
        container.textContent = "No host the filter shows has this curve.";
        return null;
      }
      container.textContent = "";
      var spec = JSON.parse(JSON.stringify(data.specs[id]));
      (spec.layer || [spec]).forEach(function (layer) {
        if (layer.encoding && layer.encoding.color) { layer.encoding.color.title = colour.selectedOptions[0].text; }
      });
      spec.datasets = {};
      spec.datasets[id] = records;
      return vegaEmbed(container, spec, {renderer: "svg", actions: false}).then(function (result) {
        views[id] = result.view;
      }, function (error) {
        container.textContent = "The chart could not be drawn: " + error;
        container.classList.add("error");
        throw error;
      });
    })).then(function () { root.dataset.charts = "drawn"; },
             function (error) { root.dataset.charts = "failed"; console.error(error); });
  }

  tables.forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (heading) {
      heading.classList.add("sortable");
      heading.addEventListener("click", function () { sortBy(heading); });
    });
  });
  collectRows();
  Array.prototype.forEach.call(document.querySelectorAll("button.group-filter"), function (button) {
    button.addEventListener("click", function () {
      filter.value = button.dataset.filter;
      applyFilter();
      document.getElementById("curves").scrollIntoView();
    });
  });
  filter.addEventListener("input", applyFilter);
  colour.addEventListener("change", draw);
  applyFilter();
})();
