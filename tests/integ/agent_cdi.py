"""The agent's CDI spec, end to end: a real gpupoold, a real gpupool-agent over the mock NVML (the
H100 MIG node of deploy/inventories/h100-mig.yaml: GPU 0 with four MIG devices, GPU 1 with seven,
GPU 2 in MIG mode and empty, GPU 3 whole), real gpupool-run supervisors.

- at start the agent writes STATE/cdi/gpupool.json (0644, in a 0755 directory owned by it) and
  the same bytes into its --cdi-publish directory: a device per GPU UUID with /dev/nvidia<minor>
  under --dev-root, a device per MIG UUID with its parent's node and the capability nodes the
  driver's table (--mig-minors) gives its GPU instance and compute instance; the shared control
  nodes; no driver file on the mock (and the log says why);
- a MIG job that needs a new instance (4g.40gb on the empty GPU 2): the spec names the new MIG
  device before the replica starts, and the replica's spec carries cdi_spec_dir;
- another tool destroying an instance (the mock's mig-destroy): the next round drops its device;
  a 7g.80gb job replacing GPU 2's instance: the old device goes, the new one comes;
- a second agent with the defaults (pcie-t4, no flags): /dev paths, nothing published.
Arguments: gpupoold, gpupool-agent (gpupool-run beside it), libgpupool-nvml-mock.so, the
inventories directory.
"""
import glob
import json
import os
import shutil
import stat
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "ctl"))
from mockagent import MockAgent  # noqa: E402
from pool import Pool, check, kill_replica_leftovers, wait  # noqa: E402

gpupoold, agent_bin, mock, inventories = sys.argv[1:5]
tmp = tempfile.mkdtemp(prefix="gpupool-cdi.")
mark = os.path.basename(tmp).replace(".", "-")
nap = "sleep %d" % (600 + sum(map(ord, mark)) % 300)


def mig_minors(path):
    """The driver's table: 9 minors per GPU instance, 15 instances per GPU, after 1 and 2."""
    lines = ["config 1", "monitor 2"]
    for gpu in range(8):
        for gi in range(15):
            base = 3 + gpu * 135 + gi * 9
            lines.append("gpu%d/gi%d/access %d" % (gpu, gi, base))
            lines += ["gpu%d/gi%d/ci%d/access %d" % (gpu, gi, ci, base + 1 + ci)
                      for ci in range(8)]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def cap(gpu, gi, ci=None):
    base = 3 + gpu * 135 + gi * 9
    return base if ci is None else base + 1 + ci


def inventory_uuids(path):
    """GPU UUIDs in order, and {MIG UUID: (gpu, start)} of the inventory file."""
    gpus, migs = [], {}
    for line in open(path):
        if line.strip().startswith("- uuid: GPU-"):
            gpus.append(line.split("uuid: ")[1].strip())
        if "{uuid: MIG-" in line:
            migs[line.split("uuid: ")[1].split(",")[0]] = \
                (len(gpus) - 1, int(line.split("start: ")[1].split("}")[0]))
    return gpus, migs


class Agent(MockAgent):
    """A gpupool-agent over the mock NVML (mockagent.py) and its CDI spec."""

    def __init__(self, node, inventory_file, server, token_file, *flags):
        super().__init__(agent_bin, mock, tmp, node, inventory_file, server, token_file, *flags)

    def spec_path(self):
        return os.path.join(self.state, "cdi", "gpupool.json")

    def spec(self):
        try:
            with open(self.spec_path()) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None


def devices(spec):
    """{name: ["path=hostPath", ...]} of the spec's devices."""
    return {d["name"]: ["%s=%s" % (n["path"], n["hostPath"])
                        for n in d["containerEdits"]["deviceNodes"]]
            for d in (spec or {}).get("devices", [])}



def node(dev, rel):
    return "/dev/%s=%s/%s" % (rel, dev, rel)


