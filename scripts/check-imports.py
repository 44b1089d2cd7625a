#!/usr/bin/env python3
"""Every module a target imports is one it declares in Package.swift (a target or a product it
names), or a system module: SwiftPM's own --explicit-target-dependency-import-check only catches
imports of targets outside a target's dependency closure, not ones that arrive transitively.

    python3 scripts/check-imports.py     (run by scripts/test.sh; exits 1 naming each import)
"""
import glob
import json
import os
import re
import subprocess
import sys

SYSTEM = {"Foundation", "FoundationNetworking", "FoundationEssentials", "Dispatch", "Glibc", "Musl", "Darwin", "Testing",
          "XCTest", "Synchronization", "os", "_Concurrency", "Observation", "RegexBuilder", "CoreFoundation", "PackageDescription", "PackagePlugin"}
IMPORT = re.compile(r"\s*(?:@testable |public |internal |package |@_exported |@preconcurrency )*import (?:struct |class |enum |func )?(\w+)")

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
package = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=root, capture_output=True, text=True, check=True).stdout)
problems = []
for target in package["targets"]:
    name = target["name"]
    path = target.get("path") or ("Tests/" if target["type"] == "test" else "Sources/") + name
    declared = {name}
    for dependency in target.get("dependencies", []):
        for kind in ("byName", "target", "product"):
            if kind in dependency:
                declared.add(dependency[kind][0])
    for file in sorted(glob.glob(os.path.join(root, path, "**", "*.swift"), recursive=True)):
        for number, line in enumerate(open(file, encoding="utf-8"), 1):
            match = IMPORT.match(line)
            if match and match.group(1) not in declared | SYSTEM:
                problems.append(f"{os.path.relpath(file, root)}:{number}: {name} imports {match.group(1)} without declaring it in Package.swift")
for problem in problems:
    print(problem, file=sys.stderr)
sys.exit(1 if problems else 0)
