"""A sandboxed replica gets exactly its GPUs through CDI, with the real podman.

Fake device nodes made with mknod (character majors no driver registered here, as
cdi_podman.py does), a mock NVML inventory of two GPUs pointing at them, the agent's generator
(`gpupool-agent cdi --dev-root`) writing the spec, published in /etc/cdi of a private mount
namespace (an overlay over /etc: the host's /etc is not touched; podman 4.3 reads specs only
from /etc/cdi and /var/run/cdi), and gpupool-run started in that namespace on a run spec:

- a replica given GPU 1 with cdi_devices: its container has /dev/nvidia1 (GPU 1's numbers) and
  nvidiactl, nvidia-uvm, nvidia-uvm-tools, and no /dev/nvidia0, whatever it sets in
  CUDA_VISIBLE_DEVICES; opening its own node reaches the (absent) driver: ENXIO, allowed by the
  device cgroup; the supervisor's log names the device;
- the same replica without cdi_devices (a node whose spec podman does not read): no GPU node at
  all, and the supervisor's log says the container gets no GPU device;
- a gpupool-agent (a fake controller hands it the replica on GPU 1), started in its own private
  mount namespace with an overlay over /etc and --cdi-publish /etc/cdi: it publishes its spec
  there, marks the replica's run spec cdi_devices, and the replica's container again has
  exactly GPU 1's node and the shared ones; the host's /etc/cdi never gets the spec.
Skipped (77) without podman, runc or crun, unshare or root, except under CI=true.
Arguments: gpupool-run, gpupool-agent, libgpupool-nvml-mock.so.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "ctl"))
from fakectl import FakeController  # noqa: E402
from oci import (Storage, fake_gpu_nodes, free_char_majors, gpu_inventory,  # noqa: E402
                 private_etc_cdi)
from pool import check  # noqa: E402

run_bin, agent_bin, mock = (os.path.abspath(a) for a in sys.argv[1:4])
GPUS = ["GPU-c0d1e2f3-0000-4000-8000-00000000ce00", "GPU-c0d1e2f3-0000-4000-8000-00000000ce01"]


def skip(why):
    print("cdi_devices: skipped:", why)
    sys.exit(1 if os.environ.get("CI") == "true" else 77)


for tool in ("podman", "unshare"):
    if not shutil.which(tool):
        skip(tool + " not found")
if not (shutil.which("runc") or shutil.which("crun")):
    skip("runc or crun not found")
if os.geteuid() != 0:
    skip("needs root (mknod, rootful podman, a mount namespace)")


# Outside /tmp (a sandbox has a /tmp of its own), readable by anyone.
base = tempfile.mkdtemp(prefix="gpupool-cdi-devices.",
                        dir=os.path.dirname(os.path.dirname(run_bin)))
os.chmod(base, 0o755)
st = None
try:
    st = Storage(base)
    major = free_char_majors(1)[0]
    dev = os.path.join(base, "dev")
    fake_gpu_nodes(dev, major, len(GPUS))
    inventory = os.path.join(base, "inventory.yaml")
    gpu_inventory(inventory, GPUS)
    spec_dir = os.path.join(base, "cdi")
    p = subprocess.run([agent_bin, "cdi", "--nvml-library", mock, "--dev-root", dev,
                        "--output-dir", spec_dir], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, GPUPOOL_NVML_MOCK_INVENTORY=inventory))
    check(p.returncode == 0, "gpupool-agent cdi writes the spec", p.stdout, p.stderr)

    def replica(name, doc):
        """gpupool-run on doc in a private mount namespace whose /etc/cdi holds the spec; its
        status, stdout and supervisor log."""
        spec = os.path.join(base, name + ".json")
        with open(spec, "w") as f:
            json.dump(dict({"job": 70, "replica": 0, "epoch": 1}, **doc), f)
        state = os.path.join(base, name)
        publish = ["sh", "-c", 'cp %s/gpupool.json /etc/cdi/ && exec "$@"' % spec_dir, "sh"]
        env = dict(st.env)
        env.pop("GPUPOOL_RUNTIME", None)
        p = subprocess.run(private_etc_cdi(base, name) + publish +
                           [run_bin, "--state-dir", state, "--spec", spec, "--grace", "5"],
                           capture_output=True, text=True, timeout=120, env=env)
        check(p.returncode == 0, name + ": gpupool-run exit 0", p.returncode, p.stdout,
              p.stderr)

        def read(f):
            try:
                with open(os.path.join(state, f), errors="replace") as fh:
                    return fh.read()
            except OSError:
                return ""
        return json.loads(read("status.json") or "{}"), read("stdout.log"), \
            read("supervisor.log") + p.stderr

    script = """
