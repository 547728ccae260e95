# fleetscope — the two commands of the quick start:
#   make run    site.yml against the default inventory (this machine), then warehouse and report
#   make test   the whole test suite
# Both build the Python environment (.venv) first: `make run` from the runtime lock (requirements.lock:
# ansible-core, DuckDB, ...) only; `make notebooks` adds the analysis/ notebooks' lock
# (requirements-notebooks.lock: marimo, polars, altair); `make test` and `make lint` add the development
# lock (requirements-dev.lock: the notebooks' packages and pytest, ansible-lint, black, yamllint, ...).

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INVENTORY ?= inventory/localhost.yml
PROFILE ?=
ANSIBLE_ARGS ?=
PYTEST_ARGS ?=
# The machine's own tests (tests/{browser,functional,kernels,lab}) run in order on one worker, the unit tests
# beside them (tests/conftest.py); TEST_WORKERS=0 runs everything in one process.
TEST_WORKERS ?= 2
# Python keeps compiled modules (__pycache__/, ignored by git and by the collection build) even where the
# environment says not to: without them every fork of ansible-playbook compiled each filter plugin it used from
# source, and every fleetscope command the package (a 4-host lab run: 13% more controller CPU).
export PYTHONDONTWRITEBYTECODE :=

# Debian packages the controller's tests need (the hosts' packages come from roles/provision, below;
# openssh-server runs the lab hosts of tests/lab). The cross compilers, their C libraries and qemu-user
# build the kernels for aarch64, riscv64 and ppc64le and run them emulated (tests/kernels/test_cross_arch.py).
CROSS_DEBS := gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-riscv64-linux-gnu libc6-dev-riscv64-cross \
	gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross qemu-user
# The lab hosts share this machine's filesystem and have no route out, so the packages roles/provision installs
# on a Debian host must be here before a lab test runs (on a fresh machine nothing else installs them first).
# (the Debian list of roles/provision/vars/main.yml's __provision_family_packages: its items up to the next family)
PROVISION_DEBS := $(shell sed -n '/^  Debian:/,/^  [^ -]/s/^    - //p' roles/provision/vars/main.yml)
TEST_DEBS := chromium openssh-server $(PROVISION_DEBS) $(CROSS_DEBS)

.PHONY: run test lint sanity venv notebooks dev test-deps clean help

help:
	@echo "make run [INVENTORY=inventory/lab.yml] [PROFILE=quick|standard|full] [ANSIBLE_ARGS=...]"
	@echo "make test [PYTEST_ARGS=...]     make lint     make sanity (ansible-test on the built collection)"
	@echo "make notebooks (add marimo, polars, altair)"
	@echo "make dev (add the development lock)     make clean"

$(VENV)/.installed: requirements.lock pyproject.toml
	@$(PYTHON) -c 'import ensurepip' 2>/dev/null || { echo "installing python3-venv"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q --require-hashes -r requirements.lock
	$(BIN)/pip install -q --no-deps -e .
	touch $@

# The notebooks' packages, hash-locked at the runtime lock's versions.
$(VENV)/.notebooks-installed: $(VENV)/.installed requirements-notebooks.lock
	$(BIN)/pip install -q --require-hashes -r requirements-notebooks.lock
	touch $@

# The development tools, hash-locked like the runtime: a superset of the notebooks' lock at its versions.
$(VENV)/.dev-installed: $(VENV)/.installed requirements-dev.lock
	$(BIN)/pip install -q --require-hashes -r requirements-dev.lock
	touch $@

venv: $(VENV)/.installed

notebooks: $(VENV)/.notebooks-installed

dev: $(VENV)/.dev-installed

run: venv
	$(BIN)/ansible-playbook -i $(INVENTORY) site.yml $(if $(PROFILE),-e fleet_profile=$(PROFILE)) $(ANSIBLE_ARGS)

test-deps:
	@missing=$$(for p in $(TEST_DEBS); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then echo "installing $$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; fi

test: dev test-deps
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/pytest -n $(TEST_WORKERS) --durations=25 $(PYTEST_ARGS)

lint: dev
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/ansible-lint

# ansible-test sanity on the collection as ansible-galaxy builds it (tests/ansible_sanity.py says how); make test
# runs it too (tests/test_ansible_sanity.py).
sanity: dev
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/python tests/ansible_sanity.py

clean:
	rm -rf $(VENV) results reports warehouse/fleet.duckdb kernels/build
