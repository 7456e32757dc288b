# Integration tests of the gpupool program: bash scripts run the built binary against the small
# synthetic traces in tests/fixtures/sim, each in its own temporary directory. Included from
# tests/CMakeLists.txt; `ctest -L integ` runs them (the ASan build too, so they stay fast).
set(GP_INTEG_FIXTURES ${CMAKE_SOURCE_DIR}/tests/fixtures/sim)
foreach(script cli sim_csv sim_out sim_errors)
    add_test(NAME integ_${script}
             COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/${script}.sh $<TARGET_FILE:gpupool>
                     ${GP_INTEG_FIXTURES})
    set_tests_properties(integ_${script} PROPERTIES LABELS integ TIMEOUT 60)
endforeach()

# Reproduction of published figures on the real trace (shared data beside the repository).
set(GP_TRACE_DATA ${CMAKE_SOURCE_DIR}/../shared/data/alibaba-gpu-v2023)
add_test(NAME integ_sim_reproduce
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/sim_reproduce.sh $<TARGET_FILE:gpupool>
                 ${GP_INTEG_FIXTURES} ${GP_TRACE_DATA})
set_tests_properties(integ_sim_reproduce PROPERTIES LABELS integ TIMEOUT 300)

# The controller: a real gpupoold on 127.0.0.1 with SQLite in a temporary directory, driven
# over HTTP by Python scripts (tests/integ/ctl/pool.py starts and stops it).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
foreach(script ctl_auth ctl_badinput ctl_idempotent ctl_quota ctl_gang ctl_preempt
               ctl_runtime ctl_backfill ctl_restart ctl_tls ctl_daemon ctl_volumes
               ctl_longpoll ctl_faults)
    add_test(NAME integ_${script}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/${script}.py
                     $<TARGET_FILE:gpupoold>)
    set_tests_properties(integ_${script} PROPERTIES LABELS integ TIMEOUT 180
                         SKIP_RETURN_CODE 77)
endforeach()

# Jobs that can never run (an unknown model or MIG profile, more GPUs than a node has, NVLink,
# a gang too large, quotas) refused at submit unless allowed to wait, then Pending saying why;
# GPU models by short names in submit, quotas, scheduler.model_cost and prices.
add_test(NAME integ_ctl_unschedulable
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_unschedulable.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool>)
set_tests_properties(integ_ctl_unschedulable PROPERTIES LABELS integ TIMEOUT 180)

# The audit log: one record per change, no change without its record, kill -9; gpupool audit.
add_test(NAME integ_ctl_audit
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_audit.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool>)
set_tests_properties(integ_ctl_audit PROPERTIES LABELS integ TIMEOUT 180)

# The server commands against a real gpupoold (127.0.0.1, a free port, a temp data directory).
add_test(NAME integ_ctl_cli
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ctl_cli.sh $<TARGET_FILE:gpupool>
                 $<TARGET_FILE:gpupoold>)
set_tests_properties(integ_ctl_cli PROPERTIES LABELS integ TIMEOUT 120)

# gpupool-run, the per-replica supervisor: real jobs (sh, sleep) in a temporary directory.
add_test(NAME integ_run_supervise
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run_supervise.sh $<TARGET_FILE:gpupool-run>)
set_tests_properties(integ_run_supervise PROPERTIES LABELS integ TIMEOUT 180)

# A whole pool on this machine: gpupool up, agents over the mock NVML, real supervisors and
# processes (needs gpupoold, gpupool-agent, gpupool-run and the mock library built).
add_test(NAME integ_e2e_agent
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_agent.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_e2e_agent PROPERTIES LABELS integ TIMEOUT 300)

# kill -9 of gpupoold during 1,000 concurrent idempotent submits on a gpupool up pool: every
# acknowledged job exists once, allocations stay consistent, agents and running jobs carry on.
add_test(NAME integ_ctl_crash
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_crash.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_ctl_crash PROPERTIES LABELS integ TIMEOUT 300)

