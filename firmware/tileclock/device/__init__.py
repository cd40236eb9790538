"""The clock as a device: its loop, journal, config, service and hardware adapters."""
