"""The files the kernel check's VM needs to run this clone's `tileclock` with this clone's .venv.

Prints them NUL-separated (absolute paths, folders first, symlinks as they are), for `cpio -0`: the Python the
venv was made with (its standard library, without tests and GUI modules), the distributions
`tileclock` needs at run time as .venv has them (walked from its requirements, extras left out),
this clone's `firmware/` and `hw/kernel-check/`, and every shared library all of that loads (from
`ldd`). Packed into the initramfs, the VM never reads a file over a slow shared folder.
"""

import importlib.metadata
import os
import re
import subprocess
import sys
import sysconfig

SKIP_STDLIB = {
    "test",
    "idlelib",
    "tkinter",
    "turtledemo",
    "lib2to3",
    "ensurepip",
    "site-packages",
}
ROOTS = ("tileclock", "gpiod")


def stdlib():
    """The standard library's files, without its tests, GUI and installers, nor optimised bytecode."""
    top = sysconfig.get_path("stdlib")
    for folder, dirs, files in os.walk(top):
        if folder == top:
            dirs[:] = [d for d in dirs if d not in SKIP_STDLIB and not d.startswith("config-")]
        for name in files:
            if ".opt-" not in name and not name.startswith("_tkinter"):
                yield os.path.join(folder, name)


def distributions():
    """The installed distributions `tileclock` and `gpiod` need at run time (extras left out)."""
    seen, todo = {}, list(ROOTS)
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        try:
            seen[key] = dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # a backport for older Pythons, say: not installed here, not needed
        for requirement in dist.requires or []:
            if "extra ==" not in requirement:
                todo.append(re.split(r"[ ;<>=!~\[(]", requirement, maxsplit=1)[0])
    return seen.values()


def dist_files(dist):
    for file in dist.files or []:
        path = os.path.realpath(dist.locate_file(file))
        if os.path.isfile(path):
            yield path
    # an editable install points at the clone: its sources are packed whole (see `main`)


def libraries(paths):
    """The shared libraries the ELF files among `paths` load, as ldd resolves them."""
    found = set()
    elves = [path for path in paths if path.endswith(".so") or ".so." in path or os.access(path, os.X_OK)]
    for path in elves:
        run = subprocess.run(["ldd", path], capture_output=True, text=True)
        for line in run.stdout.splitlines():
            match = re.search(r"(/\S+)", line.split("=>")[-1])
            if match and os.path.exists(match.group(1)):
                found.add(match.group(1))
    return found


def with_links(path):
    """`path` and every symlink on the way to the file it names (each link kept as a link)."""
    chain = []
    while True:
        parts, built = path.strip("/").split("/"), ""
        for part in parts:
            built += "/" + part
            if os.path.islink(built):
                chain.append(built)
                target = os.readlink(built)
                rest = path[len(built) :]
                path = os.path.normpath(os.path.join(os.path.dirname(built), target) + rest)
                break
        else:
            chain.append(path)
            return chain


def main(clone):
    paths = set(stdlib())
    for dist in distributions():
        paths.update(dist_files(dist))
    for folder in ("firmware", "hw/kernel-check"):
        for top, dirs, files in os.walk(os.path.realpath(os.path.join(clone, folder))):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            paths.update(os.path.join(top, name) for name in files)
    venv = sys.prefix
    paths.add(os.path.join(venv, "pyvenv.cfg"))
    site = sysconfig.get_path("purelib")
    paths.update(os.path.join(site, name) for name in os.listdir(site) if name.endswith(".pth"))
    executable = os.path.join(venv, "bin", "python")
    paths.add(executable)
    paths.add(os.path.realpath(executable))
    paths.update(libraries(sorted(paths)))
    everything = set()
    for path in paths:
        everything.update(with_links(os.path.abspath(path)))
    for path in list(everything):  # each folder before what it holds (the kernel's unpacker makes none)
        folder = os.path.dirname(path)
        while folder != "/":
            everything.add(folder)
            folder = os.path.dirname(folder)
    sys.stdout.write("".join(path + "\0" for path in sorted(everything)))


if __name__ == "__main__":
    main(os.path.abspath(sys.argv[1]))
