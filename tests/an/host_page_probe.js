/* Put at the end of a copy of a host page (tests/an/report_host.sh): after
 * the page's own scripts ran, writes into #probe (read back from the DOM by
 * check_report_host.py) what the browser laid out and drew: the viewport's
 * width, each ranking table's right edge and its last header cell's, the
 * page's scroll width, the timeline chart's lanes and series (name, items
 * drawn), and the tooltip of each series' first item (by the series' own
 * formatter). */
(function () {
  var r = {viewport: document.documentElement.clientWidth, scroll: document.documentElement.scrollWidth, rank: []};
  document.querySelectorAll('table.causal-rank').forEach(function (t) {
    var th = t.querySelectorAll('tr:first-child th');
    var box = t.parentElement.getBoundingClientRect();
    r.rank.push({point: t.getAttribute('data-point'), right: t.getBoundingClientRect().right,
      last: th.length ? th[th.length - 1].getBoundingClientRect().right : -1,
      box: box.right, overflow: t.parentElement.scrollWidth - t.parentElement.clientWidth});
  });
  var c = echarts.getInstanceByDom(document.getElementById('c-host-timeline'));
  var o = c ? c.getOption() : {series: [], yAxis: [{data: []}]};
  r.lanes = o.yAxis[0].data;
  r.series = o.series.map(function (s) { return [s.name, s.data.length]; });
  r.tips = {};
  o.series.forEach(function (s) {
    if (s.tooltip && s.tooltip.formatter && s.data.length)
      r.tips[s.name] = s.tooltip.formatter({data: s.data[0], seriesName: s.name});
  });
  var p = document.createElement('pre');
  p.id = 'probe';
  p.textContent = JSON.stringify(r);
  document.body.appendChild(p);
})();