# The agent's GPU memory watch: a fractional job whose processes stay above their GPU memory
# limit (the mock's control file) fails with the reason; others are left alone.
add_test(NAME integ_e2e_memwatch
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_memwatch.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_e2e_memwatch PROPERTIES LABELS integ TIMEOUT 180)

# Every shape of GPU fraction (memory + cores, memory only, milli only) runs with libgpushare and
# the limits derived from its request; compute_policy from the job or the operator's default.
add_test(NAME integ_e2e_fractions
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_fractions.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_e2e_fractions PROPERTIES LABELS integ TIMEOUT 180)

# The node health check: `gpupool-agent check` over the mock NVML with injected faults; and a
# running agent's heartbeats (health on request and periodic, replicas' idle_ms) as a small fake
# controller records them.
foreach(script agent_check agent_health)
    add_test(NAME integ_${script}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/${script}.py
                     $<TARGET_FILE:gpupool-agent> $<TARGET_FILE:gpupool-nvml-mock>
                     ${CMAKE_SOURCE_DIR}/deploy/inventories)
    set_tests_properties(integ_${script} PROPERTIES LABELS integ TIMEOUT 180)
endforeach()

# The agent's /metrics (dcgm-exporter's names, slices, promtool) and its heartbeats' per-replica
# util, with a real gpupoold, a whole-GPU and a fractional job over the mock NVML.
add_test(NAME integ_agent_metrics
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/agent_metrics.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories)
set_tests_properties(integ_agent_metrics PROPERTIES LABELS integ TIMEOUT 180)

# Node identity: a join token registers only new names, an agent token only its own node; each
# registration revokes the node's older credentials; a restarted agent re-registers as itself.
add_test(NAME integ_ctl_node_identity
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_node_identity.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_ctl_node_identity PROPERTIES LABELS "integ;security" TIMEOUT 240)

# Secret env values: sealed in the store, hidden in every answer, opened only for the node's own
# agent, seen by the job's process; a moved or changed sealed value is refused; the key file.
add_test(NAME integ_ctl_secrets
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_secrets.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories)
set_tests_properties(integ_ctl_secrets PROPERTIES LABELS "integ;security" TIMEOUT 240)

# The API's request limits (body, head, nesting depth, slow clients, per-tenant rate limits) and
# tenant isolation walked over every documented route, against a real gpupoold.
foreach(script ctl_limits ctl_isolation)
    add_test(NAME integ_${script}
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/${script}.py
                     $<TARGET_FILE:gpupoold>)
    set_tests_properties(integ_${script} PROPERTIES LABELS integ TIMEOUT 180)
endforeach()

# Faults end to end: XIDs through the mock, a killed agent, checkpoint directories.
add_test(NAME integ_e2e_faults
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_faults.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_e2e_faults PROPERTIES LABELS integ TIMEOUT 240)

# Idle reclamation through heartbeats: jobs below their idle_utilization for idle_timeout stop.
add_test(NAME integ_ctl_idle
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_idle.py
                 $<TARGET_FILE:gpupoold>)
set_tests_properties(integ_ctl_idle PROPERTIES LABELS "integ;tsan" TIMEOUT 120)

# Metering and billing: usage records against the jobs' events, exact to the cent across
# groupings, a kill -9 in the middle, the ledger's check at start, tenant scoping, and
# gpupool usage as CSV, JSON and xlsx.
add_test(NAME integ_ctl_usage
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_usage.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool>)
set_tests_properties(integ_ctl_usage PROPERTIES LABELS integ TIMEOUT 180)

# Prometheus: the controller's /metrics and service discovery with agents played by the test
# (promtool checks the text; scrapes race the committer and request handlers, so it also runs
# under ThreadSanitizer).
add_test(NAME integ_ctl_metrics
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_metrics.py
                 $<TARGET_FILE:gpupoold>)
