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
    var c = echarts.init(el, null, { renderer: 'canvas' });
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

  /* per-unit utilization per window, DMA completions marked */
  function utilization() {
    var u = S.util, x = u.windows.map(function (w) { return w.start_cycle; });
    var done = S.dma.dmas.filter(function (d) { return d.complete_cycle !== null; }).slice(0, 300)
      .map(function (d) { return { xAxis: d.complete_cycle, name: '#' + d.id }; });
    var series = u.units.map(function (name, c) {
      return {
        type: 'line', name: name, step: 'end', showSymbol: false,
        data: u.windows.map(function (w, i) { return [x[i], 100 * w.busy[c]]; })
      };
    });
    series[0].markLine = { symbol: 'none', silent: true, label: { show: false }, lineStyle: { color: '#999', type: 'dashed', width: 1 }, data: done };
    chart('c-util', {
      animation: false, tooltip: { trigger: 'axis' }, legend: { top: 0, type: 'scroll' },
      grid: { left: 60, right: 30, top: 40, bottom: 50 },
      xAxis: { type: 'value', name: 'cycle (dashed: DMA completions)', nameLocation: 'middle', nameGap: 28, min: 0, max: S.util.source.cycles },
      yAxis: { type: 'value', name: 'busy %', min: 0, max: 100 },
      series: series
    });
  }

  /* VMEM occupancy against the largest contiguous free region (Figure 8a) */
  function vmem() {
    var v = S.vmem, P = v.pages;
    var pct = function (k) { return v.samples.map(function (s) { return [s.cycle, 100 * s[k] / P]; }); };
    chart('c-vmem', {
      animation: false, tooltip: { trigger: 'axis' }, legend: { top: 0 },
      grid: { left: 60, right: 30, top: 40, bottom: 50 },
      xAxis: { type: 'value', name: 'cycle', nameLocation: 'middle', nameGap: 28, min: 0, max: v.source.cycles },
      yAxis: { type: 'value', name: '% of VMEM', min: 0, max: 100 },
      series: [
        { type: 'line', name: 'free', showSymbol: false, data: pct('free_pages'), lineStyle: { width: 2 } },
        { type: 'line', name: 'largest contiguous free', showSymbol: false, data: pct('largest_free_pages') },
        { type: 'line', name: 'occupied', showSymbol: false, data: pct('occupied_pages'), areaStyle: { opacity: 0.3 } },
        { type: 'line', name: 'unused (written, never read)', showSymbol: false, data: pct('unused_pages') }
      ]
    });
  }

  /* blocks x pages heatmap (Figure 8b): occupied pages per block per sample,
   * at most 300 columns (each the maximum of the samples it covers) */
  function heatmap() {
    var v = S.vmem, rows = v.heatmap, ns = rows.length, cols = Math.min(ns, 300), data = [], xs = [];
    for (var c = 0; c < cols; c++) {
      var s0 = Math.floor(c * ns / cols), s1 = Math.max(s0 + 1, Math.floor((c + 1) * ns / cols));
      xs.push(v.samples[s0].cycle);
      for (var b = 0; b < v.blocks; b++) {
        var m = 0;
        for (var s = s0; s < s1; s++) m = Math.max(m, rows[s][b]);
        data.push([c, b, m]);
      }
    }
    chart('c-heat', {
      animation: false, tooltip: { formatter: function (p) { return 'cycle ' + xs[p.value[0]] + ', block ' + p.value[1] + ': ' + p.value[2] + ' pages occupied'; } },
      grid: { left: 60, right: 90, top: 20, bottom: 50 },
      xAxis: { type: 'category', data: xs, name: 'cycle', nameLocation: 'middle', nameGap: 28 },
      yAxis: { type: 'category', data: Array.from({ length: v.blocks }, function (_, i) { return i; }), name: 'block' },
      visualMap: { min: 0, max: v.pages_per_block, calculable: false, orient: 'vertical', right: 0, top: 'center', inRange: { color: ['#f7fbff', '#6baed6', '#08306b'] } },
      series: [{ type: 'heatmap', data: data, progressive: 0 }]
    });
  }

  function suggestions() {
    var el = document.getElementById('suggest'), s = S.suggest || {};
    var esc = function (t) { return String(t).replace(/[&<>]/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;' }[c]; }); };
    var hex = function (v) { return '0x' + Number(v).toString(16); };
    if (s.error) { el.innerHTML = '<p>' + esc(s.error) + '</p>'; return; }
    var rows = (s.stalled_dmas || []), html = '';
    if (s.verify_error) html += '<p>what-if not run: ' + esc(s.verify_error) + '</p>';
    html += '<table><tr><th>DMA</th><th>stall</th><th>suggestion</th><th>predicted</th><th>realized (what-if)</th></tr>';
    rows.forEach(function (r) {
      var d = r.dma || {}, what, pred = '', real = '';
      if (r.suggested) {
        what = 'issue the DMA at ' + hex(r.move.dma_pc) + ' with its operands (' + r.move.operand_pcs.map(hex).join(', ') +
          ') before ' + hex(r.move.before_pc) + ' (#' + r.move.before_index + ')';
        pred = r.predicted_cycles + ' cycles';
        real = r.verify ? r.verify.realized_cycles + ' cycles (' + r.verify.baseline_cycles + ' \u2192 ' + r.verify.moved_cycles + ')' : '-';
      } else {
        what = 'none: ' + r.reason;
      }
      html += '<tr><td>#' + esc(d.id) + ' ' + esc(d.symbol || hex(d.pc || 0)) + '</td><td>' + esc(d.stall_cycles) +
        '</td><td>' + esc(what) + '</td><td>' + pred + '</td><td>' + esc(real) + '</td></tr>';
    });
    html += '</table>';
    if (s.combined)
      html += '<p>all ' + esc(s.combined.moves) + ' moves together: realized ' + esc(s.combined.realized_cycles) +
        ' cycles (' + esc(s.what_if_baseline_cycles) + ' \u2192 ' + esc(s.combined.moved_cycles) +
        '); the single moves\' realized sum to ' + esc(s.combined.sum_of_single_realized) + '</p>';
    el.innerHTML = html + (rows.length ? '' : '<p>no DMA stalled</p>');
  }

  try {
    dmaTimeline();
    utilization();
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
