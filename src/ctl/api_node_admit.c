/*
 * POST /v1/nodes/{node}/credential: an admin re-admits a known node by giving it a new agent
 * token, without its inventory (the node keeps what it registered). Every older agent token of
 * the node dies in the same transaction, so a credential copied from the node, or one left on
 * a reinstalled host, stops working at once. The answer carries the new token, shown once; the
 * operator puts it in the node's STATE_DIR/agent.token (`gpupool nodes readmit NODE
 * --agent-token-file FILE` writes it there), and the agent registers with it when it starts.
 */
#include "ctl/api.h"

#include <string.h>

typedef struct admit_arg {
    const char *node;
} admit_arg;

static int admit_run(gpupoold *g, ctl_op *op, gp_diag *d)
{
    admit_arg *a = op->arg;
    ctl_node *n = ctl_node_by_name(&g->st, a->node);
    if (!n) {
        return gp_diag_set(d, GP_ENOENT, "node %s: not found", a->node);
    }
    char secret[128];
    int rc = ctl_token_create(g, n->name, CTL_ROLE_AGENT, 0, n->id, 0, secret, sizeof(secret), d);
    if (rc < 0) {
        return rc;
    }
    op->dirty = true; /* the new token is in memory: a later failure reloads */
    int64_t id = g->st.tokens[g->st.ntokens - 1].id;
    rc = ctl_tokens_retire_agent(g, n->id, id, 0, d);
    if (rc == 0) {
        n->agent_token_id = id;
        n->older_agent_tokens = false;
        op->status = 201;
        op->result = json_pack("{s:s, s:s}", "node", n->name, "token", secret);
        rc = op->result ? 0 : gp_diag_set(d, GP_ENOMEM, "out of memory");
    }
    memset(secret, 0, sizeof(secret));
    return rc;
}

void api_nodes_admit(api_req *rq)
{
    admit_arg a = {rq->params[0]};
    ctl_op op = {.run = admit_run, .arg = &a};
    api_run(rq, &op);
}
