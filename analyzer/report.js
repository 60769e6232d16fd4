/*
 * report.js: draws the charts of `snr report` (analyzer/report.c) from the
 * JSON the analyses wrote into window.SNR, with Apache ECharts (bundled in
 * the same file). Errors go to #errors and the console; when every chart
 * is drawn, body[data-ready] is set, each chart's box is recorded in
 * body[data-charts] (the report test reads both) and the milliseconds from
 * the page's start to then in body[data-draw-ms].
 *
 * Level of detail: the page draws at load from small views (the lane chart
 * merged to its pixels, the first rows of each table, the worst DMAs in the
 * timeline); the full data is packed beside them (report.c: gzip + base64 in
 * <script type="application/x-snr-packed" id="z-NAME">, columns) and decoded
 * with the browser's DecompressionStream when a zoom or a page needs it.
 * Every partial view says what it leaves out. window.snrReport exposes the
 * zoom and the paging as promises for the tests.
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
  /* the packed data z-NAME, decoded once: a promise of its JSON */
  var unpacked = {};
  function unpack(name) {
    if (!unpacked[name]) {
      var z = document.getElementById('z-' + name), src = z.getAttribute('data-src');
      /* in the page, or (report.c side_write) in a script beside it */
      var text = !src ? Promise.resolve(z.textContent) : new Promise(function (ok, ko) {
        var s = document.createElement('script');
        s.src = src;
        s.onload = function () { ok(window.SNR_PACKED[name]); };
        s.onerror = function () { ko(new Error('cannot load ' + src + ': keep the folder beside the page')); };
        document.head.appendChild(s);
      });
      unpacked[name] = text.then(function (t) {
        var bin = atob(t), bytes = new Uint8Array(bin.length);
        for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
        return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'))).text();
      }).then(JSON.parse);
      unpacked[name].catch(function (e) { fail('decoding ' + name + ': ' + e); });
    }
    return unpacked[name];
  }
  /* the page says when it needs the folder beside it */
  var side = document.querySelectorAll('script[type="application/x-snr-packed"][data-src]');
  if (side.length) {
    var note = document.createElement('p');
    note.id = 'side-data';
    note.textContent = 'This window\'s full data (' + Array.prototype.map.call(side, function (e) { return e.id.slice(2); }).join(', ') +
      ') is in ' + side[0].getAttribute('data-src').replace(/\/[^/]*$/, '/') + ' beside this page: keep the two together.';
    document.getElementById('errors').after(note);
  }
  /* row i of a table in columns (report.c columns_write), text columns resolved */
  function colRow(C, i) {
    var o = {};
    Object.keys(C.cols).forEach(function (k) {
      var v = C.cols[k][i], d = C.dicts[k];
      o[k] = d && v !== null ? d[v] : v;
    });
    return o;
  }
  /* A table of window.SNR_TABLES[name] in box: the first page from the
   * page's own rows, any other decoded from z-name; says which rows of how
   * many it shows. Returns go(page) -> promise. */
  var pagers = {};
  function pagedTable(box, name, columns, order) {
    var T = window.SNR_TABLES[name], n = T.n, per = Math.max(1, T.page.n), pages = Math.max(1, Math.ceil(n / per));
    var info = el('p', { 'class': 'pageinfo' }), table = el('table', { 'class': 'paged', 'data-table': name }), nav = el('p'), cur = 0;
    box.appendChild(info); box.appendChild(nav); box.appendChild(table);
    function draw(C, base, k) {
      table.textContent = '';
      var hr = el('tr');
      columns.forEach(function (c) { hr.appendChild(el('th', null, c.h)); });
      table.appendChild(hr);
      var last = Math.min(n, (k + 1) * per);
      for (var i = k * per; i < last; i++) {
        var r = colRow(C, i - base), tr = el('tr', { 'data-row': i });
        columns.forEach(function (c) { tr.appendChild(el('td', c.num ? { 'class': 'num' } : null, c.f(r))); });
        table.appendChild(tr);
      }
      cur = k;
      info.textContent = n ? 'rows ' + (k * per + 1) + '-' + last + ' of ' + n + ' (' + order + '), page ' + (k + 1) + ' of ' + pages : 'none';
      box.setAttribute('data-page', k);
    }
    function go(k) {
      k = Math.max(0, Math.min(pages - 1, k));
      if (k === 0) { draw(T.page, 0, 0); return Promise.resolve(); }
      info.textContent = 'decoding the rows\u2026';
      return unpack(name).then(function (C) { draw(C, 0, k); });
    }
    [['first', function () { return 0; }], ['previous', function () { return cur - 1; }],
      ['next', function () { return cur + 1; }], ['last', function () { return pages - 1; }]].forEach(function (b) {
      var btn = el('button', { type: 'button' }, b[0]);
      btn.addEventListener('click', function () { go(b[1]()); });
      nav.appendChild(btn);
    });
    if (pages < 2) nav.style.display = 'none';
    draw(T.page, 0, 0);
    pagers[name] = go;
    return go;
  }
  /* ECharts sets a tooltip formatter's string as markup: every string from
   * the program (symbols, file names) goes through esc() first */
  var esc = function (t) { return String(t).replace(/[&<>"]/g, function (c) { return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]; }); };
  var cyc = function (v) { return v === null || v === undefined ? NaN : v; };
  var COLORS = {
    'base latency': '#c7d3e3', 'transfer': '#8fb0d6',
    'base-latency stall': '#d62728', 'transfer stall': '#ff9f1c', 'slack': '#2ca02c',
    'backtail': '#7b3fc4'
  };
  var BACKTAIL = 'backtail';
  var KINDS = Object.keys(COLORS);
  /* Every chart on a canvas, painted before the script goes on (the
   * screenshot tests take the page at load), its series drawn in one pass
   * (progressive: 0): a few thousand elements at most, the heatmap one image. */
  var charts = [];
  function chart(id, option) {
    var el = document.getElementById(id);
    var c = echarts.init(el, null, { renderer: 'canvas' });
    option.series.forEach(function (s) { s.progressive = 0; });
    c.setOption(option);
    c.getZr().flush();
    charts.push({ id: id, c: c });
  }

  /* DMA timeline: one row per DMA (worst stall at the top), its phases as
   * the paper colors them; left of each ISSUE its backtail (snr analyze deps):
   * a whisker back to the earliest cycle the DMA could have issued */
  function dmaTimeline() {
    var dmas = S.dma.dmas;
    document.getElementById('dma-what').textContent = S.dma.count > dmas.length
      ? 'The ' + dmas.length + ' worst-stalled of ' + S.dma.count + ' DMAs (every DMA is in the table below).'
      : 'All ' + S.dma.count + ' DMAs.';
    /* each row named by the line that issued the DMA (its pc's place) */
    var issuer = function (d) {
      var src = d.issue && d.issue.source;
      if (!d.issue) return 'before the window';
      if (src && src.file) return src.file.replace(/^.*\//, '') + ':' + src.line;
      return d.issue.symbol || '0x' + Number(d.issue.pc).toString(16);
    };
    var rows = dmas.map(function (d) { return issuer(d) + ' #' + d.id; }).reverse();
    var what = dmas.map(function (d) { return '#' + d.id + ' ' + d.link + ', issued at ' + issuer(d); }).reverse();
    var n = dmas.length, data = [], extras = [];
    dmas.forEach(function (d, i) {
      var y = n - 1 - i;
      var seg = function (a, b, k, extra) {
        if (b > a) data.push([y, a, b, KINDS.indexOf(k), extra ? extras.push(extra) - 1 : -1]);
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
        encode: { x: [1, 2], y: 0 }, dimensions: ['row', 'from', 'to', 'kind', 'extra'],
        data: data.filter(function (d) { return d[3] === ki; }),
        renderItem: function (params, api) {
          var a = api.coord([api.value(1), api.value(0)]), b = api.coord([api.value(2), api.value(0)]);
          var row = api.size([0, 1])[1];
          var cs = params.coordSys, box = { x: cs.x, y: cs.y, width: cs.width, height: cs.height };
          if (k === BACKTAIL) {
            /* a thin bar with a tick at its start: "could issue from here" */
            var t = Math.max(row * 0.18, 3), tick = Math.max(row * 0.6, 6);
            var bar = echarts.graphic.clipRectByRect({ x: a[0], y: a[1] - t / 2, width: Math.max(b[0] - a[0], 1), height: t }, box);
            var cap = echarts.graphic.clipRectByRect({ x: a[0], y: a[1] - tick / 2, width: 3, height: tick }, box);
            var parts = [bar, cap].filter(Boolean).map(function (r) { return { type: 'rect', shape: r, style: { fill: COLORS[k] } }; });
            return parts.length ? { type: 'group', children: parts } : null;
          }
          var h = row * (ki >= 2 ? 0.45 : 0.8);
          var r = echarts.graphic.clipRectByRect({ x: a[0], y: a[1] - h / 2, width: Math.max(b[0] - a[0], 1), height: h }, box);
          return r && { type: 'rect', shape: r, style: { fill: COLORS[k] } };
        }
      };
    });
    chart('c-dma', {
      animation: false,
      tooltip: {
        formatter: function (p) {
          var k = KINDS[p.value[3]], len = p.value[2] - p.value[1];
          if (k === BACKTAIL)
            return esc(what[p.value[0]]) + '<br>backtail: could issue ' + len + ' cycles (' + esc(extras[p.value[4]].insns) +
              ' instructions) earlier, from cycle ' + p.value[1] + ' (relaxed dependency: ' + esc(extras[p.value[4]].anchor) + ')';
          return esc(what[p.value[0]]) + '<br>' + esc(k) + ': ' + p.value[1] + ' - ' + p.value[2] + ' (' + len + ' cycles)';
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
    document.body.setAttribute('data-dma-rows', JSON.stringify(rows));
    var counts = {};
    series.forEach(function (s) { counts[s.name] = s.data.length; });
    document.body.setAttribute('data-dma-series', JSON.stringify(counts));
    var opt = function (v) { return v === null || v === undefined ? '-' : v; };
    pagedTable(document.getElementById('dma-table'), 'dmas', [
      { h: 'DMA', f: function (r) { return '#' + r.id; } },
      { h: 'issued at', f: function (r) { return r.place; } },
      { h: 'link', f: function (r) { return r.link; } },
      { h: 'bytes', num: true, f: function (r) { return r.bytes; } },
      { h: 'issue', num: true, f: function (r) { return opt(r.issue); } },
      { h: 'transfer', num: true, f: function (r) { return opt(r.start) + ' - ' + opt(r.complete); } },
      { h: 'wait', num: true, f: function (r) { return opt(r.wait); } },
      { h: 'stall (base + transfer)', num: true, f: function (r) { return r.stall + ' (' + r.stall_base + ' + ' + r.stall_transfer + ')'; } },
      { h: 'slack', num: true, f: function (r) { return r.slack; } },
      { h: 'backtail', f: function (r) { return r.backtail_cycles === null ? '-' : r.backtail_cycles + ' cycles, ' + r.backtail_insns + ' insns (' + r.relaxed_anchor + ')'; } },
      { h: 'case', f: function (r) { return r.case; } }
    ], 'worst stall first');
  }

  /* Busy intervals per unit and DMA link (window.SNR_LANES, report.c): one
   * lane each. A view never draws more than about one rectangle per pixel
   * column and lane: intervals closer than a pixel's worth of cycles are
   * merged into one span, shaded by its busy share; zoomed in far enough,
   * each interval is its own rectangle. */
  var LANE_W = 1000; /* the plot's width in pixels (grid left/right below) */
  var zoomLanes;
  function lanes() {
    var L = window.SNR_LANES, dec = null, loading = null, pending = Promise.resolve();
    /* the intervals themselves (z-lanes), decoded at the first zoom */
    function full() {
      if (!loading) loading = unpack('lanes').then(function (I) {
        dec = I.map(function (a) {
          var k = a.length / 2, st = new Float64Array(k), en = new Float64Array(k), t = 0;
          for (var i = 0; i < k; i++) { t += a[2 * i]; st[i] = t; t += a[2 * i + 1]; en[i] = t; }
          return { s: st, e: en };
        });
      });
      return loading;
    }
    /* the view at load (report.c lane_spans_write): the same spans view(0, cycles) gives */
    var first = [];
    for (var f = 0; f < L.first.length; f += 5) first.push(L.first.slice(f, f + 5));
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
      type: 'custom', name: 'busy', encode: { x: [1, 2], y: 0 }, data: first,
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
          return esc(L.units[v[0]]) + '<br>' + (v[4] > 1
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
    var c = charts[charts.length - 1].c, lod = document.getElementById('util-lod');
    /* what a view draws, said under the chart */
    function say(items, lo, hi) {
      var merged = 0, intervals = 0;
      items.forEach(function (v) { intervals += v[4]; if (v[4] > 1) merged++; });
      lod.textContent = 'This view, cycles ' + Math.round(lo) + ' - ' + Math.round(hi) + ' of ' + L.cycles + ': ' + items.length +
        ' rectangles for ' + intervals + ' busy intervals' + (merged ? '; ' + merged + ' of them merge intervals closer than a pixel ' +
        '(shaded by the busy share): zoom in to see each interval' : ': exact, each interval its own rectangle') +
        ' (' + L.intervals + ' intervals in the window).';
      lod.setAttribute('data-merged', merged);
    }
    say(first, 0, L.cycles);
    c.on('datazoom', function () {
      var r = c.getModel().getComponent('xAxis', 0).axis.scale.getExtent();
      if (r[0] <= 0 && r[1] >= L.cycles) { c.setOption({ series: [{ data: first }] }); say(first, 0, L.cycles); return; }
      lod.textContent = 'decoding the intervals\u2026';
      pending = full().then(function () {
        var r2 = c.getModel().getComponent('xAxis', 0).axis.scale.getExtent(), items = view(r2[0], r2[1]);
        c.setOption({ series: [{ data: items }] });
        say(items, r2[0], r2[1]);
        return items;
      });
    });
    zoomLanes = function (lo, hi) {
      c.dispatchAction({ type: 'dataZoom', startValue: lo, endValue: hi });
      return pending;
    };
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
   * row's pages occupied per sample. Drawn as one image of the plot's
   * pixels (a rectangle per cell on a canvas, colored as the visual map
   * beside it), not one chart element per cell: at most one column per
   * pixel, each the maximum of the samples it covers; zoomed (wheel or
   * drag) down to one column per sample, exact. */
  var HEAT = ['#f7fbff', '#6baed6', '#08306b'];
  var zoomHeat;
  function heatmap() {
    var v = S.vmem, rows = v.heatmap, R = v.heat_rows, ns = rows.length;
    var hex = function (p) { return '0x' + (S.vmem_base + p * v.page_bytes).toString(16); };
    var ylab = R.map(function (r) { return hex(r.first_page); });
    var xs = v.samples.slice(0, ns).map(function (s) { return s.cycle; });
    var touched = R.reduce(function (a, r) { return a + r.pages; }, 0), what = document.getElementById('heat-what');
    var head = !R.length ? 'the window touched no VMEM' : touched + ' pages of ' + v.page_bytes + ' B touched, in ' + R.length +
      ' rows of ' + R[0].pages + ' pages; the colour is the share of a row\'s pages occupied (the tooltip gives the count)';
    /* columns of samples [lo, hi] for a plot w pixels wide: [s0, s1) each, and the most occupied of each row in them */
    function columns(lo, hi, w) {
      var n = hi - lo + 1, cols = Math.max(1, Math.min(n, Math.floor(w))), out = [];
      for (var c = 0; c < cols; c++) {
        var s0 = lo + Math.floor(c * n / cols), s1 = Math.max(s0 + 1, lo + Math.floor((c + 1) * n / cols)), m = [];
        for (var b = 0; b < R.length; b++) {
          var x = 0;
          for (var s = s0; s < s1; s++) x = Math.max(x, rows[s][b]);
          m.push(x);
        }
        out.push({ s0: s0, s1: s1, m: m });
      }
      return out;
    }
    var shown = { lo: 0, hi: ns - 1, cols: [] }, image = document.createElement('canvas'), colorOf = {};
    function color(share) {
      var k = Math.round(1000 * share);
      return colorOf[k] || (colorOf[k] = echarts.color.lerp(k / 1000, HEAT));
    }
    /* the image of samples [lo, hi] at w x h pixels */
    function paint(lo, hi, w, h) {
      var cols = columns(lo, hi, w);
      image.width = Math.max(1, Math.round(w)); image.height = Math.max(1, Math.round(h));
      var g = image.getContext('2d');
      cols.forEach(function (col, c) {
        var x0 = Math.round(c * image.width / cols.length), x1 = Math.round((c + 1) * image.width / cols.length);
        col.m.forEach(function (m, b) {
          var y0 = Math.round(b * image.height / R.length), y1 = Math.round((b + 1) * image.height / R.length);
          g.fillStyle = color(m / R[b].pages);
          g.fillRect(x0, y0, x1 - x0, y1 - y0);
        });
      });
      shown.lo = lo; shown.hi = hi; shown.cols = cols;
      var merged = cols.length < hi - lo + 1;
      what.textContent = head + (!R.length ? '' : '; samples ' + (lo + 1) + '-' + (hi + 1) + ' of ' + ns + ' in ' + cols.length + ' columns' +
        (merged ? ', each the most occupied of the samples it covers: zoom in for each sample' : ', one per sample (exact)'));
      what.setAttribute('data-columns', cols.length);
    }
    var mouse = [0, 0], c;
    chart('c-heat', {
      animation: false,
      tooltip: {
        formatter: function () {
          var p = c.convertFromPixel({ gridIndex: 0 }, mouse);
          var r = R[p && p[1]], s = p && p[0];
          var col = shown.cols.filter(function (k) { return s >= k.s0 && s < k.s1; })[0];
          if (!r || !col) return '';
          var b = p[1], m = col.m[b];
          return (col.s1 - col.s0 > 1 ? 'cycles ' + xs[col.s0] + ' - ' + xs[col.s1 - 1] + ' (' + (col.s1 - col.s0) + ' samples, the most occupied)' : 'cycle ' + xs[col.s0]) +
            ', pages ' + hex(r.first_page) + ' - ' + hex(r.last_page + 1) + ' (' + r.pages + ' touched): ' + m + ' occupied';
        }
      },
      grid: { left: 100, right: 140, top: 20, bottom: 50 },
      xAxis: { type: 'category', data: xs, name: 'cycle', nameLocation: 'middle', nameGap: 28 },
      yAxis: { type: 'category', data: ylab, inverse: true, axisLabel: { interval: Math.max(0, Math.ceil(R.length / 24) - 1) } },
      dataZoom: [{ type: 'inside', xAxisIndex: 0, filterMode: 'none' }],
      visualMap: {
        min: 0, max: 100, calculable: false, orient: 'vertical', right: 10, top: 'center', itemHeight: 280, dimension: 2, seriesIndex: 1,
        text: ['all occupied', 'none'], inRange: { color: HEAT }
      },
      series: [{
        type: 'custom', data: R.length ? [[0]] : [],
        renderItem: function (params) {
          /* the samples the x axis shows now (all of them until a zoom) */
          var cs = params.coordSys, r = c ? c.getModel().getComponent('xAxis', 0).axis.scale.getExtent() : [0, ns - 1];
          var lo = Math.max(0, Math.round(r[0])), hi = Math.min(ns - 1, Math.round(r[1]));
          if (shown.w !== cs.width || shown.h !== cs.height || shown.lo !== lo || shown.hi !== hi || !shown.cols.length) {
            paint(lo, hi, cs.width, cs.height);
            shown.w = cs.width; shown.h = cs.height;
          }
          shown.box = { x: cs.x, y: cs.y, w: cs.width, h: cs.height };
          return { type: 'image', style: { image: image, x: cs.x, y: cs.y, width: cs.width, height: cs.height } };
        }
      }, { type: 'heatmap', data: [] }]
    });
    c = charts[charts.length - 1].c;
    c.getZr().on('mousemove', function (e) { mouse = [e.offsetX, e.offsetY]; });
    /* for the report test: the samples [lo, hi] shown, how many columns, the plot's box in the canvas */
    zoomHeat = function (lo, hi) {
      if (lo !== undefined) { c.dispatchAction({ type: 'dataZoom', startValue: lo, endValue: hi }); c.getZr().flush(); }
      return { lo: shown.lo, hi: shown.hi, columns: shown.cols.length, box: shown.box, said: what.textContent };
    };
  }

  /* ---- source page (S.annot: analyzer/annotate.h's document; S.sources:
   * the text of the functions that ran, per file {first, lines}) ---- */
  var CAUSES = ['dma-base', 'dma-transfer', 'vmem-hazard', 'unit-busy', 'register', 'branch', 'peer'];
  var CAUSE_COLORS = { 'dma-base': '#d62728', 'dma-transfer': '#ff9f1c', 'vmem-hazard': '#9467bd', 'unit-busy': '#8c564b', 'register': '#17becf', 'branch': '#7f7f7f', 'peer': '#2ca02c' };
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function baseName(f) { return f ? f.replace(/^.*\//, '') : null; }
  function where(r) { return r.file ? baseName(r.file) + ':' + r.line + (r.function ? ' (' + r.function + ')' : '') : (r.function || '?'); }
  function lineKey(r) { return r.file ? r.file + ':' + r.line : 'fn:' + r.function; }
  function sourceText(file, line) {
    var f = S.sources && S.sources[file];
    if (!f || line < f.first || line >= f.first + f.lines.length) return null;
    return f.lines[line - f.first];
  }
  /* stall causes as a stacked bar, scaled so that `scale` cycles fill it */
  function stallBar(st, scale, width) {
    var bar = el('span', { 'class': 'stallbar' });
    bar.style.width = width + 'px';
    CAUSES.forEach(function (c) {
      var v = st && st[c] || 0;
      if (!v) return;
      var seg = el('span', { 'data-cause': c, title: c + ': ' + v + ' cycles' });
      seg.style.width = Math.max(1, Math.round(width * v / scale)) + 'px';
      seg.style.background = CAUSE_COLORS[c];
      bar.appendChild(seg);
    });
    return bar;
  }
  function stallText(st) {
    return CAUSES.filter(function (c) { return st && st[c]; }).map(function (c) { return c + ' ' + st[c]; }).join(', ');
  }
  function heatColor(share) {
    var a = Math.min(1, share * 4); /* a quarter of the window and up: full red */
    return 'rgba(214, 39, 40, ' + a.toFixed(3) + ')';
  }
  function pct(v, t) { return t ? (100 * v / t).toFixed(1) + '%' : '-'; }
  function legend() {
    var p = el('p', { 'class': 'legend' }, 'stall causes: ');
    CAUSES.forEach(function (c) {
      var k = el('span', { 'class': 'key' }); k.style.background = CAUSE_COLORS[c];
      p.appendChild(k); p.appendChild(document.createTextNode(c + ' '));
    });
    return p;
  }

  function sourcePage() {
    var A = S.annot, top = document.getElementById('hot'), page = document.getElementById('source');
    if (!A || A.error) {
      var why = A && A.error ? A.error : 'no per-line data';
      top.appendChild(el('p', null, why)); page.appendChild(el('p', null, why));
      return;
    }
    var T = A.total_cycles, lines = A.lines, pcs = A.pcs;
    var pcsOf = {};
    pcs.forEach(function (p) { var k = lineKey(p); (pcsOf[k] = pcsOf[k] || []).push(p); });
    /* the hottest lines: the window's cycles by line, most first */
    var tbl = el('table', { id: 'hot-lines' });
    var hr = el('tr');
    ['line', 'source', 'cycles', 'share', 'inclusive', 'executions', 'stall cycles by cause'].forEach(function (h) { hr.appendChild(el('th', null, h)); });
    tbl.appendChild(hr);
    var maxc = lines.length ? lines[0].cycles : 1;
    /* lines that ran (a caller before the window, with inclusive cycles
     * only, is in the calls table of the source page) */
    var ranLines = lines.filter(function (r) { return r.executions > 0; });
    ranLines.slice(0, 15).forEach(function (r, i) {
      var tr = el('tr', { 'class': 'hotrow', 'data-key': lineKey(r), 'data-rank': i });
      var a = el('a', { href: '#L-' + encodeURIComponent(lineKey(r)) }, where(r));
      a.addEventListener('click', function () { select(lineKey(r)); });
      var td = el('td'); td.appendChild(a); tr.appendChild(td);
      tr.appendChild(el('td', { 'class': 'code' }, r.file ? (sourceText(r.file, r.line) || '(source not found)') : ''));
      tr.appendChild(el('td', { 'class': 'num' }, r.cycles));
      tr.appendChild(el('td', { 'class': 'num' }, pct(r.cycles, T)));
      tr.appendChild(el('td', { 'class': 'num incl', title: pct(r.inclusive_cycles, T) + ' of the window, with the functions it calls' }, r.inclusive_cycles));
      tr.appendChild(el('td', { 'class': 'num' }, r.executions));
      var sb = el('td'); sb.appendChild(stallBar(r.stall_cycles, maxc, 100));
      sb.appendChild(document.createTextNode(' ' + stallText(r.stall_cycles))); tr.appendChild(sb);
      tbl.appendChild(tr);
    });
    top.appendChild(el('p', null, 'Total ' + T + ' cycles: ' + (T - A.drain_cycles) + ' charged to instructions (an instruction\'s cycles run from its issue to the next one\'s, the stalls that delayed its issue included), ' +
      A.drain_cycles + ' of drain after the last issue. Click a line to see its instructions.'));
    top.appendChild(legend());
    top.appendChild(tbl);
    if (ranLines.length > 15) top.appendChild(el('p', null, 'the 15 hottest of ' + ranLines.length + ' lines; every line that ran is on the source page'));
    /* each function: its source with the cycles per line as a heat column
     * and stall causes as stacked bars, beside its instructions */
    var funcs = [], byFunc = {};
    lines.forEach(function (r) {
      var k = (r.file || '') + '|' + (r.function || '?');
      if (!byFunc[k]) { byFunc[k] = { file: r.file, name: r.function || '?', lines: [], cycles: 0 }; funcs.push(byFunc[k]); }
      byFunc[k].lines.push(r); byFunc[k].cycles += r.cycles;
    });
    funcs.sort(function (a, b) { return b.cycles - a.cycles; });
    /* the calls: caller line -> callee, the cycles while its calls were open */
    if (A.calls && A.calls.length) {
      page.appendChild(el('p', null, 'Inclusive cycles add those of the functions a line calls (from the call to its return). The calls, most cycles first:'));
      var ctb = el('table', { id: 'calls' }), ch = el('tr');
      ['caller line', 'source', 'callee', 'calls', 'cycles', 'share'].forEach(function (h) { ch.appendChild(el('th', null, h)); });
      ctb.appendChild(ch);
      A.calls.slice(0, 15).forEach(function (c) {
        var tr = el('tr', { 'class': 'callrow' });
        tr.appendChild(el('td', null, where(c)));
        tr.appendChild(el('td', { 'class': 'code' }, c.file ? (sourceText(c.file, c.line) || '(source not found)') : ''));
        tr.appendChild(el('td', null, c.callee));
        tr.appendChild(el('td', { 'class': 'num' }, c.calls ? c.calls : '0 (called before the window)'));
        tr.appendChild(el('td', { 'class': 'num' }, c.cycles));
        tr.appendChild(el('td', { 'class': 'num' }, pct(c.cycles, T)));
        ctb.appendChild(tr);
      });
      page.appendChild(ctb);
    }

    var rowsByKey = {};
    funcs.forEach(function (f) {
      var sec = el('div', { 'class': 'func' });
      sec.appendChild(el('h3', null, f.name + (f.file ? ' \u2014 ' + f.file : '') + ': ' + f.cycles + ' cycles (' + pct(f.cycles, T) + ')'));
      var wrap = el('div', { 'class': 'side' }), left = el('table', { 'class': 'src' }), right = el('table', { 'class': 'asm' });
      var hdr = el('tr');
      ['line', 'cycles', 'inclusive', 'heat', 'stalls', 'source'].forEach(function (h) { hdr.appendChild(el('th', null, h)); });
      left.appendChild(hdr);
      var ran = {}, lo = Infinity, hi = -Infinity, fmax = 1;
      f.lines.forEach(function (r) { if (r.file) { ran[r.line] = r; lo = Math.min(lo, r.line); hi = Math.max(hi, r.line); } fmax = Math.max(fmax, r.cycles); });
      var src = f.file && S.sources ? S.sources[f.file] : null;
      var shown = [];
      if (src && lo <= hi) {
        var a0 = Math.max(src.first, lo - 2), a1 = Math.min(src.first + src.lines.length - 1, hi + 1);
        for (var ln = a0; ln <= a1; ln++) shown.push(ln);
      } else {
        f.lines.forEach(function (r) { shown.push(r.line); });
      }
      shown.forEach(function (ln) {
        var r = f.file ? ran[ln] : f.lines[0];
        var key = r ? lineKey(r) : null;
        var tr = el('tr', r ? { id: 'L-' + key, 'data-key': key } : null);
        tr.appendChild(el('td', { 'class': 'num ln' }, f.file ? ln : ''));
        tr.appendChild(el('td', { 'class': 'num' }, r ? r.cycles : ''));
        tr.appendChild(el('td', { 'class': 'num incl', title: 'with the cycles of the functions it calls' }, r ? r.inclusive_cycles : ''));
        var h = el('td', { 'class': 'heat' }); if (r) { h.style.background = heatColor(r.cycles / T); h.title = pct(r.cycles, T) + ' of the window'; }
        tr.appendChild(h);
        var sb = el('td'); if (r && r.stall_cycles) sb.appendChild(stallBar(r.stall_cycles, fmax, 90));
        tr.appendChild(sb);
        var text = f.file ? sourceText(f.file, ln) : '(no line table: ' + f.name + ')';
        tr.appendChild(el('td', { 'class': 'code' }, text === null ? '(source not found)' : text));
        if (r) { tr.classList.add('ran'); tr.addEventListener('click', function () { select(key); }); rowsByKey[key] = tr; }
        left.appendChild(tr);
      });
      var ah = el('tr');
      ['pc', 'instruction', 'line', 'executions', 'cycles', 'stalls'].forEach(function (h) { ah.appendChild(el('th', null, h)); });
      right.appendChild(ah);
      f.lines.slice().sort(function (a, b) { return a.line - b.line; }).forEach(function (r) {
        (pcsOf[lineKey(r)] || []).forEach(function (p) {
          var tr = el('tr', { 'data-key': lineKey(r), 'class': 'pc' });
          tr.appendChild(el('td', { 'class': 'num' }, '0x' + Number(p.pc).toString(16)));
          tr.appendChild(el('td', { 'class': 'code' }, p.disasm));
          tr.appendChild(el('td', { 'class': 'num' }, r.file ? r.line : ''));
          tr.appendChild(el('td', { 'class': 'num' }, p.executions));
          tr.appendChild(el('td', { 'class': 'num' }, p.cycles));
          tr.appendChild(el('td', null, stallText(p.stall_cycles)));
          right.appendChild(tr);
        });
      });
      wrap.appendChild(left); var rd = el('div', { 'class': 'asmbox' }); rd.appendChild(right); wrap.appendChild(rd);
      sec.appendChild(wrap);
      page.appendChild(sec);
    });
    /* a line's instructions: highlighted beside it, and listed under the page */
    var sel = document.getElementById('selected');
    function select(key) {
      Array.prototype.forEach.call(document.querySelectorAll('.sel'), function (e) { e.classList.remove('sel'); });
      if (rowsByKey[key]) rowsByKey[key].classList.add('sel');
      var first = null;
      Array.prototype.forEach.call(document.querySelectorAll('tr.pc'), function (e) {
        if (e.getAttribute('data-key') === key) { e.classList.add('sel'); if (!first) first = e; }
      });
      if (first && first.parentNode) {
        var box = first.closest('.asmbox');
        if (box && (first.offsetTop < box.scrollTop || first.offsetTop + first.offsetHeight > box.scrollTop + box.clientHeight))
          box.scrollTop = first.offsetTop - 30;
      }
      var r = lines.filter(function (l) { return lineKey(l) === key; })[0];
      sel.textContent = '';
      if (!r) return;
      sel.appendChild(el('b', null, where(r) + ': ' + r.cycles + ' cycles, ' + r.executions + ' executions; ' + (stallText(r.stall_cycles) || 'no stalls')));
      var ul = el('ul');
      (pcsOf[key] || []).forEach(function (p) {
        ul.appendChild(el('li', null, '0x' + Number(p.pc).toString(16) + '  ' + p.disasm + ': ' + p.executions + ' executions, ' + p.cycles + ' cycles' +
          (p.stall_total || stallText(p.stall_cycles) ? '; ' + stallText(p.stall_cycles) : '')));
      });
      sel.appendChild(ul);
    }
    if (lines.length) select(lineKey(lines[0]));
    var hot = lines[0], cell = tbl.querySelector('tr.hotrow td.code');
    if (cell) {
      var r = cell.getBoundingClientRect();
      document.body.setAttribute('data-hot-box', JSON.stringify({ x: Math.round(r.left + window.scrollX), y: Math.round(r.top + window.scrollY), w: Math.round(r.width), h: Math.round(r.height) }));
    }
    document.body.setAttribute('data-hottest', JSON.stringify(hot ? { key: lineKey(hot), file: hot.file, line: hot.line, cycles: hot.cycles, text: hot.file ? sourceText(hot.file, hot.line) : null } : null));
  }

  /* ---- compare (snr report A --compare B): S.compare is `snr annotate A
   * --compare B --json`'s document: per line, paired by function and statement text, this
   * window (before) and B (after) ---- */
  function compare() {
    var C = S.compare, box = document.getElementById('compare');
    if (!C || !box) return;
    var tc = C.total_cycles;
    box.appendChild(el('p', { id: 'compare-totals' }, 'cycles: before (' + C.before + ') ' + tc.before + ', after (' + C.after + ') ' + tc.after +
      ' (' + (tc.after - tc.before >= 0 ? '+' : '') + (tc.after - tc.before) + ', ' + (tc.before ? (100 * (tc.after - tc.before) / tc.before).toFixed(1) : '-') + '%)'));
    var ct = el('table', { id: 'compare-causes' }), h = el('tr');
    ['stall cause', 'before', 'after', 'change'].forEach(function (x) { h.appendChild(el('th', null, x)); });
    ct.appendChild(h);
    CAUSES.forEach(function (c) {
      var v = C.stall_cycles[c] || { before: 0, after: 0 }, tr = el('tr', { 'data-cause': c });
      tr.appendChild(el('td', null, c)); tr.appendChild(el('td', { 'class': 'num' }, v.before));
      tr.appendChild(el('td', { 'class': 'num' }, v.after)); tr.appendChild(el('td', { 'class': 'num' }, v.after - v.before));
      ct.appendChild(tr);
    });
    box.appendChild(ct);
    var t = el('table', { id: 'compare-lines' }), hr = el('tr');
    ['line', 'source', 'cycles before', 'after', 'change', 'stalls before', 'stalls after'].forEach(function (x) { hr.appendChild(el('th', null, x)); });
    t.appendChild(hr);
    var scale = 1;
    C.lines.forEach(function (r) { scale = Math.max(scale, r.before ? r.before.cycles : 0, r.after ? r.after.cycles : 0); });
    C.lines.slice(0, 60).forEach(function (r) {
      var tr = el('tr', { 'data-key': lineKey(r) });
      tr.appendChild(el('td', null, where(r)));
      tr.appendChild(el('td', { 'class': 'code' }, r.file ? (sourceText(r.file, r.line) || '') : ''));
      tr.appendChild(el('td', { 'class': 'num' }, r.before ? r.before.cycles : '-'));
      tr.appendChild(el('td', { 'class': 'num' }, r.after ? r.after.cycles : '-'));
      tr.appendChild(el('td', { 'class': 'num' }, (r.delta_cycles > 0 ? '+' : '') + r.delta_cycles));
      [r.before, r.after].forEach(function (side) {
        var td = el('td');
        if (side) { td.appendChild(stallBar(side.stall_cycles, scale, 120)); td.appendChild(document.createTextNode(' ' + stallText(side.stall_cycles))); }
        else td.textContent = 'not in this window';
        tr.appendChild(td);
      });
      t.appendChild(tr);
    });
    box.appendChild(t);
    if (C.lines.length > 60) box.appendChild(el('p', null, 'the 60 largest changes of ' + C.lines.length + ' lines are shown'));
  }

  function suggestions() {
    var el = document.getElementById('suggest'), s = S.suggest || {};
    var hex = function (v) { return '0x' + Number(v).toString(16); };
    var at = function (p) { return esc((p.symbol || hex(p.pc)) + ' (pc ' + hex(p.pc) + ')'); };
    if (s.error) { el.innerHTML = '<p>' + esc(s.error) + '</p>'; return; }
    var moves = (s.moves || []), html = '';
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
      html += '<tr><td class="move">' + (m.label ? esc(m.label) : 'move the DMA at ' + at(m.dma) + ' up to before ' + at(m.before)) + '</td><td>' + esc(m.instances) +
        '</td><td>' + esc(m.estimate_cycles) + '</td><td>' + (m.realized_cycles === null ? '-' : esc(m.realized_cycles)) +
        '</td><td>' + esc(status) + '</td></tr>';
    });
    html += '</table>';
    var ns = s.stalled_count || 0, nm = ns - (s.suggested_count || 0);
    el.innerHTML = html + (ns ? '<p>' + ns + ' stalled DMAs: ' + s.suggested_count + ' covered by the moves above, ' + nm +
      ' with no move (below, grouped by where they issue and why, as <code>snr analyze suggest</code> groups them; <code>snr analyze suggest --json</code> gives each with its producers)</p>' : '<p>no DMA stalled</p>');
    if (nm) pagedTable(document.getElementById('no-move'), 'no_move', [
      { h: 'issued at', f: function (r) { return r.place; } },
      { h: 'DMAs', num: true, f: function (r) { return r.instances; } },
      { h: 'stall', num: true, f: function (r) { return r.stall; } },
      { h: 'no move because', f: function (r) { return r.reason; } }
    ], 'in the order suggest lists them');
  }

  /* each part's drawing time in ms (body[data-draw-parts]), from the script's start */
  var parts = { start: Math.round(performance.now()) };
  try {
    [['dma', dmaTimeline], ['lanes', lanes], ['vmem', vmem], ['heatmap', heatmap], ['suggest', suggestions],
      ['source', sourcePage], ['compare', compare]].forEach(function (p) {
      var t0 = performance.now();
      p[1]();
      parts[p[0]] = Math.round(performance.now() - t0);
    });
  } catch (e) {
    fail(e && e.stack ? e.stack : e);
  }
  var boxes = charts.map(function (c) {
    var r = document.getElementById(c.id).getBoundingClientRect();
    return { id: c.id, x: Math.round(r.left + window.scrollX), y: Math.round(r.top + window.scrollY), w: Math.round(r.width), h: Math.round(r.height) };
  });
  document.body.setAttribute('data-charts', JSON.stringify(boxes));
  window.snrReport = {
    zoomLanes: function (lo, hi) { return zoomLanes(lo, hi); },
    zoomHeat: function (lo, hi) { return zoomHeat(lo, hi); },
    page: function (name, k) { return pagers[name](k); },
    unpack: unpack
  };
  if (!errors.length) document.body.setAttribute('data-ready', '1');
  document.body.setAttribute('data-draw-ms', Math.round(performance.now()));
  document.body.setAttribute('data-draw-parts', JSON.stringify(parts));
})();
