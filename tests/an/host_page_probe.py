#!/usr/bin/env python3
"""Copies a host page (snr report H.snrh) with tests/an/host_page_probe.js
run at its end, for check_report_host.py's PROBE.html.

usage: host_page_probe.py PAGE.html OUT.html
"""
import os
import sys

page, out = sys.argv[1:3]
s = open(page, encoding='utf-8').read()
js = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'host_page_probe.js'), encoding='utf-8').read()
i = s.rindex('</body>')
open(out, 'w', encoding='utf-8').write(s[:i] + '<script>\n' + js + '</script>\n' + s[i:])