set_tests_properties(integ_ctl_metrics PROPERTIES LABELS "integ;tsan" TIMEOUT 180)

# Observability end to end: `gpupool up` with real agents, a real Prometheus discovering and
# scraping them with the alert rules loaded, a real Alertmanager taking the rules' and the
# controller's alerts; idle reclamation through the mock NVML's utilisation (skipped when
# Prometheus or Alertmanager is missing, except in CI).
add_test(NAME integ_e2e_observe
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_observe.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_e2e_observe PROPERTIES LABELS integ TIMEOUT 300
                     SKIP_RETURN_CODE 77)

# Alerting: the controller's alerts reach a real Alertmanager (skipped without one); the
# Prometheus rules pass promtool's check and their unit tests; docs/alerts.md is what
# scripts/alerts_doc.py writes from the rules; the Grafana dashboard's queries and the rules'
# expressions name only known, documented metrics.
add_test(NAME integ_ctl_alertmanager
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_alertmanager.py
                 $<TARGET_FILE:gpupoold>)
set_tests_properties(integ_ctl_alertmanager PROPERTIES LABELS integ TIMEOUT 240
                     SKIP_RETURN_CODE 77)
set(GP_RULES ${CMAKE_SOURCE_DIR}/deploy/prometheus/gpupool-rules.yaml)
find_program(GP_PROMTOOL promtool)
if(GP_PROMTOOL)
    add_test(NAME prometheus_rules_check COMMAND ${GP_PROMTOOL} check rules ${GP_RULES})
    add_test(NAME prometheus_rules_test
             COMMAND ${GP_PROMTOOL} test rules
                     ${CMAKE_SOURCE_DIR}/deploy/prometheus/gpupool-rules.test.yaml)
    set(GP_PROMTOOL_ARG --promtool ${GP_PROMTOOL})
else()
    # Counted as skipped, not passed, where promtool is missing (scripts/deps.sh installs it).
    foreach(t prometheus_rules_check prometheus_rules_test)
        add_test(NAME ${t} COMMAND sh -c "echo promtool not found; exit 77")
        set_tests_properties(${t} PROPERTIES SKIP_RETURN_CODE 77)
    endforeach()
endif()
set_tests_properties(prometheus_rules_check prometheus_rules_test PROPERTIES LABELS integ
                     TIMEOUT 60)
add_test(NAME alerts_doc_current
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/scripts/alerts_doc.py
                 --rules ${GP_RULES} ${GP_PROMTOOL_ARG} --check ${CMAKE_SOURCE_DIR}/docs/alerts.md)
add_test(NAME grafana_dashboard
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/grafana_dashboard.py
                 ${CMAKE_SOURCE_DIR}/deploy/grafana/gpupool-dashboard.json
                 ${CMAKE_SOURCE_DIR}/docs/metrics.md --rules ${GP_RULES})
set_tests_properties(alerts_doc_current grafana_dashboard PROPERTIES LABELS unit TIMEOUT 60)

# What the web dashboard needs of gpupoold: /ui's static files (content types, security headers,
# traversal refused, ui.dir none and the installed layout), GET /v1/alerts with tenant scoping,
# and usage reports as CSV (the CLI's bytes) and xlsx files.
add_test(NAME integ_ctl_ui_api
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_ui_api.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool>)
set_tests_properties(integ_ctl_ui_api PROPERTIES LABELS integ TIMEOUT 180)

# What the CLI says of nodes and waiting jobs: drained GPUs, scheduled drains, cordon, fencing and
# failed checks in `get nodes` and `describe node`; maintenance and quota reasons in their units.
add_test(NAME integ_ctl_cli_truth
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_cli_truth.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool>)
set_tests_properties(integ_ctl_cli_truth PROPERTIES LABELS integ TIMEOUT 180)

# gpupool up and down: missing parents of the data directory, agents on free ports beside a
# taken one, a failing up stopping what it started, down after processes restarted by hand.
add_test(NAME integ_e2e_up
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_up.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_e2e_up PROPERTIES LABELS integ TIMEOUT 240)

