/*
 * snr_cli.h: the subcommands of the snr binary. Each takes argc/argv with
 * argv[0] = the subcommand name and returns the process exit status:
 * 0 success, 1 failure of the work, 2 bad usage (or the program's own exit
 * code, for `snr device`).
 */
#ifndef SNR_CLI_H
#define SNR_CLI_H

int snr_cmd_cc(int argc, char **argv);
int snr_cmd_device(int argc, char **argv);
int snr_cmd_record(int argc, char **argv);
int snr_cmd_trace(int argc, char **argv);
int snr_cmd_replay(int argc, char **argv);
int snr_cmd_check(int argc, char **argv);
int snr_cmd_sweep(int argc, char **argv);
int snr_cmd_profile(int argc, char **argv);
int snr_cmd_analyze(int argc, char **argv);
int snr_cmd_host(int argc, char **argv);
int snr_cmd_host_causal(int argc, char **argv); /* snr host causal */

/* True if argv has -h or --help before any "--". */
int snr_wants_help(int argc, char **argv);

#endif
