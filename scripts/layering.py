#!/usr/bin/env python3
"""Which source file calls into which, from the built objects' symbols.

Usage: scripts/layering.py BUILD_DIR
Prints every cycle between files and every call from a folder into one
listed after it in LAYERS; exits 1 if there is any. `make test` runs it.
"""
import os
import subprocess
import sys

# The library's folders, lowest first: a folder may call only into
# itself and the folders before it (a layer's subfolders, such as
# hooks/nccl/, are part of it). The CLI's folders come after the
# library's, lowest first too; it may use the library's folders up to
# summary/, never the ones that run inside the program.
LAYERS = ["util", "gzip", "encode", "perfetto", "config", "files", "record",
          "session", "stacks", "summary", "capture", "sampling", "output",
          "cupti", "nvml", "hooks", "preload"]
CLI_LAYERS = ["cli/usage", "cli/cleanup", "cli/read", "cli/check",
              "cli/convert", "cli/recover", "cli/merge", "cli/report", "cli/diff",
              "cli"]
CLI_MAY_USE = set(LAYERS[:LAYERS.index("summary") + 1])


def symbols(obj):
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True,
                         check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind in "TDBR" and kind.isupper():
            defined.add(name)
    return defined, undefined


def libc_symbols():
    """What libc itself defines: the preload's hooks interpose some of
    these (execve, sigaction, _exit), and a call to one from anywhere is a
    call into libc, not into the hook's file."""
    path = subprocess.run(["cc", "-print-file-name=libc.so.6"],
                          capture_output=True, text=True).stdout.strip()
    if not path or not os.path.exists(path):
        return set()
    out = subprocess.run(["nm", "-D", "-P", "--defined-only", path],
                         capture_output=True, text=True).stdout
    return {line.split()[0].split("@")[0] for line in out.splitlines()
            if line.split()}


def graph(build):
    objs = {}
    for folder in LAYERS + ["cli"]:
        top = os.path.join(build, folder)
        for d, _, names in os.walk(top):
            rel = os.path.relpath(d, build)
            for f in sorted(names):
                if f.endswith(".o"):
                    objs["%s/%s" % (rel, f[:-2] + ".c")] = os.path.join(d, f)
    owner, uses = {}, {}
    libc = libc_symbols()
    for src, obj in objs.items():
        defined, undefined = symbols(obj)
        for s in defined - libc:
            owner[s] = src
        uses[src] = undefined
    edges = {src: sorted({owner[s] for s in u if s in owner} - {src})
             for src, u in uses.items()}
    return edges


def cycles(edges):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def layer(path):
    """A file's layer: its top folder, or for cli/ its command folder."""
    parts = path.split("/")
    if parts[0] != "cli":
        return parts[0]
    return "cli/" + parts[1] if len(parts) > 2 else "cli"


def upward(edges):
    rank = {f: i for i, f in enumerate(LAYERS)}
    cli_rank = {f: i for i, f in enumerate(CLI_LAYERS)}
    bad = []
    for src, dsts in sorted(edges.items()):
        sf = layer(src)
        for dst in dsts:
            df = layer(dst)
            if sf in cli_rank and df in cli_rank:
                ok = cli_rank[df] <= cli_rank[sf]
            elif sf in cli_rank:
                ok = df in CLI_MAY_USE
            else:
                ok = df in rank and rank[df] <= rank[sf]
            if not ok:
                bad.append((src, dst))
    return bad


def main():
    edges = graph(sys.argv[1] if len(sys.argv) > 1 else "build")
    status = 0
    for comp in cycles(edges):
        print("cycle: " + " <-> ".join(comp))
        status = 1
    for src, dst in upward(edges):
        print("upward: %s calls into %s" % (src, dst))
        status = 1
    if not status:
        print("layering: %d files, no cycles, no upward calls" % len(edges))
    return status


if __name__ == "__main__":
    sys.exit(main())
