#!/usr/bin/env bash
# Where README's two commands spend their time on a new clone: clones this checkout's HEAD into
# .build-times/kb (nothing built, no Package.resolved), runs `scripts/setup.sh` and then
# `CI=true scripts/test.sh` in it exactly as README says, with every compile timed
# (KB_BUILD_TIMES, lib.sh), and prints three tables: each command's phases (wall seconds), the
# compilers' CPU seconds per package and phase, and the costliest modules. The system packages and
# the models already on this machine stay (a new machine adds ~35 s for them); the clone's builds
# start from nothing. Takes as long as the two commands (20–30 minutes on 2 cores).
#
#   scripts/build-times.sh                  # clone, both commands, the tables
#   scripts/build-times.sh --setup-only     # clone, scripts/setup.sh only
#   scripts/build-times.sh --plain          # clone, both commands untimed (a user's wall times)
#   scripts/build-times.sh --ci             # clone, `CI=true scripts/test.sh` alone, timed (CI's run: debug)
#   scripts/build-times.sh --report [DIR]   # the tables of an earlier run (default .build-times)
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
ensure_swift
OUT="$KB_ROOT/.build-times"

report() {
    python3 - "$1" <<'PY'
import collections, sys, pathlib
out = pathlib.Path(sys.argv[1])
for name in ("setup", "test"):
    f = out / f"{name}.summary"
    if f.exists():
        print(f"== scripts/{name}.sh on a new clone (wall seconds)")
        print(f.read_text().strip()); print()
if not (out / "times/jobs.tsv").exists():
    sys.exit(0)
jobs = [l.split("\t") for l in (out / "times/jobs.tsv").read_text().splitlines() if l.count("\t") == 5]
phases = list(dict.fromkeys(j[0] for j in jobs))
cpu = collections.defaultdict(float); modules = collections.defaultdict(float); total = collections.defaultdict(float)
for phase, tool, package, module, wall, seconds in jobs:
    package = "(toolchain queries, manifests)" if package == "(none)" else package
    cpu[package, phase] += float(seconds); total[package] += float(seconds)
    modules[package, module] += float(seconds)
print("== Compilers' CPU seconds per package and phase (2 cores: wall ≈ CPU / 2 where both are busy)")
print("| package | " + " | ".join(phases) + " | all |"); print("|---" * (len(phases) + 2) + "|")
for package in sorted(total, key=total.get, reverse=True):
    print(f"| {package} | " + " | ".join(f"{cpu[package, p]:.0f}" for p in phases) + f" | {total[package]:.0f} |")
print(f"| **all** | " + " | ".join(f"{sum(cpu[k, p] for k in total):.0f}" for p in phases) + f" | {sum(total.values()):.0f} |")
print(); print("== The 20 costliest modules (CPU seconds, all phases)")
for (package, module), seconds in sorted(modules.items(), key=lambda kv: kv[1], reverse=True)[:20]:
    print(f"{seconds:8.0f}  {module} ({package})")
PY
}

case "${1:-}" in
    --report) report "${2:-$OUT}"; exit ;;
    --setup-only|--plain|--ci|"") ;;
    *) echo "usage: scripts/build-times.sh [--setup-only | --plain | --ci | --report [DIR]]" >&2; exit 2 ;;
esac
say "Cloning HEAD into ${OUT#"$KB_ROOT"/}/kb"
rm -rf "$OUT"
mkdir -p "$OUT"
git clone -q "$KB_ROOT" "$OUT/kb"
# ../shared beside the clone, as beside CI's (scripts may read it when present).
[ ! -d "$KB_ROOT/../shared" ] || ln -s "$(cd "$KB_ROOT/../shared" && pwd)" "$OUT/shared"
# The job timer costs a fork per compile and makes the driver scan dependencies itself: --plain
# leaves it out, for the wall times a user sees.
[ "${1:-}" = "--plain" ] || export KB_BUILD_TIMES="$OUT/times"
if [ "${1:-}" != "--ci" ]; then
    say "scripts/setup.sh (its output: ${OUT#"$KB_ROOT"/}/setup.log)"
    (cd "$OUT/kb" && bash scripts/setup.sh) >"$OUT/setup.log" 2>&1 || { tail -n 30 "$OUT/setup.log" >&2; exit 1; }
    sed -n '/^seconds *phase/,$p' "$OUT/setup.log" | grep -v "^$" >"$OUT/setup.summary"
fi
if [ "${1:-}" != "--setup-only" ]; then
    say "CI=true scripts/test.sh (its output: ${OUT#"$KB_ROOT"/}/test.log)"
    (cd "$OUT/kb" && CI=true bash scripts/test.sh) >"$OUT/test.log" 2>&1 || { tail -n 30 "$OUT/test.log" >&2; exit 1; }
    sed -n '/^seconds *phase/,$p' "$OUT/test.log" >"$OUT/test.summary"
fi
report "$OUT"