agents = []
try:
    dev = os.path.join(tmp, "dev")  # the fake nodes' directory (podman is not run here)
    minors = os.path.join(tmp, "mig-minors")
    published = os.path.join(tmp, "published")
    mig_minors(minors)
    inventory = os.path.join(inventories, "h100-mig.yaml")
    gpus, migs = inventory_uuids(inventory)
    with Pool(gpupoold) as pool:
        token_file = os.path.join(tmp, "join.token")
        with open(token_file, "w") as f:
            f.write(pool.join_token + "\n")
        agent = Agent("cdi-node", inventory, pool.base, token_file, "--dev-root", dev,
                      "--mig-minors", minors, "--cdi-publish", published)
        agents.append(agent)
        admin = pool.admin
        wait("cdi-node registered", lambda: admin.get("/v1/nodes/cdi-node")[0] == 200)
        check(agent.proc.poll() is None, "the agent runs", agent.log()[-3000:])

        # ---- at start: the spec, its modes, its copy ----
        spec = wait("the spec", agent.spec)
        st, dst = os.stat(agent.spec_path()), os.stat(os.path.dirname(agent.spec_path()))
        check(stat.S_IMODE(st.st_mode) == 0o644 and st.st_uid == os.geteuid(),
              "the spec: 0644, the agent's", oct(st.st_mode), st.st_uid)
        check(stat.S_IMODE(dst.st_mode) == 0o755 and dst.st_uid == os.geteuid(),
              "STATE/cdi: 0755, the agent's", oct(dst.st_mode))
        with open(agent.spec_path(), "rb") as a, \
                open(os.path.join(published, "gpupool.json"), "rb") as b:
            check(a.read() == b.read(), "the published copy is the same spec")
        check(spec["cdiVersion"] == "0.5.0" and spec["kind"] == "nvidia.com/gpu",
              "version and kind", spec)
        devs = devices(spec)
        check(sorted(devs) == sorted(gpus + list(migs)),
              "a device per GPU and per MIG device", sorted(devs))
        for i, uuid in enumerate(gpus):
            check(devs[uuid] == [node(dev, "nvidia%d" % i)], "GPU %d's node" % i, devs[uuid])
        # The inventory's instances are GPU instances 1.. in listed order, compute instance 0.
        for uuid, (g, start) in migs.items():
            gi = [u for u, (gg, _) in migs.items() if gg == g].index(uuid) + 1
            want = [node(dev, "nvidia%d" % g),
                    node(dev, "nvidia-caps/nvidia-cap%d" % cap(g, gi)),
                    node(dev, "nvidia-caps/nvidia-cap%d" % cap(g, gi, 0))]
            check(devs[uuid] == want, "MIG %s's nodes" % uuid, devs[uuid], want)
        shared = spec["containerEdits"]
        check(["%s=%s" % (n["path"], n["hostPath"]) for n in shared["deviceNodes"]] ==
              [node(dev, "nvidiactl"), node(dev, "nvidia-uvm"), node(dev, "nvidia-uvm-tools")],
              "the shared control nodes", shared)
        check("mounts" not in shared, "no driver file mounted on the mock", shared)
        check("no driver files mounted: the NVML library loaded (%s) is not the driver's" % mock
              in agent.log(), "the log says why no driver file is mounted", agent.log()[-3000:])

        # ---- a new MIG instance for a job: in the spec before the replica starts ----
        pool.tenant("cdi")

        def submit(name, profile):
            s, d = admin.post("/v1/jobs", {
                "name": name, "tenant": "cdi", "resources": {"mig_profile": profile},
                "command": ["sh", "-c", 'echo "mig=$CUDA_VISIBLE_DEVICES"; %s # %s' % (nap, mark)]})
            check(s == 201, "submit " + name, s, d)
            return d["id"]

        def running(name, jid):
            wait(name + " running", lambda: admin.get("/v1/jobs/" + name)[1]["state"] == "Running",
                 timeout=30)
            out = wait(name + " printed", lambda: [
                open(p).read() for p in glob.glob(os.path.join(
                    agent.state, "replicas", "%d-0-*" % jid, "stdout.log"))
                if "mig=" in open(p).read()], timeout=30)
            rdir = glob.glob(os.path.join(agent.state, "replicas", "%d-0-*" % jid))[0]
            return out[0].split("mig=")[1].split()[0], rdir

        j1 = submit("large", "4g.40gb")
        u1, rdir = running("large", j1)
        check(u1.startswith("MIG-") and u1 not in migs, "a new instance", u1)
        devs = devices(agent.spec())
        check(devs.get(u1) == [node(dev, "nvidia2"),
                               node(dev, "nvidia-caps/nvidia-cap%d" % cap(2, 1)),
                               node(dev, "nvidia-caps/nvidia-cap%d" % cap(2, 1, 0))],
              "the new MIG device in the spec: GPU 2, GPU instance 1, compute instance 0",
              devs.get(u1))
        check(os.stat(agent.spec_path()).st_mtime_ns <=
              os.stat(os.path.join(rdir, "spec.json")).st_mtime_ns,
              "the spec was written before the replica's")
        with open(os.path.join(rdir, "spec.json")) as f:
            rspec = json.load(f)
        check(rspec.get("cdi_spec_dir") == os.path.join(agent.state, "cdi"),
              "the replica's spec names the spec's directory", rspec.get("cdi_spec_dir"))
        check("cdi_devices" not in rspec,
              "published where podman does not read it: no CDI devices for the replica", rspec)

        # ---- another tool destroys an instance: the next round drops its device ----
        gone = [u for u, (g, start) in migs.items() if g == 1 and start == 5][0]
        agent.control("mig-destroy 1 5")
        wait("the destroyed instance's device left out",
             lambda: gone not in devices(agent.spec()))
        devs = devices(agent.spec())
        check(len([u for u in migs if u in devs]) == len(migs) - 1 and u1 in devs,
              "every other MIG device stays", sorted(devs))
        with open(agent.spec_path(), "rb") as a, \
                open(os.path.join(published, "gpupool.json"), "rb") as b:
            check(a.read() == b.read(), "the published copy follows")

        # ---- an instance replaced for a job: the old device goes, the new one comes ----
        s, d = admin.post("/v1/jobs/large/cancel")
        check(s == 200, "cancel large", s, d)
        wait("large ended", lambda: admin.get("/v1/jobs/large")[1]["state"] in
             ("Cancelled", "Failed", "Succeeded"), timeout=30)
        j2 = submit("whole", "7g.80gb")
        u2, _ = running("whole", j2)
        devs = devices(agent.spec())
        check(u2 in devs and u2 != u1, "the 7g.80gb device in the spec", u2, sorted(devs))
        placed = admin.get("/v1/jobs/whole")[1]["placement"][0]["gpus"][0]["index"]
        check(placed == 2, "7g.80gb on GPU 2 (replacing one idle instance, not GPU 1's six)",
              placed)
        check(u1 not in devs, "the replaced 4g.40gb device left the spec", sorted(devs))
        admin.post("/v1/jobs/whole/cancel")

        # ---- the defaults: /dev, nothing published on the mock ----
        t4 = Agent("cdi-t4", os.path.join(inventories, "pcie-t4.yaml"), pool.base, token_file)
        agents.append(t4)
        spec = wait("the T4 node's spec", t4.spec)
        t4gpus = [ln.split("uuid: ")[1].split(",")[0]
                  for ln in open(os.path.join(inventories, "pcie-t4.yaml")) if "{uuid: GPU-" in ln]
        check(devices(spec) == {u: ["/dev/nvidia%d=/dev/nvidia%d" % (i, i)]
                                for i, u in enumerate(t4gpus)},
              "the T4 node's devices at /dev", devices(spec))
        line = [ln for ln in t4.log().splitlines() if "spec=" in ln]
        check(line and "published=" not in line[0], "nothing published on the mock", line)
        for a in agents:
            check(a.stop() == 0, "%s stops cleanly" % a.node, a.log()[-3000:])
finally:
    for a in agents:
        a.stop()
    kill_replica_leftovers(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
print("agent_cdi: ok")
