"""The party server: provers forked from a warm process keep every guarantee of started ones."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from proofgames.harness import play
from proofgames.isolation import _served
from proofgames.isolation._forked import PARTY_NAME, SPARE_NAME, WARMING_NAME
from proofgames.isolation._served import ENV, ServedProcess, ServerUnavailable
from proofgames.isolation._spares import runnable

SRC = Path(__file__).resolve().parents[2] / "src"
ROOT = SRC.parent
IDLE = (SPARE_NAME, WARMING_NAME)
pytestmark = [
    pytest.mark.slow,  # each test starts a server (and warms it) or a V process
    pytest.mark.skipif(sys.platform != "linux", reason="the party server is Linux only"),
]


def _start(path: Path, *spares: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    env.pop(ENV, None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "proofgames.isolation.server", str(path), *spares],
        stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
    )  # fmt: skip
    assert proc.stderr is not None
    line = proc.stderr.readline()  # "party server ready on ..." once it listens
    assert "ready" in line, line + proc.stderr.read()
    return proc


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    path = tmp_path_factory.mktemp("srv") / "party.sock"
    proc = _start(path)
    yield str(path), proc.pid
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    assert not path.exists()  # it removes its socket on the way out


def _children(pid: int, *, spares: bool = False) -> list[int]:
    """The processes whose parent is ``pid`` (zombies included), from /proc.

    Spares, warm or warming, are left out; with ``spares``, only the warm ones are kept.
    """
    found = []
    for entry in os.listdir("/proc"):
        try:
            text = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        name, stat = text[text.index("(") + 1 : text.rindex(")")], text.rsplit(")", 1)[1].split()
        if int(stat[1]) == pid and (name == SPARE_NAME if spares else name not in IDLE):
            found.append(int(entry))
    return found


@pytest.fixture(scope="module")
def bare_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """A server without spares: it forks each child on request."""
    path = tmp_path_factory.mktemp("bare") / "party.sock"
    proc = _start(path, "--spares", "0")
    yield str(path), proc.pid
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0


def _warm_spares(pid: int, count: int = 2, seconds: float = 30.0) -> set[int]:
    """Wait until the server has ``count`` warm spares (named so once warm); their pids."""
    end = time.monotonic() + seconds
    while len(found := _children(pid, spares=True)) < count:
        assert time.monotonic() < end, f"the server has {len(found)} warm spares, not {count}"
        time.sleep(0.02)
    time.sleep(0.2)  # each has said so on its socket by now
    return set(found)


def _wait_gone(pid: int, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not _children(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_debate_through_the_server_is_the_in_process_one(server, monkeypatch) -> None:
    monkeypatch.setenv(ENV, server[0])
    inp = play("bisection", "bb3", claim=1, a="honest", b="honest")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback to a started process would warn
        iso = play("bisection", "bb3", claim=1, a="honest", b="honest", isolation="process")
        lie = play("bisection", "bb3", claim=0, a="flip-step", b="honest", isolation="process")
    assert (iso.winner, iso.messages, iso.isolation) == (inp.winner, inp.messages, "process")
    assert lie.winner == "B" and lie.forfeit is None
    assert _wait_gone(server[1])  # every child reaped once V let go


@pytest.mark.parametrize("source", ["spare", "fork"])
def test_the_child_is_a_fresh_process_with_v_s_setting(
    source, server, bare_server, tmp_path, monkeypatch
) -> None:
    """Handed to a warm spare or forked on request, the child is set up the same."""
    import resource

    if source == "spare":
        spares = _warm_spares(server[1])
    else:
        server, spares = bare_server, set()
    monkeypatch.chdir(tmp_path)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 200), hard))
    try:
        child = ServedProcess(server[0], "honest", None, None)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    try:
        time.sleep(0.3)  # let it set itself up and block on its hello
        assert (child.pid in spares) == (source == "spare")
        assert Path(f"/proc/{child.pid}/comm").read_text().strip() == PARTY_NAME
        stat = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()
        assert int(stat[1]) == server[1]  # forked by the server
        assert os.getsid(child.pid) == child.pid  # its own session and process group
        assert os.readlink(f"/proc/{child.pid}/cwd") == str(tmp_path)
        limits = Path(f"/proc/{child.pid}/limits").read_text()
        assert any(x.startswith("Max open files") and " 200 " in x for x in limits.splitlines())
        fds = {int(x) for x in os.listdir(f"/proc/{child.pid}/fd")}
        assert {0, 1, 2} <= fds and len(fds) <= 4  # the pipes and its private channel only
    finally:
        child.kill_group()
        assert child.wait(10) == -signal.SIGKILL
    assert child.poll() == -signal.SIGKILL


HOSTILE = {
    "crash": "closed its output",
    "hang": "timed out",
    "garbage": "malformed",
    "flood": "longer than 32768 bytes",
}


def _v(script: str, server_path: str | None) -> dict:
    """Run V in its own process (the hostile strategies stay out of this session)."""
    env = dict(os.environ, PYTHONPATH=f"{SRC}{os.pathsep}{ROOT}",
               PROOFGAMES_PLUGINS="tests.isolation.hostile_party")  # fmt: skip
    env.pop(ENV, None)
    if server_path is not None:
        env[ENV] = server_path
    code = "import json, warnings, proofgames.plugins, proofgames.wire as w\n" + script
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=120)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.splitlines()[-1])


@pytest.mark.parametrize("how", sorted(HOSTILE))
def test_a_hostile_child_under_the_server_loses(server, how: str) -> None:
    _warm_spares(server[1])  # played by a spare: V's environment names the plugin
    result = _v(
        textwrap.dedent(f"""
        proofgames.plugins.load()
        w.MAX_LINE = 1 << 15
        from proofgames.harness import play
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            out = play("bisection", "bb3", claim=1, a="honest", b={how!r},
                       isolation="process", timeout=3)
        print(json.dumps([out.winner, out.forfeit, out.reason, [str(x.message) for x in said]]))
        """),
        server[0],
    )
    winner, forfeit, reason, said = result
    assert (winner, forfeit) == ("A", "B")  # its plugin came through V's environment
    assert HOSTILE[how] in reason
    assert said == []  # served, not started anew
    assert _wait_gone(server[1])  # killed and reaped; the server serves on
    assert _children(server[1]) == []


def test_a_killed_server_falls_back_with_a_warning(tmp_path) -> None:
    path = tmp_path / "gone.sock"
    proc = _start(path)
    proc.kill()
    proc.wait()
    assert path.exists()  # SIGKILL left the socket behind: nobody listens on it
    script = """
    from proofgames.harness import play
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        out = play("bisection", "bb3", claim=1, a="honest", b="crash", isolation="process")
    print(json.dumps([out.winner, out.forfeit, [str(x.message) for x in said]]))
    """
    winner, forfeit, said = _v("proofgames.plugins.load()\n" + textwrap.dedent(script), str(path))
    assert (winner, forfeit) == ("A", "B")  # the started process loses just the same
    assert len(said) == 2 and all("not used (cannot connect" in s for s in said)


def test_a_server_of_other_code_refuses_and_v_starts_the_party(server, monkeypatch) -> None:
    other = dict(_served.identity(), src="/elsewhere/proofgames")
    monkeypatch.setattr(_served, "identity", lambda: other)
    with pytest.raises(ServerUnavailable, match="refused: V's src is '/elsewhere"):
        ServedProcess(server[0], "honest", None, None)
    monkeypatch.setenv(ENV, server[0])
    with pytest.warns(RuntimeWarning, match="not used \\(it refused"):
        out = play("bisection", "bb3", claim=1, a="honest", b="honest", isolation="process")
    assert out.winner == "A"


@pytest.mark.parametrize("how", ["connection closed", "let go"])
def test_v_letting_go_kills_the_child(server, how: str) -> None:
    child = ServedProcess(server[0], "honest", None, None)
    assert child.poll() is None
    if how == "let go":  # the end of a debate: V does not wait for the exit
        child.let_go()
        assert child.poll() == -signal.SIGKILL
    else:
        child._release()  # V's end of the connection closes (say, V died)
    assert _wait_gone(server[1])


def test_requests_that_are_not_ours_are_refused(server) -> None:
    import socket

    for request in (b"not json\n", b'{"type": "fork", "spec": "honest"}\n', b"\xff" * 100):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(10)
            sock.connect(server[0])
            sock.sendall(request)
            sock.shutdown(socket.SHUT_WR)
            answer = sock.recv(4096)
        assert answer == b"" or b'"refused"' in answer
    child = ServedProcess(server[0], "honest", None, None)  # it still serves
    child.kill_group()
    assert child.wait(10) == -signal.SIGKILL


def test_idle_connections_cannot_starve_the_server(server) -> None:
    import socket

    from proofgames.isolation.server import MAX_PENDING

    idle = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(MAX_PENDING + 8)]
    try:
        for sock in idle:
            sock.connect(server[0])
        child = ServedProcess(server[0], "honest", None, None)  # still answered
        child.kill_group()
        assert child.wait(10) == -signal.SIGKILL
    finally:
        for sock in idle:
            sock.close()


def test_a_full_queue_delays_v_but_does_not_turn_it_away(tmp_path, monkeypatch) -> None:
    """A Unix socket with a full queue refuses at once (EAGAIN), even with a timeout: V
    tries again until the server has drained it, and gives up after CONNECT_SECONDS."""
    import socket
    import threading

    path = str(tmp_path / "full.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(0)
    queued = []
    try:
        for _ in range(1000):  # fill the queue: the next connect is refused at once
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            probe.setblocking(False)
            try:
                probe.connect(path)
            except BlockingIOError:
                probe.close()
                break
            queued.append(probe)
        else:
            pytest.skip("this system queued 1,000 connections to a listen(0) socket")
        monkeypatch.setattr(_served, "CONNECT_SECONDS", 0.3)
        started = time.monotonic()
        with pytest.raises(ServerUnavailable, match="cannot connect"):
            _served._connected(path)
        assert time.monotonic() - started >= 0.3  # it waited for room, then gave up

        monkeypatch.setattr(_served, "CONNECT_SECONDS", 10.0)
        drained: list[socket.socket] = []
        drain = threading.Timer(0.2, lambda: drained.extend(listener.accept()[0] for _ in queued))
        drain.start()
        sock = _served._connected(path)  # waits until the queue has room
        drain.join()
        sock.close()
        for conn in drained:
            conn.close()
    finally:
        for probe in queued:
            probe.close()
        listener.close()


def test_a_bad_socket_path_is_one_clear_error(tmp_path) -> None:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    bad = str(tmp_path / "no" / "such" / "folder.sock")
    out = subprocess.run(
        [sys.executable, "-m", "proofgames", "party-server", bad],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1].startswith("error:") and "folder" in out.stderr


def test_a_stopped_server_cannot_make_v_wait(tmp_path, monkeypatch) -> None:
    """A party may SIGSTOP the server (same user): V's waits on it stay bounded."""
    path = tmp_path / "stopped.sock"
    proc = _start(path)
    try:
        child = ServedProcess(str(path), "honest", None, None)
        os.kill(proc.pid, signal.SIGSTOP)
        child.kill_group()
        assert child.wait(30) == _served.UNKNOWN_EXIT  # after REPORT_GRACE, not for ever
        monkeypatch.setattr(_served, "CONNECT_SECONDS", 1.0)
        start = time.monotonic()
        with pytest.raises(ServerUnavailable, match="timed out"):
            ServedProcess(str(path), "honest", None, None)  # V then starts the process
        assert time.monotonic() - start < 10
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        proc.terminate()
        proc.wait(30)


