/*
 * report_pod.h: the pod's section of the several-windows report (see
 * report_pod.c).
 */
#ifndef SNR_ANALYZER_REPORT_POD_H
#define SNR_ANALYZER_REPORT_POD_H

#include <jansson.h>
#include <stdio.h>

/* The section's HTML; its charts draw from window.SNR_POD (the document
 * itself) with an_report_pod_js, after ECharts is loaded. */
void an_report_pod_section(FILE *f, const json_t *pod);
extern const char an_report_pod_js[];

#endif
