"""Data-parallel training through torchrun: the launcher and the worker's entry point.

``train.nproc: N`` makes ``h2h train`` start ``python -m torch.distributed.run --standalone
--nproc_per_node N -m headtohead.pipeline.training_ddp job.json`` for each model and seed
(:func:`launch`), after a short single-process reference run that gives the scaling
efficiency (:func:`launch_parallel`); each rank runs :func:`run_training_job`, and rank 0
writes its :class:`~headtohead.results.training.TrainingRun` for the launcher to read back.
The group itself (ranks, all-reduce) is :mod:`headtohead.engines.train_ddp`.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from headtohead.config.schema import DataConfig, ModelConfig, model_settings
from headtohead.config.train import TrainConfig
from headtohead.data import create_dataset
from headtohead.engines.train_ddp import dist_context_from_env, init_process_group, shutdown_process_group
from headtohead.errors import ConfigError, DataError, DeviceError, H2HError, ModelError, ResultsError
from headtohead.pipeline.training_model import train_one
from headtohead.report.words.training import epoch_line
from headtohead.results.training import ScalingRecord, TrainingRun

__all__ = ["run_training_job", "launch_parallel", "launch", "main"]

_ERRORS: dict[str, type[H2HError]] = {
    c.__name__: c for c in (H2HError, ConfigError, DataError, ModelError, DeviceError, ResultsError)
}


def run_training_job(job: Mapping[str, Any]) -> dict[str, Any]:
    """Train one model with one seed as described by ``job`` (a torchrun worker's task).

    Returns
    -------
    dict
        The :class:`TrainingRun` as JSON (rank 0's is the one that counts).
    """

    config = TrainConfig.model_validate(job["train"])
    dist = dist_context_from_env(config.ddp_backend, job["device"])
    device = f"cuda:{dist.local_rank}" if dist is not None and job["device"].startswith("cuda") else job["device"]
    if dist is not None:
        init_process_group(dist)
    data = DataConfig.model_validate(job["data"])
    splits = create_dataset(data, seed=job["experiment_seed"])
    run = train_one(
        model_settings(job["model"]),
        data=data,
        splits=splits,
        config=config,
        seed=job["seed"],
        exp_seed=job["experiment_seed"],
        device=device,
        base_dir=Path(job["base_dir"]),
        out=Path(job["out"]),
        eval_batch_size=job["eval_batch_size"],
        dist=dist,
        say=lambda line: print(line, flush=True),
    )
    return run.model_dump(mode="json")


@contextlib.contextmanager
def _threads_like_torchrun(device: str) -> Iterator[None]:
    """Give the reference run the CPU threads of one torchrun worker, so the ratio compares like with like.

    torchrun starts every worker with ``OMP_NUM_THREADS=1`` unless the variable is set.
    """
    import torch

    before = torch.get_num_threads()
    if device == "cpu":
        torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS") or 1))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def launch_parallel(
    model: ModelConfig,
    *,
    data: DataConfig,
    splits: Any,
    config: TrainConfig,
    seed: int,
    exp_seed: int,
    device: str,
    base_dir: Path,
    out: Path,
    eval_batch_size: int,
    say: Callable[[str], None],
) -> TrainingRun:
    """A single-process reference run (for the scaling efficiency), then the DDP run via torchrun."""
    reference = None
    if config.scaling_steps:
        warm = min(config.timing_warmup_steps, config.scaling_steps - 1)
        ref_config = config.model_copy(
            update={
                "max_steps": config.scaling_steps,
                "nproc": 1,
                "resume": False,
                "eval_each_epoch": False,
                "target": None,
                "timing_warmup_steps": warm,
            }
        )
        say(
            f"  {model.name} (seed {seed}): {config.scaling_steps} single-process reference steps for the scaling "
            f"efficiency"
        )
        with _threads_like_torchrun(device):
            ref = train_one(
                model,
                data=data,
                splits=splits,
                config=ref_config,
                seed=seed,
                exp_seed=exp_seed,
                device=device,
                base_dir=base_dir,
                out=out,
                eval_batch_size=eval_batch_size,
                dist=None,
                say=lambda _: None,
                keep=False,
            )
        reference = ref.samples_per_s
    job = {
        "model": model.model_dump(mode="json"),
        "data": data.model_dump(mode="json"),
        "train": config.model_dump(mode="json"),
        "seed": seed,
        "experiment_seed": exp_seed,
        "device": device,
        "base_dir": str(base_dir),
        "out": str(out),
        "eval_batch_size": eval_batch_size,
    }
    say(f"  {model.name} (seed {seed}): data-parallel training in {config.nproc} processes (torchrun)")
    output = launch(job, nproc=config.nproc, workdir=out / "ddp" / model.name / f"seed-{seed}")
    run = TrainingRun.model_validate(output["run"])
    for record in run.epochs:
        say(epoch_line(model.name, seed, len(run.epochs), record))
    if reference and run.samples_per_s:
        scaling = ScalingRecord(
            world_size=run.world_size, reference_samples_per_s=reference, samples_per_s=run.samples_per_s
        )
        run = run.model_copy(update={"scaling": scaling})
    return run


def launch(job: Mapping[str, Any], *, nproc: int, workdir: str | Path) -> dict[str, Any]:
    """Run one data-parallel training in ``nproc`` processes via torchrun and return rank 0's output.

    Parameters
    ----------
    job : mapping
        JSON-serialisable description of the training (see :func:`launch_parallel`).
    nproc : int
        Processes on this machine.
    workdir : str or Path
        Folder for the job file and the output.

    Returns
    -------
    dict
        What the worker's rank 0 wrote: ``{"run": <TrainingRun as JSON>}``.

    Raises
    ------
    H2HError
        The worker failed on bad input (its one-line message, same class); or it crashed.
    """
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    job_file = workdir / "ddp-job.json"
    out_file = workdir / "ddp-output.json"
    out_file.unlink(missing_ok=True)
    job_file.write_text(json.dumps({**job, "output": str(out_file)}), encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={nproc}",
        "-m",
        "headtohead.pipeline.training_ddp",
        str(job_file),
    ]
    with tempfile.TemporaryFile(mode="w+") as log:
        process = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
        log.seek(0)
        tail = log.read()[-2000:]
    if out_file.is_file():
        output: dict[str, Any] = json.loads(out_file.read_text(encoding="utf-8"))
        if "error" in output:
            raise _ERRORS.get(output["error"]["type"], H2HError)(output["error"]["message"])
        if process.returncode == 0:
            return output
    last = [line for line in tail.splitlines() if line.strip()][-3:]
    raise ModelError(
        f"data-parallel training ({nproc} processes) failed with exit code {process.returncode}: "
        f"{' | '.join(last) or 'no output'}; run with train.nproc: 1 to see the error directly"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Worker entry point: ``python -m headtohead.pipeline.training_ddp job.json`` under torchrun."""
    args = list(sys.argv[1:] if argv is None else argv)
    job = json.loads(Path(args[0]).read_text(encoding="utf-8"))
    rank = int(os.environ.get("RANK", "0"))
    try:
        record = run_training_job(job)
        if rank == 0:
            Path(job["output"]).write_text(json.dumps({"run": record}), encoding="utf-8")
        return 0
    except H2HError as exc:
        if rank == 0:
            Path(job["output"]).write_text(
                json.dumps({"error": {"type": type(exc).__name__, "message": str(exc)}}), encoding="utf-8"
            )
        return 2
    finally:
        shutdown_process_group()


if __name__ == "__main__":
    raise SystemExit(main())
