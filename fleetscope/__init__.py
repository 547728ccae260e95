"""fleetscope: characterize every machine of a lab and compare them (controller-side package)."""

__version__ = "0.1.0"
