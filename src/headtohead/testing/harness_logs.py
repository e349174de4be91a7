"""Real logs of other harnesses, made offline for tests and docs: lm-evaluation-harness and Inspect.

:func:`lm_eval_logs` runs ``lm_eval`` (its ``hf`` model type on a tiny GPT-2 saved in a folder) on a
local multiple-choice group of two tasks defined by task YAMLs over local JSON files;
:func:`inspect_log` runs an Inspect task with its ``mockllm`` model answering from a script, over
several epochs. See ``docs/harnesses.md``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from headtohead.testing.known import hash_uniform

__all__ = ["LM_EVAL_TASKS", "write_lm_eval_group", "build_tiny_gpt2", "run_lm_eval", "inspect_log"]

#: The local group :func:`write_lm_eval_group` defines, and its tasks (30 documents each).
LM_EVAL_GROUP, LM_EVAL_TASKS = "tinygroup", ("tinycolours", "tinyshapes")
_WORDS = {"tinycolours": ("red", "blue", "green", "gold"), "tinyshapes": ("cube", "cone", "ring", "star")}
N_DOCS = 30


def write_lm_eval_group(folder: str | Path) -> Path:
    """Two multiple-choice tasks over local JSON files and their group, as lm-eval task YAMLs; returns the YAML folder."""
    root = Path(folder)
    tasks = root / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for task, words in _WORDS.items():
        docs = [
            {"question": f"Item {i} of the {task[4:]} list is", "choices": list(words), "label": int(rng.integers(4))}
            for i in range(N_DOCS)
        ]
        data = root / f"{task}.jsonl"
        data.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
        (tasks / f"{task}.yaml").write_text(
            f"task: {task}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {data}\n"
            f"test_split: test\noutput_type: multiple_choice\ndoc_to_text: '{{{{question}}}}'\n"
            f"doc_to_choice: '{{{{choices}}}}'\ndoc_to_target: '{{{{label}}}}'\n"
            f"metric_list:\n  - metric: acc\n  - metric: acc_norm\n",
            encoding="utf-8",
        )
    (tasks / f"{LM_EVAL_GROUP}.yaml").write_text(
        f"group: {LM_EVAL_GROUP}\ntask: [{', '.join(LM_EVAL_TASKS)}]\n", encoding="utf-8"
    )
    return tasks


def build_tiny_gpt2(folder: str | Path, seed: int) -> Path:
    """A one-layer GPT-2 at random init (``seed``) and a byte-level BPE tokenizer, saved for lm-eval's ``hf`` model."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    out = Path(folder)
    corpus = [f"Item {i} of the {t[4:]} list is {w}" for t, ws in _WORDS.items() for w in ws for i in range(N_DOCS)]
    backend = Tokenizer(models.BPE(unk_token="<unk>"))  # noqa: S106 - a vocabulary token, not a password
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    backend.train_from_iterator(
        corpus,
        trainers.BpeTrainer(
            vocab_size=400,
            special_tokens=["<unk>", "<|endoftext|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )  # a GPT-2-like tokenizer: no token added around a text, so lm-eval's context/continuation split holds
    special = "<|endoftext|>"
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token=special,
        eos_token=special,
        unk_token="<unk>",  # noqa: S106 - a vocabulary token
    )
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(tokenizer), n_positions=64, n_embd=16, n_layer=1, n_head=2, initializer_range=0.5,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    GPT2LMHeadModel(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def run_lm_eval(
    model: str | Path,
    tasks_dir: str | Path,
    out: str | Path,
    *,
    samples: Mapping[str, Sequence[int]] | None = None,
    env: Mapping[str, str] | None = None,
) -> Path:
    """``lm_eval --model hf … --tasks tinygroup --log_samples`` in a subprocess, offline; returns the model's output folder.

    ``samples`` (task → document indices) runs only those documents (lm-eval's ``--samples``).
    """
    command = [
        sys.executable, "-m", "lm_eval", "--model", "hf", "--model_args", f"pretrained={model},dtype=float32",
        "--tasks", LM_EVAL_GROUP, "--include_path", str(tasks_dir), "--log_samples", "--output_path", str(out),
        "--device", "cpu", "--batch_size", "16",
    ]  # fmt: skip
    if samples is not None:
        command += ["--samples", json.dumps({task: list(docs) for task, docs in samples.items()})]
    offline = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        command, env={**os.environ, **offline, **(env or {})}, capture_output=True, text=True, check=False
    )
    if done.returncode:
        raise RuntimeError(f"lm_eval failed ({done.returncode}):\n{done.stderr[-3000:]}")
    folders = [p.parent for p in Path(out).rglob("samples_*.jsonl")]
    return folders[0]


def inspect_log(
    folder: str | Path, *, seed: int, epochs: int = 4, samples: int = 12, prose: Sequence[str] = ()
) -> Path:
    """An Inspect log of a two-choice task answered by ``mockllm`` over ``epochs`` epochs; returns the ``.eval`` file.

    Each sample has a leaning (its answer is right in most epochs, or wrong in most), so epochs of one
    sample are alike: a sample, not an epoch, is the independent unit. Sample 3 is refused
    (``content_filter``) and, for ``seed`` 1, sample 5 raises an error: failures. The samples named in
    ``prose`` (``s7`` …) are answered in words without ``ANSWER:``, which Inspect's ``choice()`` scorer
    scores wrong with the reason ``invalid_response_format``: unparseable answers.
    """
    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.model._providers.mockllm import MockLLM
    from inspect_ai.scorer import choice
    from inspect_ai.solver import multiple_choice

    async def count_words(self: Any, text: str) -> int:  # tiktoken would download its vocabulary: offline, words
        return max(1, len(text.split()))

    MockLLM.count_text_tokens = count_words
    leaning = {f"s{i}": hash_uniform(f"leaning {i}", seed) for i in range(samples)}
    calls: dict[str, int] = {}

    def reply(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        text = messages[-1].text
        sample = next(s for s in leaning if f"Question {s[1:]}:" in text)
        if sample == "s3":
            return ModelOutput.from_content("mockllm", "I cannot help with that.", stop_reason="content_filter")
        if sample == "s5" and seed == 1:
            raise RuntimeError("scripted failure")
        if sample in prose:
            return ModelOutput.from_content("mockllm", f"I would say the {sample} one is the first, probably.")
        calls[sample] = calls.get(sample, 0) + 1  # the sample's n-th answer: the same whatever order epochs run in
        right = "A" if int(sample[1:]) % 2 else "B"
        wrong = "B" if right == "A" else "A"
        chance = hash_uniform(f"{sample} answer {calls[sample]}", seed)
        return ModelOutput.from_content("mockllm", f"ANSWER: {right if chance < leaning[sample] else wrong}")

    dataset = MemoryDataset(
        [
            Sample(
                id=f"s{i}",
                input=f"Question {i}: is it the first?",
                choices=["yes", "no"],
                target="A" if i % 2 else "B",
                metadata={"topic": "odd" if i % 2 else "even", "n": i},
            )
            for i in range(samples)
        ]  # fmt: skip
    )
    task = Task(dataset=dataset, solver=multiple_choice(), scorer=choice(), epochs=epochs, name="tiny")
    model = get_model("mockllm/model", custom_outputs=reply)
    logs = eval(task, model=model, log_dir=str(folder), display="none", fail_on_error=False, log_level="error")
    return Path(logs[0].location)
