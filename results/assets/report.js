// tasksim report charts (report.html and compare.html): draws every chart of
// TASKSIM_REPORT.charts with uPlot into the <figure> of the same id, then marks it
// data-rendered="true" (a chart that fails is marked "error" and counted in
// body[data-errors], as window.onerror counts uncaught errors).
(function () {
  "use strict";
  // 480 px: two charts across the page on a wide screen, one on A4 portrait with 14 mm
  // margins at 96 dpi; narrower when the window is.
  var W = 480, H = 220;
  var COLORS = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#6e7781", "#bf3989"];

  function countError(el, err) {
    var b = document.body;
    b.setAttribute("data-errors", String(Number(b.getAttribute("data-errors") || 0) + 1));
    if (el) {
      el.setAttribute("data-rendered", "error");
      el.setAttribute("data-error", String(err && err.message || err));
    }
  }

  // pctLabel labels x = 1/(1-p) as the percentile p: 1 -> 0%, 2 -> 50%, 1000 -> 99.9%.
  function pctLabel(x) {
    if (x == null) return "";
    return String(+(100 - 100 / x).toFixed(6)) + "%";
  }

  function pctSplits(u, axis, min, max) {
    var out = [];
    for (var d = 1; d <= max * 1.0001; d *= 10) {
      if (d >= min * 0.9999) out.push(d);
      if (d === 1 && 2 >= min && 2 <= max) out.push(2);
    }
    return out;
  }

  function markersHook(markers, el) {
    return function (u) {
      if (!markers || !markers.length) return;
      var ctx = u.ctx, top = u.bbox.top, bottom = u.bbox.top + u.bbox.height, last = {}, n = 0;
      // faults: dashed red; a rollback's switch: solid blue
      var styles = [[false, "rgba(207, 34, 46, 0.55)", [4, 3]], [true, "rgba(9, 105, 218, 0.9)", []]];
      for (var s = 0; s < styles.length; s++) {
        ctx.save();
        ctx.strokeStyle = styles[s][1];
        ctx.lineWidth = styles[s][0] ? 2 : 1;
        ctx.setLineDash(styles[s][2]);
        ctx.beginPath();
        for (var i = 0; i < markers.length; i++) {
          if ((markers[i].kind === "rollback.switch") !== styles[s][0]) continue;
          var x = Math.round(u.valToPos(markers[i].t, "x", true));
          if (last[x]) continue;
          last[x] = true;
          n++;
          ctx.moveTo(x + 0.5, top);
          ctx.lineTo(x + 0.5, bottom);
        }
        ctx.stroke();
        ctx.restore();
      }
      el.setAttribute("data-markers", String(n)); // lines drawn
    };
  }

  // chartWidth is W, or the width of the chart's column when the window is narrower.
  function chartWidth(el) {
    return Math.max(240, Math.min(W, (el.parentNode && el.parentNode.clientWidth) || W));
  }

  function fromZero(u, min, max) {
    return uPlot.rangeNum(0, max > 0 ? max : 1, 0.1, true);
  }

  function options(c, el) {
    var series = [{
      label: c.kind === "percentile" ? "percentile" : "t (s)",
      value: c.kind === "percentile" ? function (u, v) { return pctLabel(v); } : function (u, v) { return v == null ? "" : v.toFixed(3); }
    }];
    for (var i = 0; i < c.series.length; i++) {
      var points = c.series[i] === "faults/s";
      series.push({
        label: c.series[i],
        scale: c.scales ? c.scales[i] : "y",
        stroke: COLORS[i % COLORS.length],
        width: 1.5,
        spanGaps: false,
        points: { show: points ? true : undefined },
        paths: points ? function () { return null; } : undefined
      });
    }
    var o = {
      width: chartWidth(el), height: H, series: series,
      legend: { live: false },
      cursor: { drag: { x: false, y: false } },
      hooks: {
        draw: [function () { el.setAttribute("data-rendered", "true"); }]
      }
    };
    var y = { scale: "y", label: c.unit };
    if (c.kind === "percentile") {
      o.scales = { x: { time: false, distr: 3, log: 10 } };
      o.axes = [
        {
          label: "percentile", splits: pctSplits,
          filter: function (u, splits) { return splits; }, // label every split (50% too)
          values: function (u, vals) { return vals.map(pctLabel); }
        },
        y
      ];
    } else {
      // from the run's start, so faults before the first window's end are marked too
      // levels, rates and latencies from 0, so that a swing is drawn to scale
      o.scales = {
        x: { time: false, range: function (u, min, max) { return [0, Math.max(max, 1)]; } },
        y: { range: fromZero },
        y2: { range: fromZero }
      };
      o.axes = [{ label: "seconds since start" }, y];
      if (c.unit2) {
        o.axes.push({ scale: "y2", side: 1, label: c.unit2, grid: { show: false } });
      }
      o.hooks.draw.unshift(markersHook(c.markers, el));
    }
    return o;
  }

  // columns is the chart's data as uPlot takes it. A chart of two runs (compare.html)
  // gives each series its own x values (xs): uPlot.join aligns them, leaving a series
  // undefined (spanned) where only the other run has a point and null (a gap) where its
  // own run recorded none.
  function columns(c) {
    if (!c.xs) return [c.x].concat(c.y);
    return uPlot.join(c.xs.map(function (x, i) { return [x, c.y[i]]; }));
  }

  var data = (typeof TASKSIM_REPORT === "object" && TASKSIM_REPORT) || { charts: [] };
  var plots = [];
  for (var i = 0; i < data.charts.length; i++) {
    var c = data.charts[i], el = document.getElementById(c.id);
    if (!el) { countError(null, "no element for chart " + c.id); continue; }
    try {
      plots.push({ u: new uPlot(options(c, el), columns(c), el), el: el });
    } catch (err) {
      countError(el, err);
    }
  }

  // A window made narrower (or wider again) redraws the charts to fit, once per frame.
  var pending = false;
  window.addEventListener("resize", function () {
    if (pending) return;
    pending = true;
    window.requestAnimationFrame(function () {
      pending = false;
      for (var i = 0; i < plots.length; i++) {
        var w = chartWidth(plots[i].el);
        if (w !== plots[i].u.width) plots[i].u.setSize({ width: w, height: H });
      }
    });
  });
})();
