"""Python is as safe as the CLI (issue 25 item 6): the CLI's bounds and
messages, integers that name their parameter, a clock with bounded memory
that refuses other threads with RuntimeError, never a panic or an abort."""

from __future__ import annotations

import re
import resource
import subprocess
import threading
import time
import warnings

import numpy as np
import pytest

import fedtopo


@pytest.fixture(scope="module")
def net():
    return fedtopo.Network("aws-north-america")


def cli_error(cli, *args: str) -> str:
    """The CLI's error message for `args` (it must fail)."""
    out = subprocess.run([str(cli.binary), *args], capture_output=True, text=True)
    assert out.returncode != 0, args
    return out.stderr


def test_matcha_rounds_bound_and_message_are_the_clis(cli, net):
    # Was an allocation failure that aborted the interpreter.
    with pytest.raises(ValueError) as e:
        net.overlay("matcha", matcha_rounds=10**12)
    message = str(e.value)
    assert message.startswith("matcha_rounds: expected 1 to 1000000 rounds"), message
    err = cli_error(cli, "compare", "--overlays", "matcha", "--matcha-rounds", "1000000000000")
    # The same words after the option's name.
    assert message[len("matcha_rounds: "):] in err, (message, err)
    for bad in [0, -1, 2**70]:
        with pytest.raises(ValueError, match="matcha_rounds"):
            net.overlay("matcha", matcha_rounds=bad)
    with pytest.raises(ValueError, match="matcha_rounds"):
        net.compare(["matcha"], matcha_rounds=0)


def test_budget_bound_and_message_are_the_clis(cli, net):
    with pytest.raises(ValueError) as e:
        net.overlay("matcha", budget=2.0)
    message = str(e.value)
    assert message.startswith("budget: expected a communication budget in [0.001, 1]"), message
    err = cli_error(cli, "compare", "--overlays", "matcha", "--budget", "2")
    assert "expected a communication budget in [0.001, 1], found `2`" in err, err
    for bad in [float("nan"), 0.0001, -1]:
        with pytest.raises(ValueError, match="budget"):
            net.overlay("matcha", budget=bad)
    with pytest.raises(TypeError, match="budget"):
        net.overlay("matcha", budget="half")


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda n: n.overlay("ring", seed=-1), "seed"),
        (lambda n: n.overlay("ring", seed=2**64), "seed"),
        (lambda n: n.compare(["ring"], seed=-5), "seed"),
        (lambda n: n.overlay("ring").arcs_at(-1), "round"),
        (lambda n: n.overlay("ring").arcs_at(2**64), "round"),
        (lambda n: n.overlay("ring").consensus_matrix(round=-2), "round"),
        (lambda n: n.overlay("ring").to_networkx(round=-1), "round"),
        (lambda n: fedtopo.Clock(n, n.overlay("ring"), seed=-1), "seed"),
        (lambda n: fedtopo.Clock(n, n.overlay("ring")).advance(-3), "rounds"),
    ],
)
def test_bad_integers_name_their_parameter(net, call, name):
    # PyO3 alone raised a bare OverflowError ("can't convert negative int
    # to unsigned") without the parameter's name.
    with pytest.raises(ValueError) as e:
        call(net)
    assert str(e.value).startswith(f"{name} "), str(e.value)
    assert not isinstance(e.value, OverflowError)


def test_non_integers_are_type_errors_naming_the_parameter(net):
    with pytest.raises(TypeError, match="seed"):
        net.overlay("ring", seed=1.5)
    with pytest.raises(TypeError, match="seed"):
        net.overlay("ring", seed=True)
    with pytest.raises(TypeError, match="rounds"):
        fedtopo.Clock(net, net.overlay("ring")).advance("10")
    # NumPy integers are integers.
    assert fedtopo.Clock(net, net.overlay("ring"), seed=np.uint64(3)).advance(np.int64(2)).shape == (22,)


def test_consensus_matrix_refuses_nan_alpha(net):
    o = net.overlay("ring")
    for bad in ["matcha:nan", "matcha:inf", "matcha:-1", "matcha:0", "matcha:2"]:
        with pytest.raises(ValueError, match=r"\(0, 1\]"):
            o.consensus_matrix(bad)
    a = o.consensus_matrix("matcha:0.25")
    assert np.isfinite(a).all() and np.allclose(a.sum(axis=1), 1.0)


def test_advance_is_bounded_per_call(net):
    clock = fedtopo.Clock(net, net.overlay("ring"))
    # Was an endless loop.
    with pytest.raises(ValueError, match=r"^rounds 1000000000000: expected a whole number from 1 to 1000000"):
        clock.advance(10**12)
    with pytest.raises(ValueError, match="rounds"):
        clock.advance(0)
    assert clock.round == 0


def test_advance_can_be_interrupted(net):
    # Ctrl-C during a long advance: a real SIGINT, sent by another process
    # 0.3 s in, interrupts it (advance checks for signals as it runs; one
    # call of 10^6 flow rounds takes ~20 s). A signal needs no GIL, so the
    # test does not depend on how fast a Python thread is scheduled.
    import os
    import signal
    import sys

    clock = fedtopo.Clock(net, net.overlay("ring"), network_model="flow")
    # Python leaves SIGINT alone when it starts with SIGINT ignored (a job
    # started in the background by a shell without job control): install the
    # Ctrl-C handler a terminal would give it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    killer = subprocess.Popen(
        [sys.executable, "-c", f"import os, signal, time; time.sleep(0.3); os.kill({os.getpid()}, signal.SIGINT)"]
    )
    t0 = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt):
            while time.perf_counter() - t0 < 120:
                clock.advance(1_000_000)
    finally:
        killer.wait(timeout=60)
        signal.signal(signal.SIGINT, previous)