# One gpupoold per data directory: the lock, its holder's pid, a second instance refused.
add_test(NAME integ_ctl_datalock
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_datalock.py
                 $<TARGET_FILE:gpupoold>)
set_tests_properties(integ_ctl_datalock PROPERTIES LABELS integ TIMEOUT 120)

# gpupool submit without --name (a generated name) and get jobs' defaults (active jobs, newest
# first; --all-states, --order) against a real gpupoold.
add_test(NAME integ_ctl_jobs_cli
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/ctl_jobs_cli.sh $<TARGET_FILE:gpupool>
                 $<TARGET_FILE:gpupoold>)
set_tests_properties(integ_ctl_jobs_cli PROPERTIES LABELS integ TIMEOUT 120)

# The GPU instances of MIG GPUs in registrations and heartbeats (bad lists refused, stored across
# a restart) guide MIG placement; the agents are played by the test.
add_test(NAME integ_ctl_mig
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_mig.py
                 $<TARGET_FILE:gpupoold>)
set_tests_properties(integ_ctl_mig PROPERTIES LABELS integ TIMEOUT 120)

# MIG placement against the instances that exist, on a gpupool up pool over the mock NVML: idle
# instances reused (their UUIDs unchanged), a new one only where it destroys the least, never
# over an instance in use outside gpupool; the Scheduled event says which.
add_test(NAME integ_e2e_mig
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_mig.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_e2e_mig PROPERTIES LABELS integ TIMEOUT 180)

# Replica records a job tampered with (garbled status.json and supervisor.pid, a forged
# supervisor.pid, a FIFO): on a `gpupool up` pool the agent starts no second supervisor and a
# cancel still stops the job through its supervisor.
add_test(NAME integ_e2e_records
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_records.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_e2e_records PROPERTIES LABELS integ TIMEOUT 180)

# Distributed launchers with the real tools: torchrun (python3-torch, gloo on the CPU) in each
# replica of a 2 x 2-GPU gang forms one 4-process job whose all-reduce sums right; mpirun -np 16
# over a 2 x 8-GPU gang's hostfile starts 16 ranks (skipped without the tools, except in CI).
add_test(NAME integ_e2e_distributed
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_distributed.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_e2e_distributed PROPERTIES LABELS integ TIMEOUT 300
                     SKIP_RETURN_CODE 77)

# Jobs from images, controller side (the agents played by the test): the spec's image, placement
# only on nodes with a container runtime (refused at submit, or waiting, when none), tenants'
# registry credentials (roles, never returned, only in the desired document of the node running
# the replica, for its agent), Pulling/Pulled events, ImagePullFailed, the nodes' runtime and
# image cache, jobs.allow_host_rootfs, and the CLI (submit --image, tenant registry, describe
# node, get nodes -o wide).
add_test(NAME integ_ctl_images
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_images.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool>)
set_tests_properties(integ_ctl_images PROPERTIES LABELS integ TIMEOUT 180)

# GPUs through CDI: the agent writes STATE/cdi/gpupool.json at start (0644, a device per GPU and
# MIG UUID with their nodes under --dev-root, capability nodes from --mig-minors) and again when
# MIG devices come and go, before a replica on a new one starts; published with --cdi-publish.
add_test(NAME integ_agent_cdi
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/agent_cdi.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories)
set_tests_properties(integ_agent_cdi PROPERTIES LABELS integ TIMEOUT 180)

# Real podman containers given CDI devices over fake nodes (mknod) and a fake driver: a container
# sees and opens exactly its GPU (or MIG device), whatever CUDA_VISIBLE_DEVICES says, and the
# driver's files read-only (skipped without podman or root, except in CI).
add_test(NAME integ_cdi_podman
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cdi_podman.py
                 $<TARGET_FILE:gpupool-agent> $<TARGET_FILE:gpupool-nvml-mock>)
