import pathlib
import signal

import pytest

DATA = pathlib.Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="session")
def data_dir() -> pathlib.Path:
    return DATA


def sigint_default():
    """preexec_fn for a child that must receive Ctrl-C: a shell starts background jobs with
    SIGINT ignored, the ignored disposition survives exec, and Python then installs no
    KeyboardInterrupt handler at start-up, so the SIGINT the interrupt tests send would be lost
    (seen when CI was started with `nohup ... &`)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
