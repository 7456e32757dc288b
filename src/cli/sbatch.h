/*
 * The sbatch front end's translation (gpupool sbatch, cmd_sbatch.c): a Slurm batch script and
 * sbatch's options into a gpupool job spec. Pure: the script's text, the options, the
 * submitting environment and the working directory come in; a spec and warnings go out.
 *
 * Options come from the script's #SBATCH lines (those before the first command line: after the
 * #! line, only blank lines and comments may come before them, as sbatch reads them) and from
 * the command line, which wins. Each option is --name=value, --name value, -X value or -Xvalue.
 *
 *   --gres=gpu[:TYPE]:N, --gpus-per-node=[TYPE:]N   resources.gpus N (gpu_models [TYPE])
 *   -N, --nodes=N                                    replicas N (a gang: all or none)
 *   --ntasks-per-node=N                              SLURM_NTASKS_PER_NODE in the job; with -c,
 *                                                    the CPUs of a node
 *   -c, --cpus-per-task=N                            resources.cpu_milli N x 1000 (x tasks per
 * node)
 *   --mem=SIZE[K|M|G|T]                              resources.memory_mib (per node; default MiB)
 *   -t, --time=TIME                                  max_runtime (gp_sbatch_time)
 *   -J, --job-name=NAME                              name (lower-cased, other characters '-')
 *   -o, --output=PATTERN, -e, --error=PATTERN        the script's stdout and stderr go to these
 *                                                    files, in its working directory; %j job id,
 *                                                    %x name, %A array id, %a index, %N node
 *   -p, --partition=Q                                queue
 *   -a, --array=SPEC                                 array
 *   -d, --dependency=afterok:ID[:ID...][,afterok:...] after_ok
 *   --export=ALL|NONE|[ALL,]VAR[=VALUE],...          env (VAR alone: its value here)
 *   -D, --chdir=DIR                                  working_dir (default: the current directory)
 * Any other option is named in a warning ("--mail-type: not supported, ignored"); strict makes
 * it an error. The job writes the script to a file mktemp makes in $TMPDIR (else /tmp) and runs it
 * with its #! interpreter (else /bin/sh) and its arguments.
 */
#ifndef GP_CLI_SBATCH_H
#define GP_CLI_SBATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gp_sbatch_in {
    const char *script;      /* the script's text (NUL-terminated) */
    const char *script_name; /* its path as given (its base name names the job by default) */
    char **args;             /* the script's arguments */
    int nargs;
    char **opts; /* command-line options (before the script) */
    int nopts;
    const char *cwd;                         /* the working directory by default */
    const char *(*getenv)(const char *name); /* the submitting environment (--export=VAR) */
    bool strict;                             /* an unsupported option is an error */
} gp_sbatch_in;

/* Builds the job spec into *spec (a new object) and the warnings into *warnings (a new array
 * of strings). 0, or -1 with err set ("--time: bad value \"x\" ...", "line 3: ...") and
 * nothing returned. */
int gp_sbatch_build(const gp_sbatch_in *in, json_t **spec, json_t **warnings, char *err,
                    size_t cap);

/* Whether the command-line word w, an sbatch option, takes the next word as its value: a known
 * option given without its value (--time, -t), or an unknown short option sbatch gives a value
 * (an unknown long option must be given as --name=value). */
bool gp_sbatch_takes_next(const char *w);

/* Slurm's time formats: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, into seconds (a bare
 * number is minutes). UNLIMITED and INFINITE: 0. -1 when malformed. */
int64_t gp_sbatch_time(const char *s);

/* The #SBATCH options of script (its lines before the first command) appended to a new array
 * of strings *out, each line split into words. 0, or -1 with err naming the line. */
int gp_sbatch_directives(const char *script, json_t **out, char *err, size_t cap);

#endif
