"""Hardware prefetcher switch for the prefetch experiment, on the cores that document one:

- Intel: MSR 0x1A4 (MISC_FEATURE_CONTROL), bits 0-3 disable the L2 streamer, the L2 adjacent-line, the L1
  DCU streamer and the L1 IP stride prefetchers (Intel's "Disclosure of H/W prefetcher control on some
  Intel processors");
- AMD Zen (family 17h and later): MSR 0xC0000108 (PrefetchControl, AMD's Processor Programming Reference
  for family 19h), bits 0 L1Stream, 1 L1Stride, 2 L1Region, 3 L2Stream and 5 UpDown disable those
  prefetchers (bit 4 is reserved and left as it is).

  msr_prefetch.py check             -> {"possible": bool, "reason": str, "cpus": [...], "msr": int, "bits": int, "vendor": str}
  msr_prefetch.py disable STATE     saves every CPU's value (and which MSR) to STATE (JSON), then sets the bits
  msr_prefetch.py restore STATE     writes the saved values back to the MSR STATE names and removes STATE

Every command prints one JSON object. Nothing is written unless `check` would say possible; a
failure while disabling writes back what was already changed before it exits non-zero. STATE is
written atomically (temporary file, fsync, rename); one that cannot be read back whole stops restore
with the file and the recovery named, and no MSR is written.
"""
import glob
import json
import os
import platform
import struct
import sys

INTEL_MSR, INTEL_BITS = 0x1A4, 0xF
AMD_MSR, AMD_BITS = 0xC0000108, 0x2F
KNOWN_MSRS = {INTEL_MSR: INTEL_BITS, AMD_MSR: AMD_BITS}
FIRST_ZEN_FAMILY = 0x17


def cpus():
    return sorted(int(path.split("/")[-2]) for path in glob.glob("/dev/cpu/[0-9]*/msr"))


def read(cpu, msr):
    fd = os.open(f"/dev/cpu/{cpu}/msr", os.O_RDONLY)
    try:
        return struct.unpack("<Q", os.pread(fd, 8, msr))[0]
    finally:
        os.close(fd)


def write(cpu, msr, value):
    fd = os.open(f"/dev/cpu/{cpu}/msr", os.O_WRONLY)
    try:
        os.pwrite(fd, struct.pack("<Q", value), msr)
    finally:
        os.close(fd)


def cpu_identity():
    """(vendor_id, cpu family) from /proc/cpuinfo."""
    vendor, family = "", None
    with open("/proc/cpuinfo") as handle:
        for line in handle:
            if line.startswith("vendor_id") and not vendor:
                vendor = line.split(":", 1)[1].strip()
            elif line.startswith("cpu family") and family is None:
                family = int(line.split(":", 1)[1].strip() or 0)
            if vendor and family is not None:
                break
    return vendor, family


def prefetch_msr(vendor, family):
    """(msr, bits, None) for a core with a documented prefetcher switch, else (None, None, why not)."""
    if vendor == "GenuineIntel":
        return INTEL_MSR, INTEL_BITS, None
    if vendor == "AuthenticAMD" and family is not None and family >= FIRST_ZEN_FAMILY:
        return AMD_MSR, AMD_BITS, None
    if vendor == "AuthenticAMD":
        return None, None, f"AMD's prefetch-control MSR 0xC0000108 is documented from Zen (family 17h); this CPU is family {family:#x}"
    return None, None, f"no documented prefetcher MSR for this CPU ({vendor or 'unknown vendor'}): Intel 0x1A4, AMD Zen 0xC0000108"


