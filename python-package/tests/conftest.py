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


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) the process pid has used so far, from
    /proc/<pid>/stat (clock-tick resolution, 10 ms). The interrupt tests compare it with the
    child's own time.process_time() when it catches KeyboardInterrupt: the CPU the library spent
    between the signal and the stop, which does not grow with the machine's load as the wall
    time does (a wall-clock limit of 1.5 s failed once at load 4-6 on 2 cores)."""
    import os

    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is the state (field 3 of proc(5)); utime and stime are fields 14 and 15
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
