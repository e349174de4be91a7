"""The curated public surface: changing it is a decision, so a test pins it."""

import headtohead


def test_public_names_are_pinned():
    assert sorted(headtohead.__all__) == sorted(
        [
            "__version__",
            "run",
            "compare",
            "Run",
            "train",
            "sweep",
            "gate",
            "compare_machines",
            "suite",
            "Experiment",
            "load_experiment",
            "load_result",
            "load_predictions",
            "H2HError",
            "ConfigError",
            "DataError",
            "ModelError",
            "DeviceError",
            "ResultsError",
        ]
    )
    for name in headtohead.__all__:
        assert getattr(headtohead, name) is not None


def test_errors_share_one_root_and_exit_code_2():
    for cls in (
        headtohead.ConfigError,
        headtohead.DataError,
        headtohead.ModelError,
        headtohead.DeviceError,
        headtohead.ResultsError,
    ):
        assert issubclass(cls, headtohead.H2HError) and cls.exit_code == 2


def test_dir_lists_the_lazy_names():
    names = dir(headtohead)
    assert set(headtohead.__all__) <= set(names) and {"run", "compare", "gate", "suite"} <= set(names)
