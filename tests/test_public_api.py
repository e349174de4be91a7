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


def test_dir_lists_the_public_names_and_nothing_else():
    """dir(), tab completion and help() show the public surface: the lazy names, not the module's helpers."""
    assert dir(headtohead) == sorted(headtohead.__all__)
    assert {"run", "compare", "gate", "suite"} <= set(dir(headtohead))
    for helper in ("Any", "TYPE_CHECKING", "annotations", "PathLike"):  # imports of the module itself
        assert not hasattr(headtohead, helper), helper
