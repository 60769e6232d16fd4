#include "tests/check.h"
int main(void) { return check_report("test_docs"); }
