// The sweep's page (sweep/report.c): charts drawn with the vendored ECharts
// from window.SNR_SWEEP, the results.json object. Sets data-ready on <body>
// when drawn, or fills #errors.
(function () {
  var R = window.SNR_SWEEP, errors = [], boxes = [];
  try {
    var causes = R.causes, pts = R.points;
    var label = function (p) {
      return '#' + p.point + ' ' + Object.keys(p.params).map(function (k) {
        return k.replace(/^.*\./, '') + '=' + p.params[k];
      }).join(' ');
    };
    var c1 = echarts.init(document.getElementById('c-points'), null, {renderer: 'svg'});
    var series = ['issue'].concat(causes).map(function (c) {
      return {name: c, type: 'bar', stack: 'c', data: pts.map(function (p) {
        if (c !== 'issue') return p.stall_cycles[c] || 0;
        var s = 0;
        causes.forEach(function (k) { s += p.stall_cycles[k] || 0; });
        return Math.max(0, p.cycles - s);
      })};
    });
    // the axis names points by number; the tooltip gives the parameters
    var byName = {};
    pts.forEach(function (p) { byName['#' + p.point] = p; });
    c1.setOption({animation: false, legend: {top: 0},
      tooltip: {trigger: 'axis', formatter: function (items) {
        var p = byName[items[0].name], s = label(p) + '<br>cycles ' + p.cycles;
        items.forEach(function (it) { s += '<br>' + it.marker + it.seriesName + ' ' + it.value; });
        return s;
      }},
      grid: {top: 40, left: 90, right: 20, bottom: 50},
      xAxis: {type: 'category', name: 'point', data: pts.map(function (p) { return '#' + p.point; })},
      yAxis: {type: 'value', name: 'cycles'}, series: series});
    var el = R.elasticity.filter(function (e) { return e.mean !== null; });
    var c2 = echarts.init(document.getElementById('c-elasticity'), null, {renderer: 'svg'});
    c2.setOption({animation: false, tooltip: {trigger: 'axis'},
      grid: {top: 30, left: 220, right: 40, bottom: 40},
      yAxis: {type: 'category', data: el.map(function (e) { return e.param; })},
      xAxis: {type: 'value', name: '% cycles per % change'},
      series: [{name: 'mean', type: 'bar', data: el.map(function (e) { return e.mean; })},
               {name: 'min', type: 'scatter', data: el.map(function (e) { return e.min; })},
               {name: 'max', type: 'scatter', data: el.map(function (e) { return e.max; })}]});
    ['c-points', 'c-elasticity'].forEach(function (id) {
      var r = document.getElementById(id).getBoundingClientRect();
      boxes.push({id: id, x: Math.round(r.left + window.scrollX), y: Math.round(r.top + window.scrollY),
                  w: Math.round(r.width), h: Math.round(r.height)});
    });
  } catch (e) { errors.push(String(e && e.stack || e)); }
  if (errors.length) {
    var p = document.getElementById('errors');
    p.textContent = errors.join('\n');
    p.style.display = 'block';
  }
  document.body.setAttribute('data-charts', JSON.stringify(boxes));
  if (!errors.length) document.body.setAttribute('data-ready', '1');
})();
