from __future__ import annotations

import subprocess
import sys

import pytest

from swarm.batch import LocalExecutor, RayExecutor, executor_from_spec
from swarm.errors import ConfigError


def test_importing_swarm_does_not_import_ray() -> None:
    code = "import sys, swarm, swarm.batch, swarm.cli; print('ray' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_executor_specs_name_local_a_local_ray_or_a_cluster() -> None:
    local = executor_from_spec("local", parallel=3)
    assert isinstance(local, LocalExecutor) and local.parallel == 3
    started = executor_from_spec("ray")
    assert isinstance(started, RayExecutor) and started.address is None
    joined = executor_from_spec("ray:ray://head:10001", parallel=8)
    assert isinstance(joined, RayExecutor)
    assert (joined.address, joined.parallel) == ("ray://head:10001", 8)


def test_env_var_is_refused_for_the_local_executor() -> None:
    with pytest.raises(ConfigError, match="--env-var is for --executor ray"):
        executor_from_spec("local", env_vars=["HOME"])
