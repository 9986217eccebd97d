"""JupyterLab's session manager, with the variables the running test names added to each kernel's
environment: what lets one JupyterLab serve every browser test of a worker, each with its own store,
corpus and labels folder (a kernel otherwise inherits the server's environment, fixed at its start).

The server is started with ``--ServerApp.session_manager_class`` naming :class:`KernelEnvSessionManager`
and ``--KernelEnvSessionManager.env_file`` a JSON file (variable -> value); a test writes the file before
it opens a notebook, and the kernel started for it reads the file then. Imported by that server only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jupyter_server.services.sessions.sessionmanager import SessionManager
from traitlets import Unicode


class KernelEnvSessionManager(SessionManager):
    env_file = Unicode(config=True, help="a JSON file of the variables each kernel started next gets")

    def get_kernel_env(self, path: str | None, name: Any = None) -> dict[str, str]:
        return {**super().get_kernel_env(path, name), **json.loads(Path(self.env_file).read_text())}
