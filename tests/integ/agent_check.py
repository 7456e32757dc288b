"""`gpupool-agent check`, the node health check, against the mock NVML library:

- a healthy DGX-like node: exit 0, every check listed and passed (JSON and table);
- a PCIe node: NVLink and MIG are skipped (the GPUs have neither), not failed;
- faults injected through the mock's control file: a failed row remap on GPU 0 is fatal (exit 1,
  naming GPU 0 and remapped_rows); a pending one, pending MIG/ECC mode changes and a link down
  beside active ones are warnings (exit 0); a GPU that fell off the bus is lost (fatal);
  uncorrected ECC errors and NVML's recovery action are fatal;
- --expect-gpus and --driver-min: a missing GPU or an old driver is fatal; the mock's `driver`
  command changes the version the check reads;
- NVML that does not load: exit 1 with the reason on stderr and the driver check failed, the
  others unknown; bad usage exits 2.
Arguments: gpupool-agent, libgpupool-nvml-mock.so, the inventories directory.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "ctl"))
from pool import check  # noqa: E402

agent, mock, inventories = sys.argv[1:4]
tmp = tempfile.mkdtemp(prefix="gpupool-check.")
control = os.path.join(tmp, "nvml-control")
CHECKS = ["driver", "gpu_count", "gpu_visible", "nvlink", "mig_mode", "ecc_mode", "ecc_errors",
          "remapped_rows", "retired_pages", "recovery_action"]


def run(inventory, *args, lines=None, library=None):
    """Runs the check with a fresh control file holding lines; (exit code, JSON or None,
    stdout, stderr)."""
    with open(control, "w") as f:
        f.write("".join(line + "\n" for line in lines or []))
    env = dict(os.environ, GPUPOOL_NVML_MOCK_INVENTORY=os.path.join(inventories, inventory),
               GPUPOOL_NVML_MOCK_CONTROL=control)
    env.pop("GPUPOOL_NVML_LIBRARY", None)
    cmd = [agent, "check", "--nvml-library", library or mock] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    doc = None
    if "json" in args:
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            check(False, "check -o json printed no JSON", cmd, p.stdout, p.stderr)
    return p.returncode, doc, p.stdout, p.stderr


def statuses(doc):
    return {c["check"]: c["status"] for c in doc["checks"]}


def findings(doc):
    return [(f["check"], f["gpu"], f["severity"]) for f in doc["findings"]]


try:
    # Healthy: every check, in order, passed.
    rc, doc, out, err = run("dgx-a100.yaml", "-o", "json")
    check(rc == 0 and doc["ok"] is True and doc["fatal"] == 0 and doc["findings"] == [],
          "a healthy node: exit 0, no findings", rc, doc, err)
    check([c["check"] for c in doc["checks"]] == CHECKS, "every check listed in order", doc)
    check(set(statuses(doc).values()) == {"pass"}, "every check passes", doc)
    check(doc["driver_version"] == "550.54.15" and doc["gpu_count"] == 8, "driver and count", doc)
    rc, _, out, _ = run("dgx-a100.yaml")
    rows = [line.split()[:2] for line in out.splitlines()[1:len(CHECKS) + 1]]
    check(rc == 0 and rows == [[c, "pass"] for c in CHECKS] and "healthy: 0 fatal" in out,
          "the table lists every check passed", out)

    # A PCIe node: what the GPUs do not have is skipped.
    rc, doc, _, err = run("pcie-t4.yaml", "-o", "json", "--expect-gpus", "4")
    st = statuses(doc)
    check(rc == 0 and st["nvlink"] == "skipped" and st["mig_mode"] == "skipped"
          and st["ecc_errors"] == "pass" and st["gpu_count"] == "pass",
          "a PCIe node: NVLink and MIG skipped", rc, doc, err)

    # A failed row remap on GPU 0: fatal.
    rc, doc, _, err = run("pcie-t4.yaml", "-o", "json", lines=["remap 0 0 1"])
    check(rc == 1 and doc["ok"] is False and findings(doc) == [("remapped_rows", 0, "fatal")]
          and statuses(doc)["remapped_rows"] == "fail",
          "a failed row remap on GPU 0: exit 1", rc, doc, err)
    rc, _, out, _ = run("pcie-t4.yaml", lines=["remap 0 0 1"])
    check(rc == 1 and "UNHEALTHY" in out and "row remapping failed" in out,
          "the table names the remap", out)

    # Warnings only: exit 0, but the checks fail and say why.
    rc, doc, _, err = run("dgx-a100.yaml", "-o", "json",
                          lines=["remap 2 1 0", "mig-pending 1 1", "ecc-pending 3 1",
                                 "retire-pending 4 1", "nvlink 5 7 down"])
    check(rc == 0 and doc["ok"] is True and doc["warnings"] == 5 and
          sorted(findings(doc)) == [("ecc_mode", 3, "warning"), ("mig_mode", 1, "warning"),
                                    ("nvlink", 5, "warning"), ("remapped_rows", 2, "warning"),
                                    ("retired_pages", 4, "warning")],
          "pending changes and an inactive link: warnings, exit 0", rc, doc, err)
    msgs = " ".join(f["message"] for f in doc["findings"])
    check("reset the GPU when idle" in msgs and "NVLink link 7 inactive" in msgs,
          "the warnings say what to do", msgs)

    # A GPU that fell off the bus: lost, fatal; the others are still checked.
    rc, doc, _, err = run("dgx-a100.yaml", "-o", "json", "--expect-gpus", "8",
                          lines=["fall-off 3", "ecc 5 2"])
    check(rc == 1 and sorted(findings(doc)) == [("ecc_errors", 5, "fatal"),
                                                ("gpu_visible", 3, "fatal")],
          "a GPU off the bus and ECC errors: fatal", rc, doc, err)
    lost = [f for f in doc["findings"] if f["check"] == "gpu_visible"][0]
    check("fell off the bus" in lost["message"], "the lost GPU's message", lost)

    rc, doc, _, err = run("dgx-a100.yaml", "-o", "json", lines=["recovery 6 1"])
    check(rc == 1 and findings(doc) == [("recovery_action", 6, "fatal")]
          and "reset the GPU" in doc["findings"][0]["message"],
          "NVML's recovery action: fatal", rc, doc, err)

    # Expectations: the GPU count, the driver's version.
    rc, doc, _, _ = run("pcie-t4.yaml", "-o", "json", "--expect-gpus", "5")
    check(rc == 1 and findings(doc) == [("gpu_count", -1, "fatal")], "a GPU missing", rc, doc)
    rc, doc, _, _ = run("pcie-t4.yaml", "-o", "json", "--driver-min", "550.54.15")
    check(rc == 0 and statuses(doc)["driver"] == "pass", "the driver is new enough", rc, doc)
    rc, doc, _, _ = run("pcie-t4.yaml", "-o", "json", "--driver-min", "550.100")
    check(rc == 1 and findings(doc) == [("driver", -1, "fatal")]
          and "older than the required 550.100" in doc["findings"][0]["message"],
          "a driver older than --driver-min", rc, doc)
    rc, doc, _, _ = run("pcie-t4.yaml", "-o", "json", "--driver-min", "550.100",
                        lines=["driver 560.28.03"])
    check(rc == 0 and doc["driver_version"] == "560.28.03", "the mock's driver command", rc, doc)

    # NVML that does not load.
    rc, doc, out, err = run("pcie-t4.yaml", "-o", "json",
                            library="/nonexistent/dir/libnvidia-ml.so.1")
    st = statuses(doc)
    check(rc == 1 and "/nonexistent/dir/libnvidia-ml.so.1" in err and st["driver"] == "fail"
          and all(st[c] == "unknown" for c in CHECKS[1:])
          and findings(doc) == [("driver", -1, "fatal")],
          "no NVML: exit 1, the driver check failed, the rest unknown", rc, doc, err)
    rc, doc, out, err = run("no-such-inventory.yaml", "-o", "json")
    check(rc == 1 and "no-such-inventory.yaml" in doc["findings"][0]["message"],
          "a driver that does not initialise", rc, doc, err)

    # Bad usage.
    for args, what in ((["--expect-gpus", "x"], "--expect-gpus"), (["-o", "yaml"], "-o"),
                       (["--driver-min", "5.x"], "--driver-min"), (["--frob"], "--frob"),
                       (["--expect-gpus"], "--expect-gpus")):
        rc, _, out, err = run("pcie-t4.yaml", *args)
        check(rc == 2 and what in err and not out, "bad usage: " + " ".join(args), rc, out, err)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("agent_check: ok")
