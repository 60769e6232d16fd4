/*
 * report.js: draws the charts of `snr report` (analyzer/report.c) from the
 * JSON the analyses wrote into window.SNR, with Apache ECharts (bundled in
 * the same file). Errors go to #errors and the console; when every chart
 * is drawn, body[data-ready] is set and each chart's box is recorded in
 * body[data-charts] (the report test reads both).
 */
(function () {
  'use strict';
  var errors = [];
  function fail(msg) {
    errors.push(String(msg));
    var e = document.getElementById('errors');
    if (e) { e.textContent = errors.join('\n'); e.style.display = 'block'; }
  }
  window.addEventListener('error', function (ev) { fail(ev.message); });

  var S = window.SNR;
  var cyc = function (v) { return v === null || v === undefined ? NaN : v; };
  var COLORS = {
    'base latency': '#c7d3e3', 'transfer': '#8fb0d6',
    'base-latency stall': '#d62728', 'transfer stall': '#ff9f1c', 'slack': '#2ca02c',
    'backtail': '#7b3fc4'
  };
  var BACKTAIL = 'backtail';
  var KINDS = Object.keys(COLORS);
  var charts = [];
  function chart(id, option) {
    var el = document.getElementById(id);
    var c = echarts.init(el, null, { renderer: 'svg' });
    c.setOption(option);
    charts.push({ id: id, c: c });
  }

  /* DMA timeline: one row per DMA (worst stall at the top), its phases as
   * the paper colors them; left of each ISSUE its backtail (snr analyze deps):
   * a whisker back to the earliest cycle the DMA could have issued */
  function dmaTimeline() {
    var dmas = S.dma.dmas.slice(0, 400);
    var rows = dmas.map(function (d) { return '#' + d.id + ' ' + d.link; }).reverse();
    var n = dmas.length, data = [];
    dmas.forEach(function (d, i) {
      var y = n - 1 - i;
      var seg = function (a, b, k, extra) {
        if (b > a) data.push({ value: [y, a, b, KINDS.indexOf(k)], itemStyle: { color: COLORS[k] }, extra: extra });
      };
      if (d.issue && d.issue.cycle !== null && d.backtail_cycles)
        seg(d.issue.cycle - d.backtail_cycles, d.issue.cycle, BACKTAIL,
          { insns: d.backtail_insns, anchor: d.relaxed_anchor });
      var issue = d.issue && d.issue.cycle !== null ? d.issue.cycle + 1 : 0;
      var start = cyc(d.start_cycle), done = cyc(d.complete_cycle);
      if (isNaN(start) || isNaN(done)) return;
      seg(issue, start, 'base latency');
      seg(start, done, 'transfer');
      if (d.stall_base_cycles) seg(done - d.stall_transfer_cycles - d.stall_base_cycles, done - d.stall_transfer_cycles, 'base-latency stall');
      if (d.stall_transfer_cycles) seg(done - d.stall_transfer_cycles, done, 'transfer stall');
      if (d.slack_cycles && d.wait) seg(done, d.wait.cycle, 'slack');
    });
    var series = KINDS.map(function (k, ki) {
      return {
        type: 'custom', name: k, itemStyle: { color: COLORS[k] },
        encode: { x: [1, 2], y: 0 },
        data: data.filter(function (d) { return d.value[3] === ki; }),
        renderItem: function (params, api) {
          var a = api.coord([api.value(1), api.value(0)]), b = api.coord([api.value(2), api.value(0)]);
          var row = api.size([0, 1])[1];
          var cs = params.coordSys, box = { x: cs.x, y: cs.y, width: cs.width, height: cs.height };
          if (k === BACKTAIL) {
            /* a thin bar with a tick at its start: "could issue from here" */
            var t = Math.max(row * 0.18, 3), tick = Math.max(row * 0.6, 6);
            var bar = echarts.graphic.clipRectByRect({ x: a[0], y: a[1] - t / 2, width: Math.max(b[0] - a[0], 1), height: t }, box);
            var cap = echarts.graphic.clipRectByRect({ x: a[0], y: a[1] - tick / 2, width: 3, height: tick }, box);
            var parts = [bar, cap].filter(Boolean).map(function (r) { return { type: 'rect', shape: r, style: api.style() }; });
            return parts.length ? { type: 'group', children: parts } : null;
          }
          var h = row * (ki >= 2 ? 0.45 : 0.8);
          var r = echarts.graphic.clipRectByRect({ x: a[0], y: a[1] - h / 2, width: Math.max(b[0] - a[0], 1), height: h }, box);
          return r && { type: 'rect', shape: r, style: api.style() };
        }
      };
    });
    chart('c-dma', {
      animation: false,
      tooltip: {
        formatter: function (p) {
          var k = KINDS[p.value[3]], len = p.value[2] - p.value[1];
          if (k === BACKTAIL)
            return rows[p.value[0]] + '<br>backtail: could issue ' + len + ' cycles (' + p.data.extra.insns +
              ' instructions) earlier, from cycle ' + p.value[1] + ' (relaxed dependency: ' + p.data.extra.anchor + ')';
          return rows[p.value[0]] + '<br>' + k + ': ' + p.value[1] + ' - ' + p.value[2] + ' (' + len + ' cycles)';
        }
      },
      legend: { data: KINDS, top: 0 },
      grid: { left: 130, right: 30, top: 40, bottom: 50 },
      xAxis: { type: 'value', name: 'cycle', nameLocation: 'middle', nameGap: 28, min: 0, max: S.dma.source.cycles },
      yAxis: { type: 'category', data: rows },
      dataZoom: [{ type: 'inside', xAxisIndex: 0 }],
      series: series
    });
    /* what each series holds, for the report test */
    var counts = {};
    series.forEach(function (s) { counts[s.name] = s.data.length; });
    document.body.setAttribute('data-dma-series', JSON.stringify(counts));
  }

  /* Busy intervals per unit and DMA link (window.SNR_LANES, report.c): one
   * lane each. A view never draws more than about one rectangle per pixel
   * column and lane: intervals closer than a pixel's worth of cycles are
   * merged into one span, shaded by its busy share; zoomed in far enough,
   * each interval is its own rectangle. */
  var LANE_W = 1000; /* the plot's width in pixels (grid left/right below) */
  function lanes() {
    var L = window.SNR_LANES, n = L.units.length, dec = [];
    for (var l = 0; l < n; l++) {
      var a = L.intervals[l], k = a.length / 2, st = new Float64Array(k), en = new Float64Array(k), t = 0;
      for (var i = 0; i < k; i++) { t += a[2 * i]; st[i] = t; t += a[2 * i + 1]; en[i] = t; }
      dec.push({ s: st, e: en });
    }
    /* items [lane, start, end, busy cycles, intervals] for cycles [lo, hi) */
    function view(lo, hi) {
      var q = Math.max(1, (hi - lo) / LANE_W), out = [];
      dec.forEach(function (d, l) {
        var a = 0, b = d.s.length;
        while (a < b) { var m = (a + b) >> 1; if (d.e[m] <= lo) a = m + 1; else b = m; }
        var cur = null;
        for (var i = a; i < d.s.length && d.s[i] < hi; i++) {
          var s = Math.max(d.s[i], lo), e = Math.min(d.e[i], hi);
          if (cur && s - cur[2] < q && e - cur[1] < 2 * q) { cur[2] = e; cur[3] += e - s; cur[4]++; continue; }
          if (cur) out.push(cur);
          cur = [l, s, e, e - s, 1];
        }
        if (cur) out.push(cur);
      });
      return out;
    }
    var palette = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
    var series = {
      type: 'custom', name: 'busy', encode: { x: [1, 2], y: 0 }, data: view(0, L.cycles),
      renderItem: function (params, api) {
        var l = api.value(0), a = api.coord([api.value(1), l]), b = api.coord([api.value(2), l]);
        var h = api.size([0, 1])[1] * 0.7, share = api.value(3) / Math.max(1, api.value(2) - api.value(1));
        var cs = params.coordSys;
        var r = echarts.graphic.clipRectByRect({ x: a[0], y: a[1] - h / 2, width: Math.max(b[0] - a[0], 1), height: h },
          { x: cs.x, y: cs.y, width: cs.width, height: cs.height });
        return r && { type: 'rect', shape: r, style: { fill: palette[l % palette.length], opacity: 0.25 + 0.75 * share } };
      }
    };
    chart('c-util', {
      animation: false,
      tooltip: {
        formatter: function (p) {
          var v = p.value, len = v[2] - v[1];
          return L.units[v[0]] + '<br>' + (v[4] > 1
            ? v[4] + ' intervals merged at this zoom: cycles ' + v[1] + ' - ' + v[2] + ', busy ' + v[3] + ' of ' + len + ' (' + (100 * v[3] / len).toFixed(1) + '%)'
            : 'busy cycles ' + v[1] + ' - ' + v[2] + ' (' + len + ' cycles)');
        }
      },
      grid: { left: 100, right: 0, top: 10, bottom: 80, width: LANE_W },
      xAxis: { type: 'value', name: 'cycle', nameLocation: 'middle', nameGap: 28, min: 0, max: L.cycles },
      yAxis: { type: 'category', data: L.units, inverse: true },
      dataZoom: [{ type: 'inside', xAxisIndex: 0, filterMode: 'none' }, { type: 'slider', xAxisIndex: 0, filterMode: 'none', bottom: 10 }],
      series: [series]
    });
    var c = charts[charts.length - 1].c;
    c.on('datazoom', function () {
      var r = c.getModel().getComponent('xAxis', 0).axis.scale.getExtent();
      c.setOption({ series: [{ data: view(r[0], r[1]) }] });
    });
    /* what the first view drew, per lane, for the report test */
    var drawn = {};
    L.units.forEach(function (u) { drawn[u] = { spans: 0, busy_cycles: 0 }; });
    series.data.forEach(function (v) { var o = drawn[L.units[v[0]]]; o.spans++; o.busy_cycles += v[3]; });
    document.body.setAttribute('data-lanes', JSON.stringify(drawn));
  }

  /* VMEM occupancy (Figure 8a): occupied and unused pages on the left axis,
   * free and largest contiguous free as % of all VMEM on the right; both
   * axes span the values seen, not 0 to all of VMEM */
  function vmem() {
    var v = S.vmem, P = v.pages;
    var pages = function (k) { return v.samples.map(function (s) { return [s.cycle, s[k]]; }); };
    var pct = function (k) { return v.samples.map(function (s) { return [s.cycle, 100 * s[k] / P]; }); };
    chart('c-vmem', {
      animation: false, tooltip: { trigger: 'axis' }, legend: { top: 0 },
      grid: { left: 70, right: 80, top: 50, bottom: 50 },
      xAxis: { type: 'value', name: 'cycle', nameLocation: 'middle', nameGap: 28, min: 0, max: v.source.cycles },
      yAxis: [{ type: 'value', name: 'pages (of ' + P + ')', min: 0 },
        { type: 'value', name: '% of VMEM', scale: true, max: function (e) { return Math.min(100, Math.ceil(e.max)); } }],
      series: [
        { type: 'line', name: 'occupied pages', showSymbol: false, data: pages('occupied_pages'), areaStyle: { opacity: 0.3 } },
        { type: 'line', name: 'unused pages (written, never read)', showSymbol: false, data: pages('unused_pages') },
        { type: 'line', name: 'free %', yAxisIndex: 1, showSymbol: false, data: pct('free_pages'), lineStyle: { width: 2 } },
        { type: 'line', name: 'largest contiguous free %', yAxisIndex: 1, showSymbol: false, data: pct('largest_free_pages') }
      ]
    });
  }

  /* rows x time heatmap (Figure 8b) over the pages the window touched (rows
   * of equal numbers of touched pages, labelled by address): the share of a
   * row's pages occupied per sample, at most 300 columns (each the maximum
   * of the samples it covers) */
  function heatmap() {
    var v = S.vmem, rows = v.heatmap, R = v.heat_rows, ns = rows.length, cols = Math.min(ns, 300), data = [], xs = [];
    var hex = function (p) { return '0x' + (S.vmem_base + p * v.page_bytes).toString(16); };
    var ylab = R.map(function (r) { return hex(r.first_page); });
    for (var c = 0; c < cols; c++) {
      var s0 = Math.floor(c * ns / cols), s1 = Math.max(s0 + 1, Math.floor((c + 1) * ns / cols));
      xs.push(v.samples[s0].cycle);
      for (var b = 0; b < R.length; b++) {
        var m = 0;
        for (var s = s0; s < s1; s++) m = Math.max(m, rows[s][b]);
        data.push([c, b, Math.round(1000 * m / R[b].pages) / 10, m]);
      }
    }
    var touched = R.reduce(function (a, r) { return a + r.pages; }, 0);
    document.getElementById('heat-what').textContent = !R.length ? 'the window touched no VMEM' : touched + ' pages of ' + v.page_bytes + ' B touched, in ' + R.length +
      ' rows of ' + R[0].pages + ' pages; the colour is the share of a row\'s pages occupied (the tooltip gives the count)';
    chart('c-heat', {
      animation: false,
      tooltip: {
        formatter: function (p) {
          var r = R[p.value[1]];
          return 'cycle ' + xs[p.value[0]] + ', pages ' + hex(r.first_page) + ' - ' + hex(r.last_page + 1) +
            ' (' + r.pages + ' touched): ' + p.value[3] + ' occupied';
        }
      },
      grid: { left: 100, right: 140, top: 20, bottom: 50 },
      xAxis: { type: 'category', data: xs, name: 'cycle', nameLocation: 'middle', nameGap: 28 },
      yAxis: { type: 'category', data: ylab, inverse: true, axisLabel: { interval: Math.max(0, Math.ceil(R.length / 24) - 1) } },
      visualMap: {
        min: 0, max: 100, calculable: false, orient: 'vertical', right: 10, top: 'center', itemHeight: 280, dimension: 2,
        text: ['all occupied', 'none'],
        inRange: { color: ['#f7fbff', '#6baed6', '#08306b'] }
      },
      series: [{ type: 'heatmap', data: data, progressive: 0, progressiveThreshold: 1e9 }]
    });
  }

  function suggestions() {
    var el = document.getElementById('suggest'), s = S.suggest || {};
    var esc = function (t) { return String(t).replace(/[&<>]/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;' }[c]; }); };
    var hex = function (v) { return '0x' + Number(v).toString(16); };
    var at = function (p) { return esc((p.symbol || hex(p.pc)) + ' (pc ' + hex(p.pc) + ')'); };
    if (s.error) { el.innerHTML = '<p>' + esc(s.error) + '</p>'; return; }
    var moves = (s.moves || []), rows = (s.stalled_dmas || []), html = '';
    if (s.verify_error) html += '<p>what-if not run: ' + esc(s.verify_error) + '</p>';
    var c = s.combined;
    if (c && c.moves)
      html += '<p><b>what-if: ' + esc(c.cycles_before) + ' \u2192 ' + esc(c.cycles_after) + ' cycles with the ' +
        esc(c.moves) + ' confirmed move(s) together (saves ' + esc(c.realized_cycles) + ')</b></p>';
    else if (c)
      html += '<p>what-if: no move is confirmed (none realizes half its estimate)</p>';
    html += '<table><tr><th>move (static: every instance of the DMA moved to the same place)</th><th>instances</th>' +
      '<th>estimate (upper bound)</th><th>realized (what-if)</th><th>status</th></tr>';
    moves.forEach(function (m) {
      var status = m.confirmed === null ? 'not verified' : m.confirmed ? 'confirmed' : 'unconfirmed: ' + m.reason;
      html += '<tr><td>move the DMA at ' + at(m.dma) + ' up to before ' + at(m.before) + '</td><td>' + esc(m.instances) +
        '</td><td>' + esc(m.estimate_cycles) + '</td><td>' + (m.realized_cycles === null ? '-' : esc(m.realized_cycles)) +
        '</td><td>' + esc(status) + '</td></tr>';
    });
    var none = rows.filter(function (r) { return !r.suggested; });
    none.forEach(function (r) {
      var d = r.dma || {};
      html += '<tr><td>DMA #' + esc(d.id) + ' ' + esc(d.symbol || hex(d.pc || 0)) + ' (stall ' + esc(d.stall_cycles) +
        '): no move</td><td>1</td><td>-</td><td>-</td><td>' + esc(r.reason) + '</td></tr>';
    });
    html += '</table>';
    el.innerHTML = html + (rows.length ? '' : '<p>no DMA stalled</p>');
  }

  try {
    dmaTimeline();
    lanes();
    vmem();
    heatmap();
    suggestions();
  } catch (e) {
    fail(e && e.stack ? e.stack : e);
  }
  var boxes = charts.map(function (c) {
    var r = document.getElementById(c.id).getBoundingClientRect();
    return { id: c.id, x: Math.round(r.left + window.scrollX), y: Math.round(r.top + window.scrollY), w: Math.round(r.width), h: Math.round(r.height) };
  });
  document.body.setAttribute('data-charts', JSON.stringify(boxes));
  if (!errors.length) document.body.setAttribute('data-ready', '1');
})();
