"""Who reads the metrics: one metrics token for the controller and every agent.

- by default (metrics.auth on) the controller's /metrics and /v1/sd/prometheus refuse a request
  without a token (401) and a user's token (403); a token of role metrics reads both, with the
  per-tenant labels, and nothing else (403 on the rest of the API); admins read them too;
- a real gpupool-agent over the mock NVML given the same token (--metrics-token-file) serves its
  /metrics to it and refuses no token, a user's token and the join token (401);
- with metrics.auth=false the controller's pages need no token, and then carry pool-wide figures
  only: no tenant, queue or job label and no per-tenant quota series; the metrics token still
  reads the labels, and a wrong token is 401; an agent with --metrics-auth none serves its page
  to anyone, the metrics token still reads it.
Arguments: gpupoold, gpupool-agent, libgpupool-nvml-mock.so, the inventories directory.
"""
import os
import shutil
import sys
import tempfile
import urllib.error
import urllib.request

from mockagent import MockAgent
from pool import Pool, check, node_doc, submit, wait

gpupoold, agent_bin, mock, inventories = sys.argv[1:5]
inventory = os.path.join(inventories, "pcie-t4.yaml")
tmp = tempfile.mkdtemp(prefix="gpupool-mauth.")
args = ["--api-rate-limit", "0", "--api-token-rate-limit", "0"]


def agent_scrape(port, token):
    req = urllib.request.Request("http://127.0.0.1:%d/metrics" % port)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:  # not listening yet
        return 0, str(e)


def populate(p):
    """Two tenants with jobs waiting and a queue: what the per-tenant labels would name."""
    p.tenant("team-a", gpus=2)
    p.queue("batch")
    s, d = p.admin.put("/v1/tenants/team-a", {"quota": {"gpus": 2}, "queues": ["default",
                                                                            "batch"]})
    check(s == 200, "grant batch to team-a", s, d)
    p.register(node_doc("n1", ngpus=1))
    alice = p.user("alice", "team-a")
    s, d = submit(alice, "secret-training-run", gpus=8, queue="batch", allow_unschedulable=True)
    check(s == 201, "submit a waiting job", s, d)
    s, d = p.admin.post("/v1/tokens", {"name": "scrape", "role": "metrics"})
    check(s == 201 and d["token"].startswith("gpm_") and d["role"] == "metrics",
          "a metrics token", s, d)
    return alice, d["token"]


def agent(node, server, join_file, *flags):
    a = MockAgent(agent_bin, mock, tmp, node, inventory, server, join_file, *flags)
    agents.append(a)
    wait("agent %s serving /metrics" % node,
         lambda: agent_scrape(a.port, None)[0] in (200, 401) and
         "DCGM" in agent_scrape(a.port, scrape_token)[1], 30)
    return a


agents = []
try:
    with Pool(gpupoold, args) as p:
        alice, scrape_token = populate(p)
        # ---- the controller, metrics.auth on by default ----
        for path in ("/metrics", "/v1/sd/prometheus"):
            s, d = p.client(None).get(path)
            check(s == 401, "%s without a token: 401" % path, s, d)
            s, d = alice.get(path)
            check(s == 403, "%s with a user's token: 403" % path, s, d)
            s, d = p.client("gpm_not-a-token").get(path)
            check(s == 401, "%s with an unknown token: 401" % path, s, d)
            s, d = p.admin.get(path)
            check(s == 200, "%s with the admin token" % path, s, str(d)[:300])
        scraper = p.client(scrape_token)
        s, text = scraper.get("/metrics")
        check(s == 200 and 'tenant="team-a"' in text and 'queue="batch"' in text
              and "gpupool_quota_used_gpus{" in text,
              "the metrics token reads the per-tenant labels", s, str(text)[:2000])
        s, sd = scraper.get("/v1/sd/prometheus")
        check(s == 200 and isinstance(sd, list), "the metrics token reads the discovery", s, sd)
        for method, path in (("GET", "/v1/jobs"), ("POST", "/v1/jobs"), ("GET", "/v1/tenants"),
                             ("GET", "/v1/nodes"), ("GET", "/v1/whoami"), ("GET", "/v1/tokens"),
                             ("POST", "/v1/tokens"), ("GET", "/v1/usage"),
                             ("POST", "/v1/nodes"), ("GET", "/v1/nodes/n1/desired")):
            s, d = scraper.call(method, path, {} if method == "POST" else None)
            check(s == 403, "the metrics token may not %s %s" % (method, path), s, d)

        # ---- an agent given the same token ----
        join_file = os.path.join(tmp, "join.token")
        scrape_file = os.path.join(tmp, "scrape.token")
        with open(join_file, "w") as f:
            f.write(p.join_token + "\n")
        with open(scrape_file, "w") as f:
            f.write(scrape_token + "\n")
        a1 = agent("mauth-1", p.base, join_file, "--metrics-token-file", scrape_file)
        for token, why in ((None, "no token"), (alice.token, "a user's token"),
                           (p.join_token, "the join token")):
            s, body = agent_scrape(a1.port, token)
            check(s == 401 and "DCGM" not in body, "the agent refuses " + why, s, body[:300])
        s, body = agent_scrape(a1.port, scrape_token)
        check(s == 200 and "DCGM_FI_DEV_GPU_UTIL" in body, "the agent serves the metrics token",
              s, body[:300])

        # ---- an agent with --metrics-auth none ----
        a2 = agent("mauth-2", p.base, join_file, "--metrics-token-file", scrape_file,
                   "--metrics-auth", "none")
        s, body = agent_scrape(a2.port, None)
        check(s == 200 and "DCGM_FI_DEV_GPU_UTIL" in body and "tenant=" not in body
              and "gpupool_job" not in body and "gpupool_slice_" not in body,
              "an open agent page without job labels", s, body[:2000])

    # ---- metrics.auth off: pool-wide figures only without a token ----
    with Pool(gpupoold, args + ["--metrics-auth", "false"]) as p:
        alice, scrape_token = populate(p)
        s, text = p.client(None).get("/metrics")
        check(s == 200 and 'gpupool_jobs{state="Pending"} 1' in text,
              "an anonymous scrape counts jobs by state", s, str(text)[:2000])
        for word in ("tenant=", "queue=", "team-a", "batch", "secret-training-run",
                     "gpupool_quota_"):
            check(word not in text, "no %s in an anonymous scrape" % word, text)
        s, sd = p.client(None).get("/v1/sd/prometheus")
        check(s == 200 and isinstance(sd, list), "an anonymous discovery", s, sd)
        s, text = p.client(scrape_token).get("/metrics")
        check(s == 200 and 'tenant="team-a"' in text and 'queue="batch"' in text,
              "the metrics token still reads the labels", s, str(text)[:2000])
        s, d = p.client("gpm_not-a-token").get("/metrics")
        check(s == 401, "a wrong token is refused even when the page is open", s, d)
        s, d = alice.get("/metrics")
        check(s == 403, "a user's token does not unlock the labels", s, d)
        check(p.stop() == 0, "gpupoold exits cleanly", p.read_log()[-3000:])
finally:
    for a in agents:
        check(a.stop() == 0, "agent %s exits cleanly" % a.node, a.log()[-3000:])
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