export CUDA_VISIBLE_DEVICES=%s NVIDIA_VISIBLE_DEVICES=all
ls /dev | grep nvidia | sort | sed 's/^/node /'
stat -c 'numbers %%t:%%T' /dev/nvidia1 2>&1
ls /dev/nvidia0 2>&1 | sed 's/^/other /'
cat /dev/nvidia1 2>&1 | head -1 | sed 's/^/own /'
echo "visible $CUDA_VISIBLE_DEVICES"
""" % ",".join(GPUS)
    job = {"gpus": [{"uuid": GPUS[1], "index": 1}], "spec": {"command": ["sh", "-c", script]}}

    def sees_gpu1(who, status, out, log):
        got = out.splitlines()
        check(status.get("state") == "exited" and status.get("exit_code") == 0,
              who + ": GPU 1's replica ran", status, out, log[-3000:])
        check(sorted(ln.split()[-1] for ln in got if ln.startswith("node ")) ==
              ["nvidia-uvm", "nvidia-uvm-tools", "nvidia1", "nvidiactl"],
              who + ": GPU 1's container: exactly its node and the shared ones", out,
              log[-3000:])
        check("numbers %x:1" % major in got, who + ": /dev/nvidia1 is GPU 1's node", out)
        check(any(ln.startswith("other ") and "No such file" in ln for ln in got),
              who + ": no /dev/nvidia0", out)
        check(any(ln.startswith("own ") and "No such device or address" in ln for ln in got),
              who + ": its own GPU: the device cgroup lets it open the node (no driver: ENXIO)",
              out)
        check("visible " + ",".join(GPUS) in got, who + ": whatever CUDA_VISIBLE_DEVICES says",
              out)
        check("device nvidia.com/gpu=" + GPUS[1] in log, who + ": the log names the device",
              log[-3000:])

    sees_gpu1("gpupool-run", *replica("gpu1", dict(job, cdi_devices=True)))

    status, out, log = replica("nocdi", job)
    check(status.get("exit_code") == 0, "the replica without cdi_devices ran", status, log[-3000:])
    check(not [ln for ln in out.splitlines() if ln.startswith("node ")],
          "without cdi_devices: no GPU node", out)
    check("the container gets no GPU device" in log, "the log says so", log[-3000:])


    # ---- the agent: publishes to /etc/cdi of its namespace, marks the replica cdi_devices ----
    agent_dir = os.path.join(base, "agent")
    os.makedirs(agent_dir)
    ctl = FakeController()
    ctl.set("cdi-node", [dict(
        job, job=71, replica=0, epoch=1, name="j71", world_size=1, restart_count=0,
        cpu_milli=0, memory_mib=0, tenant="team-a",
        gpus=[{"index": 1, "uuid": GPUS[1], "milli": 1000, "memory_mib": 81559,
               "mig_start": -1}])])
    token_file = ctl.join_token_file(agent_dir)
    env = dict(st.env, GPUPOOL_NVML_MOCK_INVENTORY=inventory)
    env.pop("GPUPOOL_RUNTIME", None)
    state = os.path.join(agent_dir, "state")
    log_path = os.path.join(agent_dir, "agent.log")
    with open(log_path, "w") as log:
        agent = subprocess.Popen(private_etc_cdi(base, "agent") + [
            agent_bin, "--server", ctl.url, "--join-token-file", token_file, "--state-dir",
            state, "--name", "cdi-node",
            "--nvml-library", mock, "--heartbeat", "200", "--memory-grace", "0", "--grace", "3",
            "--dev-root", dev, "--cdi-publish", "/etc/cdi"], stdout=log, stderr=log, env=env)
    try:
        rdir = os.path.join(state, "replicas", "71-0-1")  # kept while it is desired

        def agent_log():
            with open(log_path, errors="replace") as f:
                return f.read()[-3000:]

        def done():
            try:
                with open(os.path.join(rdir, "status.json")) as f:
                    return json.load(f).get("state") in ("exited", "killed")
            except (OSError, ValueError):
                return False
        deadline = time.time() + 90
        while not done() and agent.poll() is None and time.time() < deadline:
            time.sleep(0.1)
        check(done(), "the agent's replica finished", agent.poll(), agent_log())
        with open(os.path.join(rdir, "spec.json")) as f:
            rspec = json.load(f)
        check(rspec.get("cdi_devices") is True, "the agent marks the replica cdi_devices", rspec)
        with open(os.path.join(rdir, "status.json")) as f:
            status = json.load(f)
        with open(os.path.join(rdir, "stdout.log"), errors="replace") as f:
            out = f.read()
        with open(os.path.join(rdir, "supervisor.log"), errors="replace") as f:
            sup_log = f.read()
        sees_gpu1("the agent", status, out, sup_log)
        check(not os.path.exists("/etc/cdi/gpupool.json") or
              GPUS[1] not in open("/etc/cdi/gpupool.json").read(),
              "the host's /etc/cdi has no spec of ours")
        agent.send_signal(signal.SIGTERM)
        check(agent.wait(timeout=30) == 0, "the agent stops cleanly", agent_log())
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        ctl.close()
finally:
    if st:
        st.close()
    shutil.rmtree(base, ignore_errors=True)
print("cdi_devices: ok")
