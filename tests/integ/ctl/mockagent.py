"""A real gpupool-agent over the mock NVML for integration tests, in a directory of its own.

Usage:
    a = MockAgent(agent_bin, mock_lib, tmp, "n1", inventory, server_url, token_file)
    a.control("temp 0 91")      # a line for the mock's control file
    a.log()                     # what it has logged so far
    check(a.stop() == 0, ...)   # SIGTERM; its exit status
"""

import os
import subprocess

from pool import free_ports, terminate


class MockAgent:
    """A gpupool-agent over the mock NVML (inventory_file), registering with server (a URL) with
    the join token of token_file. Its directory ROOT/NODE holds its state (state/), an empty mock
    control file (nvml-control) and its log (agent.log, debug level). It heartbeats every 200 ms,
    has --memory-grace 0 and --check-interval check_interval; with listen, it serves on a free
    port of 127.0.0.1 (port). flags are added to its command line."""

    def __init__(self, agent_bin, mock, root, node, inventory_file, server, token_file, *flags,
                 check_interval=0, listen=True):
        self.node = node
        self.dir = os.path.join(root, node)
        self.state = os.path.join(self.dir, "state")
        self.control_file = os.path.join(self.dir, "nvml-control")
        os.makedirs(self.dir, exist_ok=True)  # an agent restarted keeps its state directory
        open(self.control_file, "w").close()
        self.log_path = os.path.join(self.dir, "agent.log")
        self.port = free_ports(1) if listen else None
        address = ["--address", "127.0.0.1:%d" % self.port] if listen else []
        env = dict(os.environ, GPUPOOL_NVML_MOCK_INVENTORY=inventory_file,
                   GPUPOOL_NVML_MOCK_CONTROL=self.control_file)
        with open(self.log_path, "a") as log:
            self.proc = subprocess.Popen(
                [agent_bin, "--server", server, "--join-token-file", token_file, "--state-dir",
                 self.state, "--name", node] + address +
                ["--nvml-library", mock, "--heartbeat", "200", "--memory-grace", "0",
                 "--check-interval", str(check_interval), "--log-level", "debug"] + list(flags),
                stdout=log, stderr=log, env=env)

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def control(self, line):
        with open(self.control_file, "a") as f:
            f.write(line + "\n")

    def stop(self):
        """SIGTERM (SIGKILL after 20 s); its exit status (a sanitizer's report makes it
        non-zero)."""
        return terminate(self.proc)