set_tests_properties(integ_cdi_podman PROPERTIES LABELS "integ;security" TIMEOUT 120
                     SKIP_RETURN_CODE 77)

# Jobs in podman sandboxes, with the real podman (storage of each test's own), a local
# docker-registry on 127.0.0.1 and images built from busybox-static: gpupool-run directly (what a
# job sees and cannot do, stops, pulls with progress, failures and credentials); the agent with a
# fake controller (runtime, Pulling, ImagePullFailed, kill -9, lost replicas, the image cache);
# a gpupool up pool (what a job sees of the node, kill -9 of the agent, cancel, images).
add_test(NAME integ_run_sandbox
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/run_sandbox.py
                 $<TARGET_FILE:gpupool-run>)
add_test(NAME integ_agent_sandbox
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/agent_sandbox.py
                 $<TARGET_FILE:gpupool-agent> $<TARGET_FILE:gpupool-nvml-mock>
                 ${CMAKE_SOURCE_DIR}/deploy/inventories)
add_test(NAME integ_e2e_sandbox
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_sandbox.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_run_sandbox integ_agent_sandbox integ_e2e_sandbox PROPERTIES
                     LABELS "integ;security" TIMEOUT 300)

# Tenants' host ids: two tenants' jobs (over the host root and from an image) on one node run
# under uids of their own tenant's range (a user namespace for image jobs).
add_test(NAME integ_e2e_tenant_ids
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_tenant_ids.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_e2e_tenant_ids PROPERTIES LABELS "integ;security" TIMEOUT 300)

# A fraction in the sandbox: libgpushare's region at /run/gpupool (limits read-only), the fake
# driver's allocations held to the limit, an env -i process included.
add_test(NAME integ_run_sandbox_share
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/run_sandbox_share.py
                 $<TARGET_FILE:gpupool-run> $<TARGET_FILE:gpushare> $<TARGET_FILE:shim_test>)
set_tests_properties(integ_run_sandbox_share PROPERTIES LABELS "integ;security" TIMEOUT 300
                     SKIP_RETURN_CODE 77)

# A sandboxed replica gets exactly its GPUs through CDI: real podman over fake nodes (mknod),
# the spec in /etc/cdi of a private mount namespace; gpupool-run with cdi_devices in its run spec
# and an agent publishing there (a fake controller) give GPU 1's replica only GPU 1's node; none
# without cdi_devices (skipped without podman or root, except in CI).
add_test(NAME integ_cdi_devices
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/cdi_devices.py
                 $<TARGET_FILE:gpupool-run> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock>)
set_tests_properties(integ_cdi_devices PROPERTIES LABELS "integ;security" TIMEOUT 180
                     SKIP_RETURN_CODE 77)

# make demo: scripts/demo.sh builds its image (again when stale, not when up to date) and runs the
# gang and the two-GPU job from it, the quarter over the host root, on a pool of its own
# (podman storage of the test's own; skipped without podman or root, except in CI).
add_test(NAME integ_e2e_demo
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_demo.py
                 $<TARGET_FILE:gpupool> ${CMAKE_SOURCE_DIR})
set_tests_properties(integ_e2e_demo PROPERTIES LABELS integ TIMEOUT 300 SKIP_RETURN_CODE 77)

# The attacks on a shared node replayed end to end: on one node of a gpupool up pool (the real podman,
# CDI over fake GPU nodes), tenant A's job tries each attack on tenant B's (files, tokens,
# processes, a forged heartbeat, the read-only volume, a user namespace, every GPU, its own
# records) and each must fail; B runs on untouched (skipped without podman or root, except in
# CI). `ctest -L security` runs it with the sandbox, CDI and libgpushare tests.
add_test(NAME integ_e2e_security
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_security.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_e2e_security PROPERTIES LABELS "integ;security" TIMEOUT 240
                     SKIP_RETURN_CODE 77)

