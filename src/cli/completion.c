/*
 * Shell completion. `gpupool completion bash|zsh` prints a script whose command list comes from
 * main.c's table; for everything after the command the script runs `gpupool __complete WORDS...
 * CUR`, which asks the command's own option table (args.h's list sink: the same table that
 * drives parsing and --help), and the server for job and node names. So no list is kept twice.
 *
 * __complete prints candidates one a line; the shell filters them by the word being completed.
 * It never fails loudly: a completion that cannot be made prints nothing and exits 0.
 */
#include "cli/cli.h"

#include "cli/args.h"
#include "cli/client.h"
#include "cli/cliconfig.h"
#include "cli/resource.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ITEMS 256

typedef struct listing {
    char *flag[MAX_ITEMS];
    int takes_value[MAX_ITEMS];
    int nflags;
    char *sub[MAX_ITEMS];
    int nsubs;
    char *text; /* owns the strings above */
} listing;

/* Runs the command c (with its subcommand word, if any) in list mode into *l. */
static void list_command(const gp_cli_command *c, const char *subword, listing *l)
{
    size_t len = 0;
    *l = (listing){0};
    FILE *f = open_memstream(&l->text, &len);
    if (!f) {
        return;
    }
    char *argv[3] = {(char *)c->name, (char *)subword, NULL};
    gp_cli_set_list_sink(f);
    (void)c->run(subword ? 2 : 1, argv);
    gp_cli_set_list_sink(NULL);
    if (fclose(f) != 0 || !l->text) {
        return;
    }
    for (char *save, *line = strtok_r(l->text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "flag ", 5) == 0 && l->nflags < MAX_ITEMS) {
            char *sp = strchr(line + 5, ' ');
            l->takes_value[l->nflags] = sp != NULL;
            if (sp) {
                *sp = '\0';
            }
            l->flag[l->nflags++] = line + 5;
        } else if (strncmp(line, "sub ", 4) == 0 && l->nsubs < MAX_ITEMS) {
            l->sub[l->nsubs++] = line + 4;
        }
    }
}

/* Whether word is a flag of l that takes a value (and is not written --flag=value). */
static int wants_value(const listing *l, const char *word)
{
    for (int i = 0; i < l->nflags; i++) {
        if (strcmp(l->flag[i], word) == 0) {
            return l->takes_value[i];
        }
    }
    return 0;
}

static void print_contexts(void)
{
    char path[1024];
    gp_cli_config *cfg = calloc(1, sizeof(*cfg));
    gp_diag d;
    if (cfg && gp_cli_config_path(path, sizeof(path)) == 0 &&
        gp_cli_config_load(path, cfg, &d) == 0) {
        for (int i = 0; i < cfg->nctx; i++) {
            printf("%s\n", cfg->ctx[i].name);
        }
    }
    free(cfg);
}

/* The names of the jobs or nodes on the server that the connection flags in words name. */
static void print_names(const char *kind, char **words, int n)
{
    static const gp_cli_opt none[] = {{NULL, 0, NULL, NULL}};
    static const gp_cli_spec conn = {"__complete", "", NULL, none, GP_CLI_CONN, 0, -1};
    static const char *const names[] = {"--server", "--token", "--token-file", "--context",
                                        "--cacert"};
    char *argv[32] = {"__complete"};
    int argc = 1;
    for (int i = 0; i + 1 < n && argc + 2 < 32; i++) {
        for (int k = 0; k < 5; k++) {
            if (strcmp(words[i], names[k]) == 0) {
                argv[argc++] = words[i];
                argv[argc++] = words[++i];
                break;
            }
        }
    }
    gp_cli_args a;
    gp_cli_conn *c = NULL;
    json_t *items = json_array();
    int more;
    if (gp_cli_parse(&conn, argc, argv, &a) != GP_CLI_CONTINUE) {
        json_decref(items);
        return;
    }
    const char *path = strcmp(kind, "node") == 0 ? "/v1/nodes" : "/v1/jobs";
    const char *query = strcmp(kind, "node") == 0 ? "" : "?limit=1000";
    if (gp_cli_connect(&a, &c) == 0 && gp_cli_get_pages(c, path, query, 0, items, &more) == 0) {
        size_t i;
        json_t *item;
        json_array_foreach(items, i, item)
        {
            const char *name = json_string_value(json_object_get(item, "name"));
            if (name) {
                printf("%s\n", name);
            }
        }
    }
    json_decref(items);
    gp_cli_conn_free(c);
    gp_cli_args_fini(&a);
}

/* Positional candidates of command c: pos is the index of the word being completed among the
 * positional words (the subcommand excluded), first the first positional word. */
static void print_positional(const gp_cli_command *c, int pos, const char *first, char **words,
                             int n)
{
    static const char *const kinds[] = {"jobs",    "nodes", "queues", "tenants", "priorityclasses",
                                        "volumes", "tokens"};
    const char *what = c->complete;
    if (!what) {
        return;
    }
    if (strcmp(what, "kind") == 0 && pos == 0) {
        for (int i = 0; i < 7; i++) {
            printf("%s\n", kinds[i]);
        }
    } else if (strcmp(what, "kind") == 0 && pos == 1) {
        const gp_cli_kind *k = gp_cli_kind_find(first);
        if (k && (strcmp(k->plural, "jobs") == 0 || strcmp(k->plural, "nodes") == 0)) {
            print_names(k->singular, words, n);
        }
    } else if (strcmp(what, "top") == 0 && pos == 0) {
        printf("nodes\njobs\n");
    } else if (strcmp(what, "job") == 0 || strcmp(what, "node") == 0) {
        print_names(what, words, n);
    }
}

