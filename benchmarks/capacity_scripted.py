"""The capacity scenario's done-when over real HTTP: two scripted servers of known capacity, A against B.

Two OpenAI-compatible servers on 127.0.0.1 (``testing/chat_server.py`` with ``service_s``) serve one
request at a time, 20 ms and 40 ms each (exactly 50 and 25 requests per second, whatever the client's
machine is doing: each end is computed from the one before); ``h2h run`` searches both at
``e2e_p99: 2s`` with the default probes (299 measured requests, the p99's early-stopping bound at
95 %) and 3 seeded searches, interleaved ABBA. Printed: each model's goodput with its interval, its
error from the service rate, the ratio's interval and the verdict, the time taken.

Run: ``PYTHONPATH=src .venv/bin/python benchmarks/capacity_scripted.py [--requests N] [--repeats K]``
(about 5 minutes on the 2-core machine with the defaults).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import headtohead
from headtohead.testing.chat_server import Reply, ScriptedChatServer
from headtohead.testing.data import make_text_rows, write_text_table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=None, help="measured requests per probe (default: 299)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="h2h-capacity-"))
    os.environ["H2H_CACHE_DIR"] = str(root / "cache")
    write_text_table(root / "dev.csv", make_text_rows(20, classes=("negative", "positive"), seed=5))
    answer = lambda n, payload: Reply(text="positive")  # noqa: E731
    with ScriptedChatServer(answer, service_s=0.02) as fast, ScriptedChatServer(answer, service_s=0.04) as slow:
        capacity = {"slo": {"e2e_p99": "2s"}, "repeats": args.repeats, "start_rate": 8}
        if args.requests:
            capacity["requests"] = args.requests
        experiment = {
            "name": "capacity",
            "seed": args.seed,
            "data": {"path": str(root / "dev.csv")},
            "stats": {"n_resamples": 100},
            "models": [
                {"name": name, "kind": "openai", "source": "scripted", "base_url": server.base_url}
                for name, server in (("fast", fast), ("slow", slow))
            ],
            "speed": {"scenarios": ["capacity"], "capacity": capacity},
        }
        began = time.perf_counter()
        run = headtohead.run(experiment, out_dir=root / "out")
    result = run.result.speed.capacity
    for model, rate in zip(result.models, (50.0, 25.0), strict=True):
        print(
            f"{model.name}: goodput {model.goodput:.1f}/s (95 % CI {model.ci_low:.1f}–{model.ci_high:.1f}), "
            f"service rate {rate:g}/s, error {100 * (model.goodput / rate - 1):+.1f} %, {len(model.probes)} probes"
        )
    for pair in result.comparisons:
        print(
            f"ratio {pair.model_a}/{pair.model_b} {1 / pair.ratio:.2f} (95 % CI {1 / pair.ci_high:.2f}–{1 / pair.ci_low:.2f})"
        )
        print(pair.verdict)
    print(f"{time.perf_counter() - began:.0f} s in all ({result.elapsed_s:.0f} s probing); results in {root / 'out'}")


if __name__ == "__main__":
    main()
