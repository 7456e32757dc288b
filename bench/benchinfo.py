"""What a benchmark records of the machine it ran on (shared by bench/*.py)."""
import datetime
import os
import subprocess


def version(*argv):
    """The first line a program prints (stdout, else stderr), or "" when it cannot run."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except OSError:
        return ""
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if text else ""


def machine(**tools):
    """Date, cores, CPU model, kernel and load average now, plus the version of each tool given
    as NAME=[argv...]."""
    cpu = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    info = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "nproc": os.cpu_count(), "cpu": cpu, "kernel": os.uname().release,
            "load_start": os.getloadavg()}
    info.update({name: version(*argv) for name, argv in tools.items()})
    return info
