"""The installed tree: `cmake --install` of the test's build into a temporary
prefix, then the installed binary, pkg-config pointing at that prefix, C
programs built against the installed headers and libraries (shared and
static, trainprof and trainprof_record), the man page and the bash completion,
each used from there."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import TRAINPROF, GENTRACE, check, failures, finish, run  # noqa: E402

BUILD = os.environ.get("TPROF_BUILD_DIR") or os.path.dirname(os.path.abspath(TRAINPROF))
SANITIZED = bool(os.environ.get("TPROF_SANITIZED"))
CC = os.environ.get("CC") or "cc"
tmp = tempfile.mkdtemp(prefix="tprof_install_")
prefix = os.path.join(tmp, "prefix")

rc, out, err = run(["cmake", "--install", BUILD, "--prefix", prefix])
if rc != 0:
    print(f"FAIL: cmake --install {BUILD} --prefix {prefix}: exit {rc}\n{out}\n{err}")
    sys.exit(1)

# every file installed lies under the prefix (none at an absolute destination)
with open(os.path.join(BUILD, "install_manifest.txt")) as f:
    manifest = f.read().split()
outside = [p for p in manifest if not p.startswith(prefix + os.sep)]
check(manifest and not outside, f"installed outside {prefix}: {outside[:5]}")

# the libraries' directory: lib, or lib/<multiarch> for a /usr configure (GNUInstallDirs)
pcs = [os.path.join(d, f) for d, _, fs in os.walk(prefix) for f in fs if f == "trainprof.pc"]
check(len(pcs) == 1, f"one trainprof.pc under the prefix: {pcs}")
pcdir = os.path.dirname(pcs[0]) if pcs else os.path.join(prefix, "lib", "pkgconfig")
libdir = os.path.dirname(pcdir)
bin_tp = os.path.join(prefix, "bin", "trainprof")
env = dict(os.environ, PKG_CONFIG_PATH=pcdir)
env.pop("PKG_CONFIG_LIBDIR", None)

# ---- the installed binary ----
rc, out, _ = run([bin_tp, "--version"])
_, want, _ = run([TRAINPROF, "--version"])
check(rc == 0 and out == want and out.startswith("trainprof "), f"installed --version: {rc} {out!r}, built {want!r}")


def dynamic(path):
    """NEEDED, RPATH and RUNPATH entries of an ELF file (readelf -d)."""
    p = subprocess.run(["readelf", "-d", path], capture_output=True, text=True)
    return re.findall(r"\((NEEDED|RPATH|RUNPATH|SONAME)\)\s+\S+ \S+: \[(.*)\]", p.stdout)


# nothing the installed files load points back into the build tree
for f in [bin_tp] + [os.path.join(libdir, n) for n in os.listdir(libdir) if ".so." in n]:
    paths = [v for k, v in dynamic(f) if k in ("RPATH", "RUNPATH")]
    check(not any(BUILD in p for p in paths), f"{f} has a run path into the build tree: {paths}")
for lib in ("libtrainprof", "libtrainprof_record"):
    so = os.path.join(libdir, lib + ".so")
    sonames = [v for k, v in dynamic(so)] if os.path.exists(so) else []
    check(os.path.exists(so) and (lib + ".so.0") in sonames and os.path.exists(os.path.join(libdir, lib + ".so.0")),
          f"{so}: SONAME {lib}.so.0 and its link: {sonames}")

# a command on a generated trace, the same as the built binary's
trace = os.path.join(tmp, "gen.pt.trace.json")
rc, _, err = run([GENTRACE, "--steps", "3", "--layers", "2", "--seed", "7", "-o", trace])
check(rc == 0, f"gentrace: {err}")
for args in (["kernels", "--top", "5"], ["steps", "--format", "json"]):
    rc, out, err = run([bin_tp] + args + [trace])
    _, want, _ = run([TRAINPROF] + args + [trace])
    check(rc == 0 and out == want and out, f"installed trainprof {' '.join(args)}: exit {rc}, {err}")

# ---- pkg-config from the prefix ----
def pkg_config(*args):
    p = subprocess.run(["pkg-config"] + list(args), capture_output=True, text=True, env=env)
    check(p.returncode == 0, f"pkg-config {' '.join(args)}: {p.stderr}")
    return p.stdout.split()


for name in ("trainprof", "trainprof_record"):
    flags = pkg_config("--cflags", "--libs", name)
    check("-I" + os.path.join(prefix, "include") in flags and "-L" + libdir in flags and "-l" + name in flags,
          f"pkg-config --cflags --libs {name} names {prefix}: {flags}")
    got = pkg_config("--variable=prefix", name)
    check(got == [prefix], f"{name}.pc prefix {got}, installed to {prefix}")

# ---- C programs against the installed headers and libraries ----
READER = r"""
#include <stdio.h>
#include <string.h>
#include "trainprof/trace.h"
#include "trainprof/version.h"
int main(int argc, char **argv)
{
    char err[512];
    tprof_trace *t;
    tprof_read_opts o = { 0 };
    if (argc != 2 || strcmp(tprof_version(), TPROF_VERSION_STRING)) return 2;
    if (tprof_trace_read(&t, argv[1], &o, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 3; }
    printf("steps %zu events %llu\n", tprof_trace_meta_get(t)->nsteps,
           (unsigned long long)tprof_trace_meta_get(t)->nevents);
    tprof_trace_free(t);
    return 0;
}
"""
RECORDER = r"""
#include <stdio.h>
#include "trainprof/profiler.h"
int main(int argc, char **argv)
{
    char err[256];
    tprof_profile_config c;
    tprof_config_default(&c);
    c.enable = true;
    c.profile_memory = false;
    c.with_stack = false;
    c.start_step = 1;
    c.end_step = 3;
    if (argc != 2) return 2;
    snprintf(c.trace_dir, sizeof c.trace_dir, "%s", argv[1]);
    if (tprof_profiler_start(&c, err, sizeof err)) { fprintf(stderr, "%s\n", err); return 3; }
    for (int g = 1; g <= 3; g++) {
        tprof_step_begin(g);
        { TPROF_RANGE("forward"); }
        tprof_step_end(g);
    }
    if (tprof_profiler_stop()) return 4;
    puts(tprof_profiler_trace_path());
    return 0;
}
"""
# an ASan build's libraries need the sanitizer runtime in the program too
san = ["-fsanitize=address,undefined"] if SANITIZED else []


def build(name, source, pc, static):
    src = os.path.join(tmp, name + ".c")
    with open(src, "w") as f:
        f.write(source)
    exe = os.path.join(tmp, name + ("_static" if static else "_shared"))
    libs = pkg_config("--static", "--libs", pc) if static else pkg_config("--libs", pc)
    if static:  # the archive, and what it needs from the system shared
        libs = [x for l in libs for x in (["-Wl,-Bstatic", l, "-Wl,-Bdynamic"] if l == "-l" + pc else [l])]
    else:
        libs += ["-Wl,-rpath," + libdir]
    cmd = [CC, "-std=c11", "-Wall", "-Werror", src, "-o", exe] + pkg_config("--cflags", pc) + libs + san
    p = subprocess.run(cmd, capture_output=True, text=True)
    check(p.returncode == 0, f"{' '.join(cmd)}: {p.stderr}")
    needed = [v for k, v in dynamic(exe) if k == "NEEDED"] if p.returncode == 0 else []
    wants_so = "lib" + pc + ".so.0"
    check(p.returncode != 0 or (wants_so in needed) != static, f"{exe} needs {needed}")
    return exe if p.returncode == 0 else None


if not shutil.which(CC):
    check(False, f"no C compiler {CC}")
else:
    for static in (False, True):
        kind = "static" if static else "shared"
        rec = build("recorder", RECORDER, "trainprof_record", static)
        rd = build("reader", READER, "trainprof", static)
        if not rec or not rd:
            continue
        tdir = os.path.join(tmp, "trace_" + kind)
        rc, out, err = run([rec, tdir])
        check(rc == 0 and out.strip().startswith(tdir), f"{kind} recorder: exit {rc}, {out!r} {err}")
        recorded = out.strip()
        if rc != 0:
            continue
        rc, out, err = run([rd, recorded])
        check(rc == 0 and out.startswith("steps 2 events "), f"{kind} reader on the recorded trace: exit {rc}, {out!r} {err}")
        rc, out, err = run([bin_tp, "steps", recorded])
        # two steps, each a row of the steps table and of the device-time table
        check(rc == 0 and out.count("\n#") == 4, f"installed trainprof steps on the {kind} recorder's trace: {rc} {err}")

# ---- the man page ----
man = os.path.join(prefix, "share", "man", "man1", "trainprof.1")
check(os.path.exists(man), "share/man/man1/trainprof.1 installed")
commands = run([bin_tp, "--list-commands"])[1].split()
check(len(commands) >= 10 and "kernels" in commands, f"--list-commands: {commands}")
if os.path.exists(man):
    p = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-P-cbou", man], capture_output=True, text=True,
                       env=dict(os.environ, LC_ALL="C.UTF-8"))
    check(p.returncode == 0 and not p.stderr and "EXIT STATUS" in p.stdout and "ENVIRONMENT" in p.stdout,
          f"groff renders the man page without warnings: exit {p.returncode}, {p.stderr[:500]}")
    with open(man) as f:
        roff = f.read()
    sections = re.split(r"^\.SS ", roff, flags=re.M)[1:]
    named = {s.split("\n", 1)[0]: s for s in sections}
    check(list(named) == commands, f"a subsection per command, in order: {list(named)}")
    for cmd in commands:
        # every option of the command's table is in its --help, and so on its subsection
        opts = [l.split("\t")[0] for l in run([bin_tp, "--list-options", cmd])[1].splitlines()]
        _, helptext, _ = run([bin_tp, cmd, "--help"])
        for o in opts:
            if o in ("--help", "-h"):
                continue
            check(re.search(re.escape(o) + r"\b", helptext), f"{cmd} --help does not mention {o}")
            check(o.replace("-", "\\-") in named.get(cmd, ""), f"the man page's {cmd} lacks {o}")
        first = helptext.split("\n\n")[1].split("\n")[0] if "\n\n" in helptext else ""
        check(first and first.replace("-", "") in named.get(cmd, "").replace("\\-", "").replace("-", ""),
              f"the man page's {cmd} has its --help description ({first!r})")
    if shutil.which("man"):
        p = subprocess.run(["man", "-l", man], capture_output=True, text=True,
                           env=dict(os.environ, MANPAGER="cat", MANWIDTH="80", LC_ALL="C.UTF-8"))
        check(p.returncode == 0 and "COMMANDS" in p.stdout, f"man -l: exit {p.returncode} {p.stderr[:300]}")

# ---- the bash completion ----
comp = os.path.join(prefix, "share", "bash-completion", "completions", "trainprof")
check(os.path.exists(comp), "share/bash-completion/completions/trainprof installed")


def complete(*words):
    """What _trainprof offers for WORDS, the last being the one completed."""
    script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _trainprof; '
              'printf "%s\\n" "${COMPREPLY[@]}"; complete -p trainprof >&2')
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "bash", comp] + list(words),
                       capture_output=True, text=True)
    check(p.returncode == 0 and "-F _trainprof" in p.stderr, f"completion of {words}: {p.returncode} {p.stderr}")
    return [w for w in p.stdout.split("\n") if w]


if os.path.exists(comp):
    got = complete("trainprof", "kern")
    check(got == ["kernels"], f"trainprof kern -> {got}")
    got = complete("trainprof", "kernels", "--fo")
    check(got == ["--format"], f"trainprof kernels --fo -> {got}")
    got = complete("trainprof", "")
    check(got == commands, f"trainprof '' -> {got}")
    got = complete("trainprof", "--ver")
    check(got == ["--version"], f"trainprof --ver -> {got}")
    got = complete("trainprof", "kernels", "--by", "")
    check(got == ["name", "class", "stream", "category"], f"kernels --by '' -> {got}")
    got = complete("trainprof", "kernels", "--format", "=", "j")  # --format=j as bash splits it
    check(got == ["json"], f"kernels --format=j -> {got}")
    got = complete("trainprof", "merge", "--format", "")
    check(got == ["table", "json"], f"merge --format '' -> {got}")
    got = complete("trainprof", "kernels", "tr")
    check(got == [], f"a file argument is left to readline's file names: {got}")
    # every long option of every command's table
    for cmd in commands:
        opts = [l.split("\t")[0] for l in run([bin_tp, "--list-options", cmd])[1].splitlines()]
        for o in opts:
            if o.startswith("--"):
                got = complete("trainprof", cmd, o)
                check(o in got, f"trainprof {cmd} {o} -> {got}")

# the docs
doc = os.path.join(prefix, "share", "doc", "trainprof")
for f in ("README.md", "docs/METRICS.md", "docs/RECORDING.md", "configs/tiny.yaml"):
    check(os.path.exists(os.path.join(doc, f)), f"share/doc/trainprof/{f} installed")

if failures:
    print("the installed tree is kept in", prefix)
else:
    shutil.rmtree(tmp, ignore_errors=True)
finish("install: binary, pkg-config, C programs (shared and static), man page, completion, docs from " + prefix)