def test_letting_go_of_a_child_that_has_no_group_yet_does_not_wedge_the_server(tmp_path) -> None:
    """V can let go before the forked child has run ``setsid()``: its process group is
    then not its own, so killing the group misses it and the server's ``waitpid`` waited
    for ever (the whole server with it; test_v_letting_go_kills_the_child failed so about
    one run in five). The child itself is killed too."""
    import socket
    import threading

    from proofgames.isolation.server import PartyServer, _Conn

    server = PartyServer(str(tmp_path / "drop.sock"))
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # a child still in the server's process group, waiting (as for a hello)
        time.sleep(60)
        os._exit(0)
    conn = _Conn(ours, pid=pid)
    dropping = threading.Thread(target=server._drop, args=(conn,), kwargs={"kill": True})
    try:
        dropping.start()
        dropping.join(10)
        assert not dropping.is_alive(), "the server waited for a child it had not killed"
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # killed and reaped by the server
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        dropping.join(10)
        theirs.close()
        server.close()


def test_spares_come_back_once_the_server_is_quiet(server, monkeypatch) -> None:
    before = _warm_spares(server[1])
    monkeypatch.setenv(ENV, server[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = play("bisection", "bb3", claim=1, a="honest", b="honest", isolation="process")
    assert out.winner == "A"
    after = _warm_spares(server[1])  # two new ones, forked once the debate was over
    assert not before & after
    assert _wait_gone(server[1])  # the two that played were reaped


def test_a_stopped_or_killed_spare_is_never_handed_a_party(tmp_path, monkeypatch) -> None:
    """Another process of the user may stop or kill an idle spare: the server drops it
    (killed and reaped) and forks a child for the request instead."""
    path = tmp_path / "spares.sock"
    proc = _start(path)
    try:
        stopped, killed = sorted(_warm_spares(proc.pid))
        os.kill(stopped, signal.SIGSTOP)
        os.kill(killed, signal.SIGKILL)
        end = time.monotonic() + 10  # signals take effect when delivered, not when sent
        while any(runnable(p) for p in (stopped, killed)) and time.monotonic() < end:
            time.sleep(0.01)
        monkeypatch.setenv(ENV, str(path))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = play("bisection", "bb3", claim=1, a="honest", b="honest", isolation="process")
        assert (out.winner, out.forfeit) == ("A", None), out.reason
        assert _wait_gone(proc.pid)
        for pid in (stopped, killed):  # no longer the server's child, not even a zombie
            assert pid not in _children(proc.pid, spares=True)
            assert not Path(f"/proc/{pid}").exists() or _ppid(pid) != proc.pid
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


def _ppid(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError):
        return None


def test_stopping_the_server_ends_its_spares(tmp_path) -> None:
    proc = _start(tmp_path / "stop.sock")
    spares = _warm_spares(proc.pid)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    for pid in spares:  # killed and reaped by the server, not left to init
        assert not Path(f"/proc/{pid}").exists() or _ppid(pid) is None


@pytest.mark.parametrize("args", [["--spares"], ["--spares", "-1"], ["--spares", "x"],
                                  ["--spares", "65"], ["--spares", "2"]])  # fmt: skip
def test_a_bad_spares_count_is_the_usage(args) -> None:
    """(The last: a count but no socket.)"""
    env = dict(os.environ, PYTHONPATH=str(SRC))
    out = subprocess.run([sys.executable, "-m", "proofgames.isolation.server", *args],
                         capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    assert out.returncode == 2 and out.stderr.startswith("usage:"), out.stderr


def test_the_command_line_keeps_the_server_s_default() -> None:
    import inspect

    from proofgames.cli.debate import party_server
    from proofgames.isolation.server import SPARES

    assert inspect.signature(party_server).parameters["spares"].default == SPARES
