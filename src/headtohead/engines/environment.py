"""Reading this machine: the :class:`~headtohead.results.records.Environment` stored with every result."""

from __future__ import annotations

import importlib.metadata
import platform
import socket
import subprocess
from pathlib import Path

import psutil

from headtohead.results.records import Environment, GPURecord
from headtohead.runtime.devices import gpu_info
from headtohead.version import __version__

__all__ = ["capture_environment", "cpu_model"]


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def cpu_model() -> str:
    """The CPU's marketing name (``/proc/cpuinfo`` on Linux, ``platform`` elsewhere)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _git_revision(cwd: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def capture_environment(cwd: Path | None = None) -> Environment:
    """Describe this machine and its software stack.

    Parameters
    ----------
    cwd : Path, optional
        Folder whose git revision is recorded (the experiment's folder); none when not a repo.

    Returns
    -------
    Environment
    """
    torch_version = _version("torch")
    threads = None
    if torch_version is not None:
        try:
            import torch
        except ImportError:  # installed metadata but no usable torch: recorded as absent
            torch_version = None
        else:
            threads = torch.get_num_threads()
    gpus = [
        GPURecord(index=g.index, name=g.name, driver=g.driver, cuda=g.cuda, memory_total_mb=g.memory_total_mb)
        for g in gpu_info()
    ]
    return Environment(
        python=platform.python_version(),
        os=f"{platform.system()} {platform.release()}",
        hostname=socket.gethostname(),
        cpu_model=cpu_model(),
        cpu_cores_physical=psutil.cpu_count(logical=False),
        cpu_cores_logical=psutil.cpu_count(logical=True),
        ram_gb=round(psutil.virtual_memory().total / 2**30, 2),
        torch=torch_version,
        torch_threads=threads,
        transformers=_version("transformers"),
        timm=_version("timm"),
        torchvision=_version("torchvision"),
        sklearn=_version("scikit-learn"),
        numpy=_version("numpy"),
        onnxruntime=_version("onnxruntime"),
        headtohead=__version__,
        cuda_available=bool(gpus),
        gpus=gpus,
        git_revision=_git_revision(cwd or Path.cwd()),
    )
