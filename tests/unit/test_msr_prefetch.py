"""The prefetcher switch's check (roles/kernels/files/msr_prefetch.py) says why it cannot run on a host
that is not x86, before it opens any MSR: Arm's prefetcher controls have no Linux interface; on x86 the vendor
chooses the MSR (Intel 0x1A4, AMD Zen 0xC0000108)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "roles" / "kernels" / "files" / "msr_prefetch.py"


@pytest.fixture
def msr_prefetch():
    spec = importlib.util.spec_from_file_location("msr_prefetch", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("machine", ["aarch64", "riscv64", "ppc64le"])
def test_not_possible_off_x86_with_the_reason(msr_prefetch, monkeypatch, machine):
    monkeypatch.setattr(msr_prefetch.platform, "machine", lambda: machine)
    monkeypatch.setattr(msr_prefetch, "cpus", lambda: pytest.fail("an MSR device was looked for"))
    status = msr_prefetch.check()
    assert status["possible"] is False and status["cpus"] == []
    assert f"this host is {machine}" in status["reason"] and "are x86 registers" in status["reason"]


def test_x86_still_asks_the_vendor(msr_prefetch, monkeypatch):
    monkeypatch.setattr(msr_prefetch.platform, "machine", lambda: "x86_64")
    status = msr_prefetch.check()
    vendor, family = msr_prefetch.cpu_identity()
    assert "this host is" not in status["reason"]  # on x86 the vendor, root and the driver decide
    msr, _, why = msr_prefetch.prefetch_msr(vendor, family)
    if msr is None:  # neither Intel nor AMD Zen: the vendor's reason, before any MSR device is looked for
        assert status["possible"] is False and status["reason"] == why
    else:  # Intel 0x1A4 or AMD Zen 0xC0000108: root, the driver and the read decide
        assert status["msr"] == msr and (status["possible"] or status["reason"])
