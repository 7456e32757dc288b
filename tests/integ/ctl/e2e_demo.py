"""`make demo` (scripts/demo.sh) runs its jobs from the image it builds, on a pool of its own:
podman storage of the test's own (CONTAINERS_STORAGE_CONF, which the demo's podman and the
agents' podman both read, as both read the default storage in a real demo), a free port, the
demo's directory in the build tree.

- A stale image under the demo's name (another recipe's label) is built again; the gang's and
  the two-GPU job's replicas run in containers of localhost/gpupool-demo:1 (pull policy Never:
  no registry) and print the image's /etc/os-release; the quarter-GPU job has no image and finds
  the host's root read-only; `get jobs -o wide` in the demo's output shows the images.
- A second run finds the image up to date: the same image, not built again, the jobs Running.
Skipped (77) without podman or root, except under CI=true.
Arguments: the gpupool program (gpupoold, gpupool-agent, gpupool-run beside it), the source tree.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from oci import Storage
from pool import check, free_ports, pool_down, wait

gpupool, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
IMAGE = "localhost/gpupool-demo:1"
RECIPE = "io.gpupool.demo.recipe"


def skip(why):
    print("e2e_demo: skipped:", why)
    sys.exit(1 if os.environ.get("CI") == "true" else 77)


if not shutil.which("podman"):
    skip("podman not found")
if os.geteuid() != 0:
    skip("not root")

build = os.path.dirname(os.path.dirname(gpupool))
tmp = tempfile.mkdtemp(prefix="gpupool-e2e-demo.", dir=build)  # not /tmp: jobs have their own
os.chmod(tmp, 0o755)
pool = os.path.join(tmp, "demo")
port = free_ports(1)
st = Storage()
env = dict(st.env, BUILD=build, DEMO_DIR=pool, DEMO_PORT=str(port))
env.pop("GPUPOOL_RUNTIME", None)
env.pop("GPUPOOL_TOKEN", None)


def demo():
    r = subprocess.run([os.path.join(src, "scripts", "demo.sh")], capture_output=True, text=True,
                       env=env, timeout=240)
    check(r.returncode == 0, "make demo", r.returncode, r.stdout, r.stderr)
    return r.stdout


def jobs():
    cenv = dict(env, GPUPOOL_SERVER="http://127.0.0.1:%d" % port,
                GPUPOOL_TOKEN=open(os.path.join(pool, "admin.token")).read().strip())
    r = subprocess.run([gpupool, "get", "jobs", "-o", "json"], capture_output=True, text=True,
                       env=cenv, timeout=30)
    check(r.returncode == 0, "get jobs", r.stdout, r.stderr)
    return {j["name"]: j for j in json.loads(r.stdout)["items"]}


def first_lines():
    """The first line of each replica's stdout, by job name."""
    out = {}
    for name, j in jobs().items():
        for p in j.get("placement") or []:
            d = os.path.join(pool, "agents", p["node"], "replicas")
            for r in os.listdir(d) if os.path.isdir(d) else []:
                if r.startswith("%d-%d-" % (j["id"], p["replica"])):
                    try:
                        with open(os.path.join(d, r, "stdout.log")) as f:
                            out.setdefault(name, []).append(f.readline().strip())
                    except OSError:
                        pass
    return out


def image_id():
    r = st.podman("image", "inspect", "--format", "{{.Id}} {{index .Labels \"%s\"}}" % RECIPE,
                  IMAGE, check=False)
    return r.stdout.split() if r.returncode == 0 else None


down = None
try:
    # Another recipe's image under the demo's name: nothing in it can run the jobs.
    stale = os.path.join(tmp, "stale")
    os.makedirs(os.path.join(stale, "etc"))
    subprocess.run(["tar", "-C", stale, "-cf", stale + ".tar", "."], check=True)
    st.podman("import", "--change", "LABEL=%s=0-stale" % RECIPE, stale + ".tar", IMAGE)

    out = demo()
    check("Built the image %s" % IMAGE in out, "the stale image is built again", out)
    first = image_id()
    check(first and first[1] != "0-stale", "the demo's recipe", first)
    js = jobs()
    check({n: j["state"] for n, j in js.items()} ==
          {"gang": "Running", "two-gpus": "Running", "quarter": "Running"}, "the jobs run", js)
    for n in ("gang", "two-gpus"):
        check(js[n]["spec"].get("image") == IMAGE and
              js[n]["spec"].get("image_pull_policy") == "Never", "%s from the image" % n, js[n])
    check("image" not in js["quarter"]["spec"], "quarter without an image", js["quarter"])
    used = [x.strip() for x in st.podman("ps", "--format", "{{.Image}}").stdout.splitlines()]
    check(used.count(IMAGE) == 3 and len(used) == 4,
          "three containers of the image (two gang replicas, two-gpus), one over the host root",
          used)
    def all_written():
        f = first_lines()
        done = len(f.get("gang", [])) == 2 and len(f) == 3 and all(x for v in f.values() for x in v)
        return f if done else None

    lines = wait("the jobs' output", all_written)
    for n in ("gang", "two-gpus"):
        check(all(", in the gpupool demo image (BusyBox v" in x for x in lines[n]),
              "%s says it runs in the image" % n, lines)
    check("hello from the datasets volume" in lines["two-gpus"][0], "the volume, read", lines)
    check(lines["quarter"][0].endswith("Read-only file system"), "the host's root is read-only",
          lines)
    ls = out.splitlines()
    at = [i for i, x in enumerate(ls) if x.startswith("ID ") and " IMAGE " in x]
    rows = {}
    if at:
        col = ls[at[0]].split().index("IMAGE")
        for x in ls[at[0] + 1:]:
            if not x.strip():
                break
            rows[x.split()[1]] = x.split()[col]
    check(rows == {"gang": IMAGE, "two-gpus": IMAGE, "quarter": "-"},
          "get jobs -o wide shows the images", rows, out)

    out = demo()
    check("Built the image" not in out, "the second run builds nothing", out)
    check(image_id() == first, "the same image", image_id(), first)
    check({n: j["state"] for n, j in jobs().items()} ==
          {"gang": "Running", "two-gpus": "Running", "quarter": "Running"}, "running again")
finally:
    down, leftover = pool_down(gpupool, pool, tmp, tmp)
    st.close()
    shutil.rmtree(tmp, ignore_errors=True)
check(down.returncode == 0, "gpupool down", down.stdout, down.stderr)
check(not leftover, "down stopped every job", leftover)
print("ok")
