"""C kernels compiled on first use: the cache, the fallback to numba, the backend switch."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from pathlib import Path

import pytest

from proofgames import ProofgamesError, _native

SOURCE = "long add(long x, long y) { return x + y; }"


@pytest.fixture(autouse=True)
def _fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts with nothing loaded and an empty cache of its own."""
    monkeypatch.setenv(_native.CACHE_ENV, str(tmp_path))
    monkeypatch.delenv(_native.BACKEND_ENV, raising=False)
    _native.reset()
    yield
    _native.reset()


def _compiler_present() -> bool:
    return _native._compiler() is not None


@pytest.mark.skipif(not _compiler_present(), reason="no C compiler")
def test_a_kernel_is_built_once_into_the_cache_and_then_only_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lib = _native.load("add", SOURCE)
    assert lib is not None and lib.add(ctypes.c_long(40), ctypes.c_long(2)) == 42
    path = _native.library_path("add", SOURCE)
    assert path.parent == tmp_path / "kernels" and path.exists()
    assert list(path.parent.iterdir()) == [path]  # no temporary file left beside it
    _native.reset()

    def no_build(source: str, target: Path) -> None:
        raise AssertionError("rebuilt a cached kernel")

    monkeypatch.setattr(_native, "_build", no_build)
    assert _native.load("add", SOURCE) is not None


def test_an_edited_source_gets_a_file_of_its_own() -> None:
    assert _native.library_path("add", SOURCE) != _native.library_path("add", SOURCE + " ")
    assert _native.library_path("add", SOURCE) == _native.library_path("add", SOURCE)


def test_without_a_compiler_auto_falls_back_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CC", "no-such-compiler-here")
    assert _native.load("add", SOURCE) is None
    assert "no C compiler" in _native.FAILURES["add"]


def test_without_a_compiler_the_c_backend_is_an_error_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CC", "no-such-compiler-here")
    monkeypatch.setenv(_native.BACKEND_ENV, "c")
    with pytest.raises(_native.KernelError, match="'add' unavailable: no C compiler"):
        _native.load("add", SOURCE)


@pytest.mark.skipif(not _compiler_present(), reason="no C compiler")
def test_a_source_that_does_not_compile_falls_back_with_the_compilers_message() -> None:
    assert _native.load("broken", "this is not C;") is None
    assert "failed" in _native.FAILURES["broken"]


def test_the_numba_backend_loads_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(_native.BACKEND_ENV, "numba")
    assert _native.load("add", SOURCE) is None
    assert not (tmp_path / "kernels").exists() and _native.FAILURES == {}


def test_an_unknown_backend_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_native.BACKEND_ENV, "fortran")
    with pytest.raises(ProofgamesError, match="PROOFGAMES_KERNELS must be one of auto, c, numba"):
        _native.load("add", SOURCE)


@pytest.mark.skipif(not _compiler_present(), reason="no C compiler")
def test_a_cached_file_that_does_not_load_is_rebuilt_once() -> None:
    path = _native.library_path("add", SOURCE)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a shared library")
    lib = _native.load("add", SOURCE)
    assert lib is not None and lib.add(ctypes.c_long(1), ctypes.c_long(2)) == 3
    assert _native.FAILURES == {}


def test_threads_loading_a_kernel_at_once_build_and_open_it_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two provers' set-ups reach for the engine at once: one build, one library."""
    import threading
    import time

    opened: list[str] = []

    def slow_open(source: str, path: Path) -> object:
        opened.append(source)
        time.sleep(0.05)  # the other thread arrives meanwhile
        return object()

    monkeypatch.setattr(_native, "_open", slow_open)
    got: list[object] = []
    threads = [
        threading.Thread(target=lambda: got.append(_native.load("add", SOURCE))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(opened) == 1 and len(got) == 4 and all(g is got[0] for g in got)