# Policy: grants of priority classes and queues to tenants (API and CLI), and who
# reads the metrics: one metrics token for the controller and the agents, pool-wide figures only
# for anonymous scrapers when metrics.auth is off.
add_test(NAME integ_ctl_policy
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_policy.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool>)
set_tests_properties(integ_ctl_policy PROPERTIES LABELS "integ;security" TIMEOUT 120)
add_test(NAME integ_ctl_metrics_auth
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_metrics_auth.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories)
set_tests_properties(integ_ctl_metrics_auth PROPERTIES LABELS "integ;security" TIMEOUT 180)
# High availability, the clients' side: gpupool and gpupool-agent given several controllers
# follow the leader past dead ports and followers (307, 503), resend a lost submit with its
# Idempotency-Key, and never send anything to a host outside their list (fake controllers).
add_test(NAME integ_ctl_failover_clients
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_failover_clients.py
                 $<TARGET_FILE:gpupool> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories)
set_tests_properties(integ_ctl_failover_clients PROPERTIES LABELS integ TIMEOUT 180)
# Strict input at the edge: heartbeat values, 414/413, non-HTTP first bytes.
add_test(NAME integ_ctl_strict_input
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_strict_input.py
                 $<TARGET_FILE:gpupoold>)
set_tests_properties(integ_ctl_strict_input PROPERTIES LABELS "integ;security" TIMEOUT 180)
# High availability, the controllers' side: two and three gpupoold on one PostgreSQL (started by
# the test), real agents and the CLI given every controller; kill -9 of the leader, the old
# leader back as a follower, a PostgreSQL restart, a deposed leader (SIGSTOP) that cannot commit.
add_test(NAME integ_ctl_ha
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_ha.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories
                 ${CMAKE_SOURCE_DIR}/tests/pg/pg_fixture.sh)
set_tests_properties(integ_ctl_ha PROPERTIES LABELS integ TIMEOUT 300)

# gpupoold on PostgreSQL: a server the test starts (tests/pg/pg_fixture.sh), two real agents over
# the mock NVML, kill -9 of gpupoold, and PostgreSQL stopped and started under it.
add_test(NAME integ_ctl_store_pg
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_store_pg.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories
                 ${CMAKE_SOURCE_DIR}/tests/pg/pg_fixture.sh)
set_tests_properties(integ_ctl_store_pg PROPERTIES LABELS integ TIMEOUT 300)

# The controller's proxy to a notebook (HTTP, streaming, cookies, WebSocket) through a real
# agent's tunnel into the job's own network namespace; who may pass and what the job never sees.
add_test(NAME integ_ctl_proxy
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_proxy.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_ctl_proxy PROPERTIES LABELS "integ;security" TIMEOUT 240)

# A notebook in its podman sandbox (slirp4netns, no host loopback) reached through the
# controller's proxy and the agent's tunnel into the container's network namespace.
add_test(NAME integ_e2e_notebook_sandbox
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_notebook_sandbox.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_e2e_notebook_sandbox PROPERTIES LABELS "integ;security" TIMEOUT 300)

# Debian's Jupyter notebook server through the proxy: its pages and API under the job's prefix,
# a kernel started and run over its WebSocket, whose traffic keeps the notebook from idling.
add_test(NAME integ_ctl_jupyter
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_jupyter.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories)
set_tests_properties(integ_ctl_jupyter PROPERTIES LABELS integ TIMEOUT 240)

# Jupyter in an image built here from Debian's packages, the pool's default notebook, run in its
# podman sandbox: Chromium runs a cell through the proxy, another tenant gets 404, the idle
# notebook is suspended and `gpupool notebook open` resumes it with its files.
add_test(NAME integ_e2e_notebook
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_notebook.py
                 $<TARGET_FILE:gpupool>)
