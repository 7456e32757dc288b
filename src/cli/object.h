/*
 * The commands of the named objects (queue, tenant, priorityclass, volume): create, set and
 * delete,
 * driven by a table of fields. Each field is a flag, the document path it sets
 * ("guarantee.gpus") and how its value reads (GPUs, a size, CPU cores, ...), so a kind's
 * command is its table and nothing else.
 *
 *   create NAME [FLAGS]  POST {"name": NAME, fields...}
 *   set NAME FLAGS       GET the current document, change only the fields given, PUT it back;
 *                        a limit given as "none" is removed (unlimited again)
 *   delete NAME...       DELETE each
 */
#ifndef GP_CLI_OBJECT_H
#define GP_CLI_OBJECT_H

#include <stddef.h>

typedef enum gp_cli_value {
    GP_VAL_GPUS,   /* "2", "0.5": a GPU amount, up to 3 decimals */
    GP_VAL_MIB,    /* "640Gi": MiB */
    GP_VAL_CPU,    /* "8", "0.5" cores: stored in thousandths */
    GP_VAL_NUMBER, /* a positive decimal, e.g. a weight */
    GP_VAL_INT,    /* an integer, e.g. a priority value */
    GP_VAL_STRING, /* as given */
    GP_VAL_FIXED,  /* a flag without a value that sets `fixed` (JSON text: true, "Never") */
    GP_VAL_MODELS, /* MODEL=GPUS, repeatable: sets PATH.MODEL */
    GP_VAL_LIST,   /* "a,b": a list of names; "" the empty list; "none" removes */
    GP_VAL_BOOL,   /* --flag or --flag=true: true; --flag=false: false (metavar "[=BOOL]") */
} gp_cli_value;

typedef struct gp_cli_field {
    const char *flag;    /* long option; NULL ends a table */
    const char *metavar; /* NULL for GP_VAL_FIXED */
    const char *path;    /* dot-separated document path */
    gp_cli_value type;
    const char *fixed; /* GP_VAL_FIXED: the JSON value it sets */
    const char *help;
} gp_cli_field;

typedef struct gp_cli_object {
    const char *cmd;  /* "queue" */
    const char *kind; /* "queue", in messages */
    const char *path; /* "/v1/queues" */
    const gp_cli_field *fields;
} gp_cli_object;

/* Runs `gpupool CMD create|set|delete ...` for o; returns the exit status. */
int gp_cli_object_cmd(const gp_cli_object *o, int argc, char **argv);

#endif
