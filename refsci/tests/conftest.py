import os
import subprocess
import sys

import pytest

from refsci import cli


@pytest.fixture(scope="session")
def datasets_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("datasets")
    assert cli.main(["datasets", "export", str(out)]) == 0
    return out


def run_cli(args, input_text=None, env=None):
    """Run `python -m refsci` in a subprocess and return the CompletedProcess."""
    full_env = dict(os.environ)
    full_env.pop("REFSCI_DEBUG", None)
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-m", "refsci", *map(str, args)], input=input_text,
                          capture_output=True, text=True, env=full_env, timeout=120)


def read_all(directory):
    """Map of relative file name -> bytes for every file under directory."""
    files = {}
    for root, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            files[os.path.relpath(path, directory)] = open(path, "rb").read()
    return files
