"""A stand-in for ansible-test's pip bootstrap script, which stays inside the package registries.

ansible-test creates each sanity test's virtual environment without pip and bootstraps pip in it by running
get-pip-<version>.py, which it downloads from a host of its own (not a package registry) unless a copy is
cached at ~/.ansible/test/cache/get_pip_<version>.py. tests/ansible_sanity.py puts this file there instead:
run with the new environment's Python and get-pip's arguments (`pip==24.2 --no-setuptools --no-wheel` and pip
options), it installs pip from the Python's own ensurepip (no network), then the requested pip version from the
package index pip is configured for (PyPI), and removes setuptools and wheel when asked not to keep them.
"""

import subprocess
import sys

MARKER = "fleetscope pip bootstrap stand-in"  # tests/ansible_sanity.py recognises (and updates) its own copy


def main(arguments):
    packages = [argument for argument in arguments if not argument.startswith("-")]
    options = [argument for argument in arguments if argument.startswith("-")
               and argument not in ("--no-setuptools", "--no-wheel")]
    subprocess.run([sys.executable, "-m", "ensurepip", "--default-pip"], check=True)
    subprocess.run([sys.executable, "-m", "pip", "install", *options, *packages], check=True)
    unwanted = [name for name, flag in (("setuptools", "--no-setuptools"), ("wheel", "--no-wheel"))
                if flag in arguments]
    if unwanted:
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "--yes", "--quiet", *unwanted], check=False)


if __name__ == "__main__":
    main(sys.argv[1:])