# (label e2e only: it needs the built dashboard, which the sanitizer builds leave out)
set_tests_properties(integ_e2e_notebook PROPERTIES LABELS e2e TIMEOUT 420 SKIP_RETURN_CODE 77)
# Per-job and per-tenant history: a real agent over the mock NVML (--runtime none) reports its
# replicas' GPU utilisation and memory; GET /v1/jobs/{id}/metrics follows them, per replica and
# for the job, with steps and downsampling; tenants' allocation; bad input 400, other tenants 404.
add_test(NAME integ_ctl_history
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_history.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories)
set_tests_properties(integ_ctl_history PROPERTIES LABELS integ TIMEOUT 180)
# Services, the controller's side (agents simulated by heartbeats): replica jobs, endpoints,
# liveness restarts, rolling update keeping the count ready, a stalled rollout, autoscaling on a
# Prometheus metric, a restart, cancel; bad input.
add_test(NAME integ_ctl_service
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_service.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool>)
set_tests_properties(integ_ctl_service PROPERTIES LABELS integ TIMEOUT 180)
# Services with a real agent (--runtime none): HTTP and exec probes, liveness restarts, a killed
# replica back, autoscaling on the gauge the agent scrapes.
add_test(NAME integ_ctl_service_agent
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_service_agent.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories)
set_tests_properties(integ_ctl_service_agent PROPERTIES LABELS integ TIMEOUT 300)
# Where replicas may go, with three real agents labelled by --labels: node_selector, taints set
# with the CLI (NoSchedule, NoExecute eviction, kept across restarts), spread, anti_affinity,
# the pending reason, `get jobs -l` and `cancel -l` with two tenants, bad input.
add_test(NAME integ_ctl_placement
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_placement.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_ctl_placement PROPERTIES LABELS integ TIMEOUT 300)
# A service in podman sandboxes (gpupool up, the real podman): HTTP readiness inside each
# container's namespace, balancing over both, an exec liveness probe through podman exec.
add_test(NAME integ_e2e_service_sandbox
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_service_sandbox.py
                 $<TARGET_FILE:gpupool>)
set_tests_properties(integ_e2e_service_sandbox PROPERTIES LABELS integ TIMEOUT 300)
# Job arrays (at most %MAX children at once, each seeing its index), after_ok dependencies (run
# after success, DependencyFailed after a failure, another tenant's job refused as unknown),
# shm_size_mib to the agent and the job, and gpupool sbatch, with a real agent (--runtime none).
add_test(NAME integ_ctl_arrays
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_arrays.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories)
set_tests_properties(integ_ctl_arrays PROPERTIES LABELS integ TIMEOUT 300)
# gpupool get's kubectl forms: -o name, jsonpath, custom-columns for every kind, their errors;
# get jobs|nodes --watch (polling) printing a line per change.
add_test(NAME integ_ctl_cli_get
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_cli_get.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool>)
set_tests_properties(integ_ctl_cli_get PROPERTIES LABELS integ TIMEOUT 180)
# Contexts for several clusters (gpupool config ...; --context) and --cacert for the CLI and the
# agent against a TLS gpupoold.
add_test(NAME integ_ctl_cli_contexts
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_cli_contexts.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories)
set_tests_properties(integ_ctl_cli_contexts PROPERTIES LABELS integ TIMEOUT 180
                     SKIP_RETURN_CODE 77)
# The CLI's daily commands with a real agent (--runtime none): bash completion (commands, flags,
# job and node names), top nodes|jobs, logs --tail/--since/--timestamps, every replica, -f.
add_test(NAME integ_ctl_cli_ops
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_cli_ops.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories)
set_tests_properties(integ_ctl_cli_ops PROPERTIES LABELS integ TIMEOUT 240)
# gpupool apply -f / delete -f of Kubernetes manifests on a `gpupool up` pool (podman, a local
# registry): every shared manifest stored field by field or refused with its reason, server and
# client dry runs, --strict, unchanged re-applies, a refused file applying nothing, and a
# manifest of our own run to completion (its environment, volume and GPU as the job saw them).
add_test(NAME integ_e2e_apply
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/e2e_apply.py
                 $<TARGET_FILE:gpupool> ${CMAKE_SOURCE_DIR}/../shared/k8s-manifests)
