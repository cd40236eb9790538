"""The command line's checks of the files and folders it is given, before a long run starts."""

import os

from ..device.config import ConfigError


def file_to_write(path, option):
    """Refuse, before a long run, a file that could not be written at its end (ConfigError naming `option`)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ConfigError(f"{option} {path}: a folder; give a file name in it")
    if not os.path.isdir(folder):
        raise ConfigError(f"{option} {path}: there is no folder {folder}")


def folder_to_make(path, option):
    """Refuse a file where a command makes (or fills) a folder (ConfigError naming `option`)."""
    if path and os.path.exists(path) and not os.path.isdir(path):
        raise ConfigError(f"{option} {path}: a file, not a folder")


def folder_to_write(path, option):
    """Refuse, before a long run, a folder that is not there or cannot be written (ConfigError naming `option`)."""
    if not os.path.exists(path):
        raise ConfigError(f"{option} {path}: no such folder")
    if not os.path.isdir(path):
        raise ConfigError(f"{option} {path}: a file, not a folder")
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(f"{option} {path}: cannot write there")
