"""The command line: user mistakes give one line on stderr, exit code 2, no traceback."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from headtohead.cli.main import main
from headtohead.runtime.devices import use_backend


def _write(tmp_path, body: str):
    path = tmp_path / "exp.yaml"
    path.write_text(textwrap.dedent(body))
    return path


def _fails(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err.strip()
    return info.value.code, err


SKLEARN_EXP = textwrap.dedent("""\
    name: t
    data: {path: sklearn:iris}
    models:
      - {name: a, kind: python, source: "headtohead.testing.models:tiny_mlp", model_args: {n_features: 4, n_classes: 3}}
    """)


def test_missing_data_file(tmp_path, capsys):
    path = _write(
        tmp_path,
        """\
        data: {path: nowhere.csv}
        models: [{name: a, kind: python, source: "m:f"}]
        """,
    )
    code, err = _fails(["run", str(path), "--out", str(tmp_path / "out")], capsys)
    assert code == 2
    assert "nowhere.csv: data file not found" in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_cuda_without_gpu(tmp_path, capsys):
    class NoGPU:
        def cuda_available(self):
            return False

    path = _write(tmp_path, SKLEARN_EXP + "eval: {device: cuda}\n")
    with use_backend(NoGPU()):
        code, err = _fails(["run", str(path)], capsys)
    assert code == 2 and "CUDA is not available" in err and "use device: auto or cpu" in err


def test_cuda_index_out_of_range(tmp_path, capsys):
    class OneGPU:
        def cuda_available(self):
            return True

        def cuda_device_count(self):
            return 1

    path = _write(tmp_path, SKLEARN_EXP + "eval: {device: 'cuda:1'}\n")
    with use_backend(OneGPU()):
        code, err = _fails(["run", str(path)], capsys)
    assert code == 2 and "has 1 GPU(s)" in err


def test_unknown_model_kind_and_bad_yaml(tmp_path, capsys):
    path = _write(
        tmp_path,
        """\
        data: {path: sklearn:iris}
        models: [{name: a, kind: sklarn, source: x}]
        """,
    )
    code, err = _fails(["validate", str(path)], capsys)
    assert code == 2 and "models[0].kind: unknown model kind 'sklarn' — did you mean sklearn?" in err
    path.write_text("data: {path: [\n")
    code, err = _fails(["validate", str(path)], capsys)
    assert code == 2 and "YAML syntax error" in err


def test_conflicting_overrides(tmp_path, capsys):
    path = _write(tmp_path, SKLEARN_EXP)
    code, err = _fails(["validate", str(path), "--set", "eval.batch_size=4", "--set", "eval.batch_size=5"], capsys)
    assert code == 2 and "conflict" in err


def test_validate_ok(tmp_path, capsys):
    path = _write(tmp_path, SKLEARN_EXP)
    main(["validate", str(path)])
    assert "valid — 1 model(s): a" in capsys.readouterr().out


def test_subprocess_exit_code_and_debug_traceback(tmp_path):
    path = _write(
        tmp_path,
        """\
        data: {path: nowhere.csv}
        models: [{name: a, kind: python, source: "m:f"}]
        """,
    )
    cmd = [sys.executable, "-m", "headtohead.cli.main", "run", str(path), "--out", str(tmp_path / "o")]
    plain = subprocess.run(cmd, capture_output=True, text=True)
    assert plain.returncode == 2
    assert "Traceback" not in plain.stderr and "data file not found" in plain.stderr
    debug = subprocess.run(cmd + ["--debug"], capture_output=True, text=True)
    assert debug.returncode != 0 and "Traceback" in debug.stderr


_IMPORTS_PROBE = """
import sys, atexit
atexit.register(lambda: print("HEAVY:" + ",".join(m for m in ("torch", "transformers", "timm", "scipy.stats",
                                                               "sklearn") if m in sys.modules)))
from headtohead.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
"""


@pytest.mark.parametrize(
    "args, allowed",
    [
        (["--help"], set()),
        (["run", "--help"], set()),
        (["validate", "{experiment}"], set()),
        (["plan", "--accuracy", "0.9", "--delta", "0.05"], {"scipy.stats"}),
    ],
)
def test_commands_that_load_no_model_import_no_model_library(tmp_path, args, allowed):
    """h2h --help, validate and plan answer at once: no torch, transformers, timm (issue 18)."""
    experiment = tmp_path / "exp.yaml"
    experiment.write_text(
        "name: v\ndata: {path: 'sklearn:iris'}\n"
        "models: [{name: a, kind: python, source: 'headtohead.testing.models:tiny_mlp'}]\n"
    )
    argv = [a.format(experiment=experiment) for a in args]
    out = subprocess.run([sys.executable, "-c", _IMPORTS_PROBE, *argv], capture_output=True, text=True, check=True)
    heavy = set(filter(None, out.stdout.rsplit("HEAVY:", 1)[1].strip().split(",")))
    assert heavy <= allowed, (args, heavy)


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["run", "--nope"], "No such option: --nope"),
        (["rnu", "x.yaml"], "Did you mean 'run'?"),
        (["run"], "Missing argument"),
        (["gate", "r.json", "--baseline", "a"], "Missing option '--candidate'"),
    ],
)
def test_command_line_mistakes_are_usage_errors_not_internal_errors(capsys, argv, expected):
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and expected in err and "Usage: h2h" in err
    assert "internal error" not in err and "report it" not in err


def test_version_flag_and_the_help_header_name_the_version(capsys):
    from headtohead import __version__

    main(["--version"])
    assert capsys.readouterr().out.strip() == f"headtohead {__version__}"
    main(["--help"])
    assert f"headtohead {__version__} — compare classification models" in capsys.readouterr().out
