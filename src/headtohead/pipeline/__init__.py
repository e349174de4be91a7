"""The one orchestration package: every command's flow through the stages, top to bottom.

* :mod:`~headtohead.pipeline.run` — :func:`run` (``h2h run``, ``h2h bench``): setup → executor
  → records saved as models finish → statistics → speed;
* :mod:`~headtohead.pipeline.setup` — the experiment validated once, the data, the batch plan;
* :mod:`~headtohead.pipeline.model_pass` — one model's pass and its record (every executor runs it);
* :mod:`~headtohead.pipeline.executors` — where passes run: this process, spawned processes, Ray;
* :mod:`~headtohead.pipeline.outputs` / :mod:`~headtohead.pipeline.resume` — the output folder, ``--resume``;
* :mod:`~headtohead.pipeline.training` (+ ``training_model``, ``training_ddp``) — ``h2h train``;
* :mod:`~headtohead.pipeline.sweep` — ``h2h sweep``; :mod:`~headtohead.pipeline.gate` — ``h2h gate``;
* :mod:`~headtohead.pipeline.machines` — ``h2h machines``; :mod:`~headtohead.pipeline.demo` — ``h2h demo``.

Only the CLI and :mod:`headtohead` import this package; it imports every stage below it.
"""
