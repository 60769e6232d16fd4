#include "analyzer/analyses.h"
int snr_cmd_export(int argc, char **argv) { (void)argc; (void)argv; return 2; }