set_tests_properties(integ_e2e_apply PROPERTIES LABELS integ TIMEOUT 420)
# Privileged jobs only for a tenant an admin allows (allow_privileged): refused (403) with the
# message, dry runs too; only an admin grants it (stored, audited, get tenants -o wide); then the
# desired replica carries privileged and the job runs (--runtime none: as the job user); withdrawn:
# running jobs go on, new ones are refused.
add_test(NAME integ_ctl_privileged
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_privileged.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories)
set_tests_properties(integ_ctl_privileged PROPERTIES LABELS "integ;security" TIMEOUT 240)
# A lean CLI: submit, get, describe and cancel load neither libyaml nor libxlsxwriter
# (LD_DEBUG=files, DT_NEEDED); get -o yaml, submit -f YAML, apply -f and usage -o xlsx load them
# on use and work.
add_test(NAME integ_ctl_cli_lean
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_cli_lean.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool>)
set_tests_properties(integ_ctl_cli_lean PROPERTIES LABELS integ TIMEOUT 120)
# Submits answered by the committer after their commit: 384 concurrent submits of two tenants on
# two server threads, each answered 201 with its own job, all of them stored after a kill -9
# right after the last answer.
add_test(NAME integ_ctl_intake
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_intake.py
                 $<TARGET_FILE:gpupoold>)
set_tests_properties(integ_ctl_intake PROPERTIES LABELS "integ;tsan" TIMEOUT 180)
# A replica is reported Running as soon as it starts: an agent that heartbeats every 30 s has its
# started replicas Running at the controller within 10 s, a few starts in a few heartbeats.
add_test(NAME integ_ctl_start_report
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_start_report.py
                 $<TARGET_FILE:gpupoold> $<TARGET_FILE:gpupool-agent>
                 $<TARGET_FILE:gpupool-nvml-mock> ${CMAKE_SOURCE_DIR}/deploy/inventories)
set_tests_properties(integ_ctl_start_report PROPERTIES LABELS integ TIMEOUT 180)
# A scheduling cycle with more placements than one of its transactions holds: committed in
# several transactions, all in one cycle, with a reader answered between them.
add_test(NAME integ_ctl_sched_batches
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_sched_batches.py
                 $<TARGET_FILE:gpupoold>)
set_tests_properties(integ_ctl_sched_batches PROPERTIES LABELS integ TIMEOUT 300)
# Heartbeats that change nothing the store keeps are applied in memory (no transaction, no
# committer group: gpupool_heartbeats_total{path}, gpupool_commit_groups_total); a replica state
# change, a drain or a job's end go through the store and survive kill -9; a node's agent
# reporting another node's replicas changes nothing.
add_test(NAME integ_ctl_heartbeat_memory
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_heartbeat_memory.py
                 $<TARGET_FILE:gpupoold>)
set_tests_properties(integ_ctl_heartbeat_memory PROPERTIES LABELS integ TIMEOUT 120)
# A leader on PostgreSQL places a 2,000-job backlog and moves the jobs of 100 lost nodes under a
# short lease (800 ms) without losing it:
# a cycle's transaction commits what it wrote once its time is spent (ctl_cycle_txn_budget_ms).
add_test(NAME integ_ctl_pg_backlog
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/ctl/ctl_pg_backlog.py
                 $<TARGET_FILE:ctl_bench> $<TARGET_FILE:gpupoold>)
set_tests_properties(integ_ctl_pg_backlog PROPERTIES LABELS integ TIMEOUT 300 FIXTURES_REQUIRED pg
                     ENVIRONMENT GP_TEST_PG_URL_FILE=${GP_PG_URL_FILE})
