"""Hardware prefetcher switch for the prefetch experiment: MSR 0x1A4 (MISC_FEATURE_CONTROL) on Intel
cores, whose bits 0-3 disable the L2 streamer, the L2 adjacent-line, the L1 DCU streamer and the L1 IP
stride prefetchers (Intel's "Disclosure of H/W prefetcher control on some Intel processors").

  msr_prefetch.py check             -> {"possible": bool, "reason": str, "cpus": [...]}
  msr_prefetch.py disable STATE     saves every CPU's value to STATE (JSON), then sets bits 0-3
  msr_prefetch.py restore STATE     writes the saved values back and removes STATE (no STATE: nothing)

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

MSR = 0x1A4
DISABLE_BITS = 0xF


def cpus():
    return sorted(int(path.split("/")[-2]) for path in glob.glob("/dev/cpu/[0-9]*/msr"))


def read(cpu):
    fd = os.open(f"/dev/cpu/{cpu}/msr", os.O_RDONLY)
    try:
        return struct.unpack("<Q", os.pread(fd, 8, MSR))[0]
    finally:
        os.close(fd)


def write(cpu, value):
    fd = os.open(f"/dev/cpu/{cpu}/msr", os.O_WRONLY)
    try:
        os.pwrite(fd, struct.pack("<Q", value), MSR)
    finally:
        os.close(fd)


def check():
    machine = platform.machine()
    if machine not in ("x86_64", "i686", "i386"):
        # Arm cores keep their prefetcher controls in implementation-defined registers (CPUECTLR_EL1 and
        # the like) that only the kernel or firmware may write; Linux offers no interface to them.
        return {"possible": False, "cpus": [],
                "reason": f"MSR 0x1A4 is an Intel x86 register; this host is {machine}, whose hardware "
                          "prefetchers Linux offers no interface to switch"}
    with open("/proc/cpuinfo") as handle:
        vendor = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("vendor_id")), "")
    if vendor != "GenuineIntel":
        return {"possible": False, "reason": f"MSR 0x1A4 prefetcher control is Intel's; this CPU is {vendor or 'unknown'}",
                "cpus": []}
    if os.geteuid() != 0:
        return {"possible": False, "reason": "writing MSRs needs root", "cpus": []}
    found = cpus()
    if not found:
        return {"possible": False, "reason": "no /dev/cpu/N/msr: the msr driver is not loaded (modprobe msr)",
                "cpus": []}
    try:
        read(found[0])
    except OSError as error:
        return {"possible": False, "reason": f"reading MSR 0x1A4 failed: {error}", "cpus": found}
    return {"possible": True, "reason": "", "cpus": found}


def saved_values(state_file):
    """CPU -> MSR value from STATE; exits with the file and the recovery named when it cannot be trusted."""
    try:
        with open(state_file) as handle:
            saved = json.load(handle)
        values = {int(cpu): int(value) for cpu, value in saved["values"].items()}
        if saved["msr"] != MSR or not values:
            raise ValueError(f"it is not a record of MSR {MSR:#x}")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise SystemExit(json.dumps({"error": (
            f"{state_file} cannot be read as the saved MSR {MSR:#x} values ({type(error).__name__}: {error}): the "
            "hardware prefetchers may still be disabled. A power cycle or reboot re-enables them; or write each "
            f"CPU's original value back with wrmsr -p CPU {MSR:#x} VALUE. Then delete {state_file}.")}))
    return values


def restore(state_file):
    if not os.path.exists(state_file):
        return {"restored": []}
    values = saved_values(state_file)
    try:
        for cpu, value in values.items():
            write(cpu, value)
    except OSError as error:
        raise SystemExit(json.dumps({"error": (
            f"writing MSR {MSR:#x} failed ({error}); {state_file} is kept. Load the msr driver (modprobe msr) "
            "and run playbooks/restore.yml again; if the host was rebooted since, the prefetchers are on "
            f"again and {state_file} can be deleted.")}))
    os.remove(state_file)
    return {"restored": sorted(values)}


def disable(state_file):
    status = check()
    if not status["possible"]:
        raise SystemExit(json.dumps({"error": status["reason"]}))
    if os.path.exists(state_file):
        raise SystemExit(json.dumps({"error": f"{state_file} exists: restore it first"}))
    values = {str(cpu): read(cpu) for cpu in status["cpus"]}
    os.makedirs(os.path.dirname(state_file), mode=0o700, exist_ok=True)
    with open(state_file + ".tmp", "w") as handle:
        json.dump({"msr": MSR, "values": values}, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(state_file + ".tmp", state_file)
    try:
        for cpu, value in values.items():
            write(int(cpu), value | DISABLE_BITS)
    except OSError as error:
        restore(state_file)
        raise SystemExit(json.dumps({"error": f"writing MSR 0x1A4 failed: {error}; originals written back"}))
    return {"disabled": sorted(int(cpu) for cpu in values), "original": values}


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
