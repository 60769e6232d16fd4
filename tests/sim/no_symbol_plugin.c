/*
 * no_symbol_plugin.c: a shared object that is not a simulator plugin (it
 * exports no snr_sim_plugin), for the test that snr says so.
 */
int snr_not_a_plugin(int x);
int snr_not_a_plugin(int x) { return x + 1; }