/* Candidates for the value of flag. */
static void print_value(const char *flag)
{
    if (strcmp(flag, "--context") == 0) {
        print_contexts();
    } else if (strcmp(flag, "--output") == 0 || strcmp(flag, "-o") == 0) {
        printf("table\nwide\njson\nyaml\nname\njsonpath=\ncustom-columns=\n");
    }
}

int gp_cli_complete(int argc, char **argv)
{
    int n = argc - 1, ncmd;
    char **words = argv + 1; /* words[n - 1] is the word being completed */
    const gp_cli_command *table = gp_cli_command_table(&ncmd), *c = NULL;
    for (int i = 0; n == 1 && i < ncmd; i++) {
        if (table[i].help) {
            printf("%s\n", table[i].name);
        }
    }
    for (int i = 0; n >= 2 && i < ncmd && !c; i++) {
        c = table[i].help && strcmp(table[i].name, words[0]) == 0 ? &table[i] : NULL;
    }
    if (!c) {
        return GP_EXIT_OK;
    }
    const char *sub = n >= 3 && words[1][0] != '-' ? words[1] : NULL;
    listing l;
    list_command(c, NULL, &l);
    if (l.nsubs > 0 && !sub) {
        for (int i = 0; i < l.nsubs; i++) {
            printf("%s\n", l.sub[i]);
        }
        free(l.text);
        return GP_EXIT_OK;
    }
    if (l.nsubs > 0) {
        free(l.text);
        list_command(c, sub, &l);
    } else {
        sub = NULL; /* a command without subcommands: that word is its first argument */
    }
    const char *cur = words[n - 1];
    if (n >= 3 && wants_value(&l, words[n - 2])) {
        print_value(words[n - 2]);
    } else if (cur[0] == '-') {
        for (int i = 0; i < l.nflags; i++) {
            printf("%s\n", l.flag[i]);
        }
    } else {
        int pos = 0;
        const char *first = NULL;
        for (int i = sub ? 2 : 1; i < n - 1; i++) {
            if (words[i][0] == '-') {
                i += wants_value(&l, words[i]);
                continue;
            }
            first = first ? first : words[i];
            pos++;
        }
        print_positional(c, pos, first ? first : "", words, n);
    }
    free(l.text);
    return GP_EXIT_OK;
}

static const char bash_head[] =
    "# bash completion for gpupool, generated by 'gpupool completion bash' from its command\n"
    "# and option tables. Load it with: source <(gpupool completion bash)\n";

static const char bash_body[] =
    "_gpupool() {\n"
    "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" IFS=$' \\t\\n'\n"
    "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
    "        COMPREPLY=($(compgen -W \"$_gpupool_commands\" -- \"$cur\"))\n"
    "        return\n"
    "    fi\n"
    "    IFS=$'\\n'\n"
    "    COMPREPLY=($(compgen -W \"$(\"${COMP_WORDS[0]}\" __complete "
    "\"${COMP_WORDS[@]:1:COMP_CWORD}\" 2>/dev/null)\" -- \"$cur\"))\n"
    "    case \"${COMPREPLY[0]}\" in *=) compopt -o nospace 2>/dev/null ;; esac\n"
    "}\n"
    "complete -F _gpupool gpupool\n";

static const char zsh_head[] =
    "#compdef gpupool\n"
    "# zsh completion for gpupool, generated by 'gpupool completion zsh' from its command and\n"
    "# option tables. Load it with: source <(gpupool completion zsh)\n";

static const char zsh_body[] =
    "_gpupool() {\n"
    "    local -a cands\n"
    "    if (( CURRENT == 2 )); then\n"
    "        cands=(${=_gpupool_commands})\n"
    "    else\n"
    "        cands=(\"${(@f)$(${words[1]} __complete \"${(@)words[2,CURRENT]}\" "
    "2>/dev/null)}\")\n"
    "    fi\n"
    "    compadd -- $cands\n"
    "}\n"
    "compdef _gpupool gpupool\n";

int gp_cli_completion(int argc, char **argv)
{
    int zsh = argc == 2 && strcmp(argv[1], "zsh") == 0;
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        puts("usage: gpupool completion bash|zsh\n\nPrints a completion script: commands, "
             "their flags, job and node names.\nbash: source <(gpupool completion bash)  "
             "zsh: source <(gpupool completion zsh)");
        return GP_EXIT_OK;
    }
    if (argc != 2 || (!zsh && strcmp(argv[1], "bash") != 0)) {
        fprintf(stderr, "gpupool completion: the shell: bash or zsh\n"
                        "usage: gpupool completion bash|zsh\n");
        return GP_EXIT_USAGE;
    }
    int n;
    const gp_cli_command *table = gp_cli_command_table(&n);
    fputs(zsh ? zsh_head : bash_head, stdout);
    fputs("_gpupool_commands='--help --version", stdout);
    for (int i = 0; i < n; i++) {
        if (table[i].help) {
            printf(" %s", table[i].name);
        }
    }
    fputs("'\n", stdout);
    fputs(zsh ? zsh_body : bash_body, stdout);
    return GP_EXIT_OK;
}