def _max_rss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


@pytest.mark.parametrize("network", ["maxplus", "flow"])
def test_clock_memory_stays_constant(net, network):
    # It kept every round's start times: ~220 bytes a round, 44 MB for
    # 200,000 rounds of 22 silos.
    clock = fedtopo.Clock(net, net.overlay("ring"), network_model=network)
    clock.advance(20_000)
    before = _max_rss_kb()
    for _ in range(4):
        clock.advance(50_000)
    grown_mb = (_max_rss_kb() - before) / 1024
    assert clock.round == 220_000
    assert grown_mb < 8, f"{grown_mb:.1f} MB more after 200,000 rounds"


def test_a_clock_used_from_another_thread_raises_runtime_error(net):
    clock = fedtopo.Clock(net, net.overlay("ring"))
    clock.step()
    caught = {}

    def other():
        # `except Exception` catches it (a PanicException would escape).
        for name, use in [("step", clock.step), ("advance", lambda: clock.advance(3)),
                          ("round", lambda: clock.round), ("now_ms", lambda: clock.now_ms)]:
            try:
                use()
            except Exception as e:  # noqa: BLE001 - the point of the test
                caught[name] = e

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert set(caught) == {"step", "advance", "round", "now_ms"}, caught
    for e in caught.values():
        assert type(e) is RuntimeError, repr(e)
        assert "one Clock per thread" in str(e)
    # Its own thread still uses it.
    clock.step()
    assert clock.round == 2
    assert "round=2" in repr(clock)


def test_one_clock_per_thread_works(net):
    o = net.overlay("ring")
    results = {}

    def run(i):
        c = fedtopo.Clock(net, o)
        results[i] = c.advance(50)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3
    for r in results.values():
        np.testing.assert_array_equal(r, fedtopo.Clock(net, o).advance(50))


def test_bare_bandwidth_warns_like_the_cli(cli):
    with pytest.warns(UserWarning, match=r"access=`10` is 10 bit/s .*did you mean 10G"):
        fedtopo.Network("aws-north-america", access=10)
    with pytest.warns(UserWarning, match="core_capacity"):
        fedtopo.Network("aws-north-america", core_capacity="500")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fedtopo.Network("aws-north-america", access="10G", core_capacity="10bps")
    out = subprocess.run([str(cli.binary), "compare", "--access", "10", "--overlays", "ring"],
                         capture_output=True, text=True)
    assert "warning: --access `10` is 10 bit/s" in out.stderr, out.stderr


def test_failures_down_and_up_spellings_agree_and_legacy_warns(net):
    o = net.overlay("ring")
    down = fedtopo.Clock(net, o, failures="node-down:0.1", seed=4).advance(40)
    up = fedtopo.Clock(net, o, failures="node-up:0.9", seed=4).advance(40)
    np.testing.assert_array_equal(down, up)
    with pytest.warns(FutureWarning, match=r"node:0.9.*UP.*node-up:0.9.*node-down:Q"):
        legacy = fedtopo.Clock(net, o, failures="node:0.9", seed=4).advance(40)
    np.testing.assert_array_equal(legacy, up)
    plain = fedtopo.Clock(net, o, seed=4).advance(40)
    assert not np.array_equal(down, plain), "10% failures changed nothing"


def test_failures_mean_the_same_in_the_cli(cli, tmp_path):
    cli("simulate", "--overlays", "ring", "--rounds", "30", "--seed", "2",
        "--failures", "link-down:0.2", "--format", "json", "--out", str(tmp_path))
    rows = [line.split(",") for line in (tmp_path / "starts.csv").read_text().splitlines()[1:]]
    names = {r[0] for r in rows}
    assert names == {"ring/link-down:0.2"}, names
    net = fedtopo.Network("aws-north-america")
    clock = fedtopo.Clock(net, net.overlay("ring", seed=2), seed=2, failures="link-down:0.2")
    t = clock.advance(5)
    expected = sorted((int(r[3]), float(r[4])) for r in rows if int(r[2]) == 5)
    np.testing.assert_allclose(t, [v for _, v in expected], rtol=0, atol=1e-6)


def _params(obj) -> list[str]:
    sig = getattr(obj, "__text_signature__", None) or ""
    names = re.findall(r"[(,]\s*\*?\*?([a-z_]+)", sig)
    return [n for n in names if n not in ("self", "cls", "$self", "$cls", "py")]


@pytest.mark.parametrize(
    "obj",
    [
        fedtopo.Underlay.load,
        fedtopo.Network,
        fedtopo.Network.overlay,
        fedtopo.Network.compare,
        fedtopo.Overlay.consensus_matrix,
        fedtopo.Overlay.to_networkx,
        fedtopo.Overlay.arcs_at,
        fedtopo.Clock,
        fedtopo.Clock.advance,
    ],
)
def test_docstrings_give_every_arguments_format(obj):
    doc = obj.__doc__ or ""
    params = _params(obj)
    assert params, f"{obj}: no signature"
    for p in params:
        assert f"`{p}`" in doc, f"{obj.__qualname__}: `{p}` not described:\n{doc}"


def test_clock_docstring_gives_the_formats():
    doc = fedtopo.Clock.__doc__
    for fmt in ["maxplus", "lognormal:SIGMA", "node-down:Q", "node-up:P", "link-down:Q",
                "RuntimeError", "Memory stays constant"]:
        assert fmt in doc, fmt
