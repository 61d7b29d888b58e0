// The HTML report's timeline: draws the spec of src/shared/timeline-spec.ts (the app's own timeline) with the
// uPlot inlined beside it. Inlined as text; every string reaches the page through textContent, never as markup.
(function () {
  var node = document.getElementById('servebench-timeline');
  var host = document.getElementById('timeline-panels');
  if (!node || !host || typeof uPlot !== 'function') return;
  var spec = JSON.parse(node.textContent || '{}');
  var css = getComputedStyle(document.documentElement);
  var cssVar = function (name, fallback) {
    return css.getPropertyValue(name).trim() || fallback;
  };
  var px = function (n) {
    return n * uPlot.pxRatio;
  };
  var fmt = function (v) {
    if (v === null || v === undefined || !isFinite(v)) return '–';
    var a = Math.abs(v);
    return a >= 100 ? Math.round(v).toLocaleString('en-US') : a >= 10 ? v.toFixed(1) : v.toFixed(2);
  };
  var plots = [];
  var match = [
    function (a, b) {
      return a === b;
    },
    // The horizontal cursor line only on the chart under the mouse.
    function () {
      return false;
    },
  ];

  function drawBands(panel) {
    return function (u) {
      var ctx = u.ctx;
      var b = u.bbox;
      ctx.save();
      ctx.beginPath();
      ctx.rect(b.left, b.top, b.width, b.height);
      ctx.clip();
      ctx.font = Math.round(px(10)) + 'px system-ui, sans-serif';
      ctx.textBaseline = 'top';
      panel.bands.forEach(function (band) {
        var x0 = u.valToPos(band.from, 'x', true);
        var x1 = u.valToPos(band.to, 'x', true);
        ctx.fillStyle = band.fill;
        ctx.fillRect(x0, b.top, Math.max(1, x1 - x0), b.height);
        if (panel.bandLabels && band.kind === 'window') {
          ctx.fillStyle = cssVar('--muted', '#5b6470');
          var from = Math.max(x0, b.left);
          if (ctx.measureText(band.label).width + px(4) <= x1 - from)
            ctx.fillText(band.label, from + px(3), b.top + px(2));
        }
      });
      ctx.strokeStyle = cssVar('--muted', '#5b6470');
      ctx.fillStyle = cssVar('--fg', '#1b1f24');
      ctx.setLineDash([px(6), px(4)]);
      ctx.textAlign = 'right';
      panel.refLines.forEach(function (line) {
        var y = u.valToPos(line.y, 'y', true);
        ctx.beginPath();
        ctx.moveTo(b.left, y);
        ctx.lineTo(b.left + b.width, y);
        ctx.stroke();
        // Above the line where there is room, else below it (a ceiling near the top).
        var above = y - px(14) >= b.top;
        ctx.textBaseline = above ? 'bottom' : 'top';
        ctx.fillText(line.label, b.left + b.width - px(4), above ? y - px(2) : y + px(2));
      });
      ctx.restore();
    };
  }

  function yRange(panel) {
    return function (_u, lo, hi) {
      if (lo === null || hi === null || !isFinite(lo) || !isFinite(hi)) return [0, 1];
      var ys = panel.refLines.map(function (l) {
        return l.y;
      });
      var min = Math.min.apply(null, [lo].concat(ys));
      var max = Math.max.apply(null, [hi].concat(ys));
      if (panel.yZero) return [Math.min(0, min), max > 0 ? max * 1.1 : 1];
      var pad = Math.max((max - min) * 0.15, Math.abs(max) * 0.02, 1);
      return [min - pad, max + pad];
    };
  }

  function series(s) {
    var base = {
      label: s.label,
      stroke: s.color,
      value: function (_u, v) {
        return v === null ? '–' : fmt(v) + ' ' + s.unit;
      },
    };
    if (!s.points) return Object.assign(base, { width: 1.5, spanGaps: true, points: { show: false } });
    return Object.assign(base, {
      paths: function () {
        return null;
      },
      points: { show: true, size: 4, stroke: s.color, fill: s.color + '99', width: 1 },
    });
  }

  function options(panel, i, width) {
    var axis = {
      stroke: cssVar('--muted', '#5b6470'),
      grid: { stroke: cssVar('--line', '#d5dae1'), width: 0.6 },
      ticks: { stroke: cssVar('--line', '#d5dae1'), width: 0.6, size: 6 },
      font: '11px system-ui, sans-serif',
      labelFont: '11px system-ui, sans-serif',
    };
    var last = i === spec.panels.length - 1;
    return {
      width: width,
      height: panel.tall ? 170 : 100,
      padding: [8, 12, 0, 4],
      cursor: { sync: { key: 'servebench-timeline', scales: ['x', 'y'], match: match }, drag: { x: false, y: false } },
      legend: { show: true, live: true },
      hooks: { drawClear: [drawBands(panel)] },
      scales: {
        x: { time: false, range: spec.range ? [spec.range[0], spec.range[1]] : undefined },
        y: { range: yRange(panel) },
      },
      axes: [
        { ...axis, label: last ? spec.xLabel : '', labelSize: last ? 16 : 0, labelGap: 0, size: 24 },
        { ...axis, size: 52, space: panel.tall ? 30 : 18 },
      ],
      series: [{ label: 'seconds', value: (_u, v) => fmt(v) + ' s' }].concat(panel.series.map(series)),
    };
  }

  spec.panels.forEach(function (panel, i) {
    var figure = document.createElement('div');
    figure.className = 'panel';
    figure.setAttribute('data-panel', panel.id);
    var title = document.createElement('div');
    title.className = 'panel-title';
    title.textContent = panel.title;
    figure.appendChild(title);
    var plot = document.createElement('div');
    figure.appendChild(plot);
    host.appendChild(figure);
    if (panel.x.length === 0) {
      var empty = document.createElement('p');
      empty.className = 'empty';
      empty.textContent = panel.empty;
      figure.appendChild(empty);
      return;
    }
    plots.push(new uPlot(options(panel, i, Math.max(300, host.clientWidth)), [panel.x].concat(panel.ys), plot));
  });

  // Printing lays the page out at the paper's width: the canvases follow it.
  var resize = function () {
    plots.forEach(function (u) {
      u.setSize({ width: Math.max(300, host.clientWidth), height: u.height });
    });
  };
  if (typeof matchMedia === 'function') matchMedia('print').addEventListener('change', resize);
  window.addEventListener('beforeprint', resize);
})();
