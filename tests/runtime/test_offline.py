"""``--offline`` / ``HF_HUB_OFFLINE=1``: no network attempt at all, checked with networking blocked."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap

import pytest
import yaml

from headtohead.cli.main import main
from headtohead.runtime.offline import OFFLINE_ENV, NetworkBlocked, offline_mode, offline_requested
from headtohead.testing.data import make_text_table

# Loaded first by the child process (PYTHONPATH): every lookup or connection to another
# host is recorded and refused, below anything headtohead or the hub libraries do.
BLOCK_NETWORK_PY = textwrap.dedent("""\
    import os
    import socket

    _LOG = os.environ["H2H_NETWORK_LOG"]
    _LOCAL = {None, "", "localhost", "127.0.0.1", "::1"}


    def _refuse(what):
        with open(_LOG, "a") as log:
            log.write(what + "\\n")
        return OSError("network blocked by the test")


    _getaddrinfo, _connect, _connect_ex = socket.getaddrinfo, socket.socket.connect, socket.socket.connect_ex


    def getaddrinfo(host, *args, **kwargs):
        if host not in _LOCAL:
            raise _refuse(f"lookup {host}")
        return _getaddrinfo(host, *args, **kwargs)


    def connect(sock, address):
        if isinstance(address, tuple) and address[0] not in _LOCAL:
            raise _refuse(f"connect {address}")
        return _connect(sock, address)


    def connect_ex(sock, address):
        if isinstance(address, tuple) and address[0] not in _LOCAL:
            raise _refuse(f"connect {address}")
        return _connect_ex(sock, address)


    socket.getaddrinfo, socket.socket.connect, socket.socket.connect_ex = getaddrinfo, connect, connect_ex
    """)


def test_offline_mode_blocks_other_hosts_allows_loopback_and_restores(monkeypatch):
    for name in OFFLINE_ENV:
        monkeypatch.delenv(name, raising=False)
    patched = ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr")
    originals = [getattr(socket, name) for name in patched] + [socket.socket.connect, socket.socket.connect_ex]
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    with offline_mode() as blocked:
        assert all(os.environ[name] == value for name, value in OFFLINE_ENV.items())
        assert offline_requested()
        with pytest.raises(NetworkBlocked, match="network access to lookup of huggingface.co is blocked"):
            socket.getaddrinfo("huggingface.co", 443)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as raw, pytest.raises(NetworkBlocked):
            raw.connect(("93.184.216.34", 80))
        with pytest.raises(NetworkBlocked):
            socket.gethostbyname("example.org")
        with socket.create_connection(server.getsockname(), timeout=5):  # loopback still works
            pass
        try:
            socket.gethostbyname(socket.gethostname())  # this machine's own name is not the network
        except socket.gaierror:
            pass  # a container whose name does not resolve: fine, as long as it was not blocked
        assert blocked == ["lookup of huggingface.co", "connection to 93.184.216.34:80", "lookup of example.org"]
    server.close()
    assert [getattr(socket, name) for name in patched] + [socket.socket.connect, socket.socket.connect_ex] == originals
    assert not any(name in os.environ for name in OFFLINE_ENV)


def test_cli_blocks_a_library_that_ignores_the_offline_switches(tmp_path, capsys, monkeypatch):
    """With HF_HUB_OFFLINE=1 (set for every test) the CLI guards the socket layer too."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    (tmp_path / "phone_home.py").write_text(
        textwrap.dedent("""\
        import socket

        def make():
            def predict(texts):
                socket.getaddrinfo("telemetry.example.com", 443)  # what a careless library might do
                return [[0.5, 0.5] for _ in texts]
            predict.label_names = ["negative", "positive"]
            return predict
        """)
    )
    table = make_text_table(tmp_path / "dev.csv", n_per_class=2)
    path = tmp_path / "exp.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "data": {"path": str(table)},
                "speed": {"enabled": False},
                "models": [{"name": "m", "kind": "python", "source": "phone_home:make", "outputs": "probabilities"}],
            }
        )
    )
    with pytest.raises(SystemExit) as info:
        main(["run", str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert info.value.code == 2
    assert "offline mode: blocked a network attempt (lookup of telemetry.example.com)" in err
    assert "NetworkBlocked" in err and "model 'm'" in err


def test_offline_run_makes_no_network_attempt(tmp_path):
    """A real process, networking blocked underneath: a local model runs, a hub id fails fast, nothing dials out."""
    from headtohead.testing.text import make_tiny_bert

    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(BLOCK_NETWORK_PY)
    table = make_text_table(tmp_path / "dev.csv", n_per_class=4)
    local = make_tiny_bert(tmp_path / "bert", ["negative", "positive"])
    path = tmp_path / "exp.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "offline",
                "data": {"path": str(table)},
                "speed": {"enabled": False},
                "models": [
                    {"name": "local", "kind": "transformers", "source": str(local)},
                    {"name": "hub", "kind": "transformers", "source": "google-bert/bert-base-uncased"},
                ],
            }
        )
    )
    log = tmp_path / "network.log"
    env = {k: v for k, v in os.environ.items() if k not in OFFLINE_ENV and k != "TRANSFORMERS_OFFLINE"}
    env.update(
        PYTHONPATH=os.pathsep.join([str(blocker), env.get("PYTHONPATH", "")]),
        H2H_NETWORK_LOG=str(log),
        HF_HOME=str(tmp_path / "hf-home"),
    )  # an empty cache: nothing of the hub id is available
    cmd = [sys.executable, "-m", "headtohead.cli.main", "run", str(path), "--out", str(tmp_path / "out"), "--offline"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)  # ends by itself: no clock to beat
    assert done.returncode == 2, done.stderr
    assert "model 'hub'" in done.stderr and "is not available offline" in done.stderr
    assert "results of local are kept" in done.stderr
    assert "blocked a network attempt" not in done.stderr  # no library even tried
    assert not log.exists(), log.read_text()
