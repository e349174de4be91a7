"""The cycle collector during a run: what existed is set aside, what the run makes is still freed."""

from __future__ import annotations

import gc
import weakref

import pytest

from headtohead.runtime.heap import libraries_set_aside


class _Node:
    """An object that can sit in a reference cycle and be watched through a weak reference."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def _nothing_frozen():
    if gc.get_freeze_count():
        pytest.skip("something in this process froze its heap already")
    yield
    assert gc.get_freeze_count() == 0


def test_cycles_made_inside_are_freed_and_what_existed_is_freed_after():
    before = _Node()
    watch_before = weakref.ref(before)
    with libraries_set_aside() as heap:
        assert gc.get_freeze_count() > 0
        del before
        gc.collect()
        assert watch_before() is not None  # set aside: a full collection inside does not walk it
        inside = _Node()
        watch_inside = weakref.ref(inside)
        heap.mark()
        frozen = gc.get_freeze_count()
        model = _Node()  # made after the last mark, as a model loaded after setup
        watch_model = weakref.ref(model)
        del model
        gc.collect()
        assert watch_model() is None  # the run's own cycles are collected as before
        assert gc.get_freeze_count() == frozen
        del inside
    gc.collect()
    assert watch_before() is None and watch_inside() is None  # everything goes back to the collector on exit


def test_a_full_collection_inside_walks_only_what_came_after():
    keep = [[_Node() for _ in range(100)] for _ in range(2000)]  # 200,000 tracked objects in long-lived lists
    with libraries_set_aside():
        gc.collect()
        assert gc.get_freeze_count() >= 200_000
        assert len(gc.get_objects()) < 10_000  # the collector's generations hold only what came after entry
    assert len(gc.get_objects()) > 200_000
    del keep


def test_the_heap_is_given_back_when_the_run_fails():
    with pytest.raises(RuntimeError), libraries_set_aside():
        raise RuntimeError("a model failed")
    assert gc.get_freeze_count() == 0
