#!/usr/bin/env python3
"""report_draw.py PAGE.html [RUNS]: how long headless Chromium (Debian's)
takes to draw a `snr report` page, measured through the DevTools protocol
over --remote-debugging-pipe (no package needed): the page is loaded RUNS
times (default 3) in a fresh browser each, and for each load, in ms from
the navigation's start:
  script  the page's script done (body[data-draw-ms], report.js),
  painted the first frame after it presented (two animation frames later:
          the browser's style, layout and paint of what the script drew),
and the browser's own accounting of the load (Performance.getMetrics:
script, style, layout and all main-thread task time, ms, and cpu: the
renderer's main thread's CPU time, which waiting for a core on a loaded
machine does not inflate), and the page's
parts (body[data-draw-parts]). Prints one line per load and the best
(smallest painted) on a last line starting with "best". The time is wall
time: on a shared machine a load may wait for a core, hence the best of
several. Exits 1 when the page did not finish drawing (no data-ready, or a
script error)."""
import json
import os
import subprocess
import sys
import tempfile


class Browser:
    def __init__(self, profile):
        self.w_r, self.w_w = os.pipe()  # we write commands -> fd 3 of chromium
        self.r_r, self.r_w = os.pipe()  # chromium writes replies on fd 4 -> we read
        self.proc = subprocess.Popen(
            ['chromium', '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
             '--disable-component-update', '--no-first-run', '--hide-scrollbars', '--window-size=1200,3600',
             '--user-data-dir=' + profile, '--remote-debugging-pipe', 'about:blank'],
            pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=self._fds)
        os.close(self.w_r); os.close(self.r_w)
        self.buf, self.next_id, self.events = b'', 0, []

    def _fds(self):
        os.dup2(self.w_r, 3); os.dup2(self.r_w, 4)

    def _read(self):
        while b'\0' not in self.buf:
            chunk = os.read(self.r_r, 1 << 20)
            if not chunk:
                raise RuntimeError('chromium closed the DevTools pipe')
            self.buf += chunk
        msg, self.buf = self.buf.split(b'\0', 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None):
        self.next_id += 1
        m = {'id': self.next_id, 'method': method, 'params': params or {}}
        if session:
            m['sessionId'] = session
        os.write(self.w_w, json.dumps(m).encode() + b'\0')
        while True:
            r = self._read()
            if r.get('id') == self.next_id:
                if 'error' in r:
                    raise RuntimeError('%s: %s' % (method, r['error']))
                return r['result']
            self.events.append(r)

    def wait_event(self, method):
        for i, e in enumerate(self.events):
            if e.get('method') == method:
                del self.events[i]
                return e
        while True:
            e = self._read()
            if e.get('method') == method:
                return e
            self.events.append(e)

    def close(self):
        try:
            self.call('Browser.close')
        except (RuntimeError, OSError):
            pass
        self.proc.wait(timeout=30)
        os.close(self.w_w); os.close(self.r_r)


# two animation frames after the script: the first frame holding its drawing has been presented
PAINTED = '''new Promise(function (ok) {
  function done() {
    requestAnimationFrame(function () { requestAnimationFrame(function () {
      var b = document.body;
      ok(JSON.stringify({ ready: b.getAttribute('data-ready'), script: +b.getAttribute('data-draw-ms'),
        painted: Math.round(performance.now()), parts: JSON.parse(b.getAttribute('data-draw-parts') || '{}'),
        errors: (document.getElementById('errors') || {}).textContent || '' }));
    }); });
  }
  if (document.body && document.body.hasAttribute('data-draw-ms')) done();
  else addEventListener('load', done);
  /* a page whose script never finishes: said, not waited for */
  setTimeout(function () { ok(JSON.stringify({ ready: null, script: 0, painted: 0, parts: {},
    errors: 'no data-draw-ms after 120 s: ' + ((document.getElementById('errors') || {}).textContent || '') })); }, 120000);
})'''


PROFILE = os.environ.get('SNR_PROFILE') == '1'


def top_functions(prof, n=30):
    """self time per function (name, script line) from a CPU profile, most first"""
    nodes = {x['id']: x for x in prof['nodes']}
    per, t = {}, {}
    deltas = prof.get('timeDeltas', [])
    for i, sid in enumerate(prof.get('samples', [])):
        f = nodes[sid]['callFrame']
        key = '%s:%d' % (f['functionName'] or '(anonymous)', f['lineNumber'] + 1)
        dt = deltas[i + 1] if i + 1 < len(deltas) else 0
        per[key] = per.get(key, 0) + dt
    return sorted(((round(v / 1000, 1), k) for k, v in per.items()), reverse=True)[:n]


def load(page):
    with tempfile.TemporaryDirectory() as profile:
        b = Browser(profile)
        try:
            target = [t for t in b.call('Target.getTargets')['targetInfos'] if t['type'] == 'page'][0]
            s = b.call('Target.attachToTarget', {'targetId': target['targetId'], 'flatten': True})['sessionId']
            b.call('Page.enable', session=s)
            b.call('Performance.enable', session=s)
            if PROFILE:
                b.call('Profiler.enable', session=s)
                b.call('Profiler.setSamplingInterval', {'interval': 200}, session=s)
                b.call('Profiler.start', session=s)
            b.call('Page.navigate', {'url': 'file://' + os.path.abspath(page)}, session=s)
            b.wait_event('Page.loadEventFired')
            r = b.call('Runtime.evaluate', {'expression': PAINTED, 'awaitPromise': True, 'returnByValue': True},
                       session=s)
            got = json.loads(r['result']['value'])
            if PROFILE:
                prof = b.call('Profiler.stop', session=s)['profile']
                got['profile'] = top_functions(prof)
            m = {x['name']: x['value'] for x in b.call('Performance.getMetrics', session=s)['metrics']}
            got['browser'] = {k: round(1000 * m.get(v, 0)) for k, v in
                              (('script', 'ScriptDuration'), ('style', 'RecalcStyleDuration'),
                               ('layout', 'LayoutDuration'), ('tasks', 'TaskDuration'),
                               ('cpu', 'ThreadTime'))}
            return got
        finally:
            b.close()


def main():
    page, runs = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
    best = None
    for _ in range(runs):
        got = load(page)
        if got['ready'] != '1' or got['errors'].strip():
            print('the page did not draw: ready=%r errors=%r' % (got['ready'], got['errors']))
            return 1
        print('script %d ms, painted %d ms; browser %s; parts %s' % (
            got['script'], got['painted'], json.dumps(got['browser']), json.dumps(got['parts'])))
        for ms, fn in got.get('profile', []):
            print('   %8.1f ms  %s' % (ms, fn))
        if best is None or got['painted'] < best['painted']:
            best = got
    print('best: script %d ms, painted %d ms; browser %s; parts %s' % (
        best['script'], best['painted'], json.dumps(best['browser']), json.dumps(best['parts'])))
    return 0


if __name__ == '__main__':
    sys.exit(main())
