"""Timers and the device layer: host clock, CUDA events read after synchronising (fake GPU)."""

from __future__ import annotations

import time

import pytest

from headtohead.engines.timing import CudaEventTimer, HostTimer, gc_paused, make_timer, run_timed
from headtohead.runtime.devices import TorchBackend, get_backend, is_cuda, use_backend
from headtohead.testing.fake_device import FakeClock, FakeCudaBackend


def test_host_timer_measures_a_sleep():
    timer = HostTimer("cpu")
    token = timer.start()
    time.sleep(0.02)
    (ns,) = timer.collect([timer.stop(token)])
    assert 0.019e9 < ns < 0.2e9


def test_host_timer_with_a_fake_clock_is_exact_and_never_syncs_the_cpu():
    clock, backend = FakeClock(), FakeCudaBackend()
    with use_backend(backend):
        timer = HostTimer("cpu", clock=clock)
        token = timer.start()
        clock.advance(1234)
        assert timer.collect([timer.stop(token)]) == [1234]
    assert backend.sync_calls == []


def test_host_timer_on_a_gpu_synchronises_around_the_call():
    clock, backend = FakeClock(), FakeCudaBackend()
    with use_backend(backend):
        timer = HostTimer("cuda:0", clock=clock)
        timer.stop(timer.start())
    assert backend.sync_calls == ["cuda:0", "cuda:0"]


def test_cuda_events_are_read_only_after_a_synchronize():
    backend = FakeCudaBackend()
    with use_backend(backend):
        timer = CudaEventTimer("cuda:0")
        marks = []
        for ns in (2_000_000, 3_000_000):
            token = timer.start()
            backend.run_kernel("cuda:0", ns)
            marks.append(timer.stop(token))
        start, end = marks[0]
        with pytest.raises(RuntimeError, match="completed"):
            start.elapsed_time(end)  # a timer reading before synchronising would fail like this
        assert timer.collect(marks) == [2_000_000, 3_000_000]
    assert backend.sync_calls == ["cuda:0"]  # one sync for the whole block, not one per call


def test_cuda_timer_sync_each_for_single_stream():
    backend = FakeCudaBackend()
    with use_backend(backend):
        timer = CudaEventTimer("cuda:0", sync_each=True)
        marks = [timer.stop(timer.start()) for _ in range(3)]
        assert len(backend.sync_calls) == 3
        timer.collect(marks)


def test_events_live_on_their_own_device():
    backend = FakeCudaBackend(device_count=2)
    with use_backend(backend):
        timer = CudaEventTimer("cuda:1")
        token = timer.start()
        backend.run_kernel("cuda:0", 5_000_000)  # other GPU: not in this timing
        backend.run_kernel("cuda:1", 1_000_000)
        assert timer.collect([timer.stop(token)]) == [1_000_000]
        with pytest.raises(ValueError):
            backend.create_timing_event("cuda:2")


def test_make_timer_picks_by_device():
    assert isinstance(make_timer("cpu"), HostTimer)
    assert isinstance(make_timer("mps"), HostTimer)
    assert isinstance(make_timer("cuda:0"), CudaEventTimer)
    with pytest.raises(ValueError):
        CudaEventTimer("cpu")


def test_run_timed_meets_both_iteration_and_time_minimums():
    clock = FakeClock()
    timer = HostTimer("cpu", clock=clock)
    calls = []

    def step(x):
        calls.append(x)
        clock.advance(10)

    out = run_timed(timer, step, ["a", "b", "c"], min_iterations=2, clock=clock)
    assert out == [10, 10] and calls == ["a", "b"]
    calls.clear()
    out = run_timed(timer, step, ["a", "b", "c"], min_iterations=2, min_ns=55, clock=clock)
    assert len(out) == 6  # 55 ns of 10-ns calls, and the count check comes first
    calls.clear()
    out = run_timed(timer, step, ["a", "b", "c"], min_iterations=4, multiple_of=3, clock=clock)
    assert calls == ["a", "b", "c"] * 2  # whole passes over the inputs
    with pytest.raises(ValueError):
        run_timed(timer, step, [], min_iterations=1)


def test_gc_is_paused_while_timing_and_restored():
    import gc

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_real_backend_answers_none_for_non_cuda_devices():
    backend = TorchBackend()
    assert backend.max_memory_allocated("cpu") is None and backend.max_memory_reserved("cpu") is None
    backend.reset_peak_memory_stats("cpu")
    backend.synchronize("cpu")
    assert is_cuda("cuda:1") and not is_cuda("cpu")
    assert isinstance(get_backend(), TorchBackend)


def test_fake_memory_peaks_reset_per_request():
    backend = FakeCudaBackend()
    backend.allocate("cuda:0", 10 * 2**20)
    backend.free("cuda:0", 10 * 2**20)
    assert backend.max_memory_allocated("cuda:0") == 10 * 2**20
    assert backend.max_memory_reserved("cuda:0") >= backend.max_memory_allocated("cuda:0")
    backend.reset_peak_memory_stats("cuda:0")
    assert backend.max_memory_allocated("cuda:0") == 0
