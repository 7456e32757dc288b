/*
 * Names for jobs submitted without one (`gpupool submit` with no --name), as sbatch names a job
 * after its script and kubectl's generateName adds a random suffix: the command's base name made
 * a valid job name, a dash, and five random characters ("train-sh-x7k2q" for ./train.sh,
 * "python3-bq7zd" for python3 train.py). The result always follows the job name rules of
 * include/gpupool/jobspec.h: 1..63 characters of [a-z0-9-], alphanumeric at both ends.
 */
#ifndef GP_CLI_JOBNAME_H
#define GP_CLI_JOBNAME_H

#include <stddef.h>
#include <stdint.h>

/* The name for command with the suffix drawn from rnd into out (cap >= 64): the base name of
 * command lower-cased, every character outside [a-z0-9] as '-', runs of '-' as one, none at the
 * ends, at most 57 characters ("job" when nothing is left), then "-" and 5 characters of
 * "bcdfghjklmnpqrstvwxz2456789" (no vowels: no words by chance). Pure. */
void gp_cli_job_name(const char *command, uint64_t rnd, char *out, size_t cap);

/* gp_cli_job_name with fresh random bits (getrandom; else the clock and the pid). Whether
 * another active job has the name is the server's to say: it refuses the submission (409,
 * "name: a job named ... is already active"), and gpupool submit draws again (cmd_submit.c). */
void gp_cli_job_name_new(const char *command, char *out, size_t cap);

#endif