def check():
    machine = platform.machine()
    if machine not in ("x86_64", "i686", "i386"):
        # Arm cores keep their prefetcher controls in implementation-defined registers (CPUECTLR_EL1 and
        # the like) that only the kernel or firmware may write; Linux offers no interface to them.
        return {"possible": False, "cpus": [], "msr": None, "bits": None, "vendor": "",
                "reason": f"the prefetcher MSRs (Intel 0x1A4, AMD Zen 0xC0000108) are x86 registers; this host is "
                          f"{machine}, whose hardware prefetchers Linux offers no interface to switch"}
    vendor, family = cpu_identity()
    msr, bits, why = prefetch_msr(vendor, family)
    status = {"possible": False, "reason": why or "", "cpus": [], "msr": msr, "bits": bits, "vendor": vendor}
    if msr is None:
        return status
    if os.geteuid() != 0:
        return {**status, "reason": "writing MSRs needs root"}
    found = cpus()
    if not found:
        return {**status, "reason": "no /dev/cpu/N/msr: the msr driver is not loaded (modprobe msr)"}
    try:
        read(found[0], msr)
    except OSError as error:
        # a hypervisor that does not pass the MSR through refuses the read (EIO in a KVM guest)
        return {**status, "cpus": found, "reason": f"reading MSR {msr:#x} failed: {error}"}
    return {**status, "possible": True, "cpus": found}


def saved_values(state_file):
    """(MSR, CPU -> value) from STATE; exits with the file and the recovery named when it cannot be trusted.
    A STATE written before the MSR was recorded per vendor names Intel's."""
    try:
        with open(state_file) as handle:
            saved = json.load(handle)
        msr = int(saved["msr"])
        values = {int(cpu): int(value) for cpu, value in saved["values"].items()}
        if msr not in KNOWN_MSRS or not values:
            raise ValueError(f"it is not a record of a prefetcher MSR ({', '.join(f'{m:#x}' for m in KNOWN_MSRS)})")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise SystemExit(json.dumps({"error": (
            f"{state_file} cannot be read as saved prefetcher MSR values ({type(error).__name__}: {error}): the "
            "hardware prefetchers may still be disabled. A power cycle or reboot re-enables them; or write each "
            f"CPU's original value back with wrmsr -p CPU MSR VALUE (0x1a4 on Intel, 0xc0000108 on AMD). Then "
            f"delete {state_file}.")}))
    return msr, values


def restore(state_file):
    if not os.path.exists(state_file):
        return {"restored": []}
    msr, values = saved_values(state_file)
    try:
        for cpu, value in values.items():
            write(cpu, msr, value)
    except OSError as error:
        raise SystemExit(json.dumps({"error": (
            f"writing MSR {msr:#x} failed ({error}); {state_file} is kept. Load the msr driver (modprobe msr) "
            "and run playbooks/restore.yml again; if the host was rebooted since, the prefetchers are on "
            f"again and {state_file} can be deleted.")}))
    os.remove(state_file)
    return {"restored": sorted(values), "msr": msr}


def disable(state_file):
    status = check()
    if not status["possible"]:
        raise SystemExit(json.dumps({"error": status["reason"]}))
    if os.path.exists(state_file):
        raise SystemExit(json.dumps({"error": f"{state_file} exists: restore it first"}))
    msr, bits = status["msr"], status["bits"]
    values = {str(cpu): read(cpu, msr) for cpu in status["cpus"]}
    os.makedirs(os.path.dirname(state_file), mode=0o700, exist_ok=True)
    with open(state_file + ".tmp", "w") as handle:
        json.dump({"msr": msr, "values": values}, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(state_file + ".tmp", state_file)
    try:
        for cpu, value in values.items():
            write(int(cpu), msr, value | bits)
    except OSError as error:
        restore(state_file)
        raise SystemExit(json.dumps({"error": f"writing MSR {msr:#x} failed: {error}; originals written back"}))
    return {"disabled": sorted(int(cpu) for cpu in values), "original": values, "msr": msr, "bits": bits,
            "vendor": status["vendor"]}


def main(argv):
    if len(argv) == 2 and argv[1] == "check":
        result = check()
    elif len(argv) == 3 and argv[1] in ("disable", "restore"):
        result = disable(argv[2]) if argv[1] == "disable" else restore(argv[2])
    else:
        raise SystemExit(__doc__)
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv)
