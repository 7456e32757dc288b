/*
 * Writing a secret (a token) to a file the way every secret of the CLI is written: mode 0600
 * from the start, through PATH.new renamed over PATH (a reader never sees half a token, and an
 * old file's wider mode is not kept), synced before the rename, never following a link at
 * PATH.new.
 */
#ifndef GP_CLI_SECRETFILE_H
#define GP_CLI_SECRETFILE_H

/* Writes secret and a newline to path. 0, or -1 with errno set (path too long: ENAMETOOLONG). */
int gp_cli_write_secret(const char *path, const char *secret);

#endif
