"""The report of bench/search.sh: builds the trees, checks that Tackle's grep and glob find
what rg finds, times both A/B alternating, prints medians and ratios.

Usage: python3 bench/search.py TACKLE OUT_DIR RUNS
"""

import glob as globmod
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time

tackle, out_dir, runs = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), int(sys.argv[3])
os.makedirs(out_dir, exist_ok=True)
SOURCE_MB = 110
SOURCE_EXTS = (".rs", ".toml", ".md", ".c", ".h", ".py", ".js", ".txt", ".json", ".yml", ".sh")


def tree_size(root):
    total = 0
    for dirpath, _, files in os.walk(root):
        for name in files:
            total += os.path.getsize(os.path.join(dirpath, name))
    return total


def git_init(root):
    subprocess.run(["git", "init", "-q", root], check=True)
    with open(os.path.join(root, ".gitignore"), "w") as f:
        f.write("target/\n*.o\n")


def source_tree():
    """At least SOURCE_MB of real source: the cargo registry's crates, copied once."""
    root = os.path.join(out_dir, "source")
    if os.path.isdir(root) and tree_size(root) >= SOURCE_MB * 1_000_000:
        return root
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    git_init(root)
    registry = os.path.expanduser("~/.cargo/registry/src")
    copied = 0
    for crate in sorted(globmod.glob(os.path.join(registry, "*", "*"))):
        for dirpath, _, files in os.walk(crate):
            for name in files:
                if not name.endswith(SOURCE_EXTS):
                    continue
                src = os.path.join(dirpath, name)
                dst = os.path.join(root, os.path.relpath(src, os.path.dirname(crate)))
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copyfile(src, dst)
                copied += os.path.getsize(src)
        if copied >= SOURCE_MB * 1_000_000:
            break
    rng = random.Random(3)
    words = ["fn", "let", "mut", "struct", "impl", "match", "return", "self", "unsafe", "pub", "use", "todo"]
    n = 0
    while copied < SOURCE_MB * 1_000_000:  # no registry: generated code
        path = os.path.join(root, f"gen/m{n // 100}/f{n}.rs")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        text = "".join(f"    {' '.join(rng.choice(words) for _ in range(8))}_{i}();\n" for i in range(400))
        with open(path, "w") as f:
            f.write(text)
        copied += len(text)
        n += 1
    return root


def glob_tree():
    """100,000 files in 1,000 directories, mixed extensions."""
    root = os.path.join(out_dir, "files")
    marker = os.path.join(root, ".complete")
    if os.path.exists(marker):
        return root
    shutil.rmtree(root, ignore_errors=True)
    git_init(root)
    exts = [".rs", ".py", ".js", ".md", ".txt"]
    for d in range(1000):
        sub = os.path.join(root, f"pkg{d // 100}", f"mod{d}")
        os.makedirs(sub)
        for i in range(100):
            open(os.path.join(sub, f"file{i}{exts[i % len(exts)]}"), "w").close()
    open(marker, "w").close()
    return root


def cpu_children():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(argv, cwd):
    """Wall time, CPU time (user + system, all threads) and stdout of one command."""
    cpu, start = cpu_children(), time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed, cpu = time.perf_counter() - start, cpu_children() - cpu
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{argv[:4]} failed ({proc.returncode}): {proc.stderr.decode()[:500]}")
    return elapsed, cpu, proc.stdout


def call(tool, args, cwd, as_json=False):
    argv = [tackle, "tools", "call", tool, json.dumps(args)] + (["--json"] if as_json else [])
    return run(argv, cwd)


def ab(name, ours, theirs, cwd):
    """Alternate the two commands RUNS times (after one warm-up each): median wall times and
    their ratio (the target), and median CPU times (user + system), which a busy machine
    disturbs less."""
    run(ours, cwd), run(theirs, cwd)
    a, b = [], []
    for _ in range(runs):
        a.append(run(ours, cwd)[:2])
        b.append(run(theirs, cwd)[:2])
    med = lambda samples, i: statistics.median(s[i] for s in samples) * 1000
    result = {"name": name, "tackle_ms": med(a, 0), "rg_ms": med(b, 0), "tackle_cpu_ms": med(a, 1), "rg_cpu_ms": med(b, 1)}
    result["ratio"] = result["tackle_ms"] / result["rg_ms"]
    result["cpu_ratio"] = result["tackle_cpu_ms"] / max(result["rg_cpu_ms"], 1e-9)
    print(
        f"  {name:<42} wall: tackle {result['tackle_ms']:7.1f} ms  rg {result['rg_ms']:7.1f} ms  ratio {result['ratio']:.2f}"
        f"   cpu: {result['tackle_cpu_ms']:6.1f} / {result['rg_cpu_ms']:6.1f} ms  ratio {result['cpu_ratio']:.2f}"
    )
    return result


def lines(output):
    return [l for l in output.decode(errors="replace").splitlines() if l]


def main():
    results = []
    source = source_tree()
    # Spilled outputs of earlier runs (hidden, never searched) are not part of the tree.
    shutil.rmtree(os.path.join(source, ".tackle"), ignore_errors=True)
    print(f"grep over {tree_size(source) / 1e6:.0f} MB of source ({source}), {runs} runs A/B:")
    queries = [
        ("literal, files", "unsafe fn", [], {}),
        ("regex, files", r"fn \w+_mut\(", [], {}),
        ("case-insensitive, files", "todo|fixme", ["-i"], {"-i": True}),
        ("regex, *.rs only, files", r"impl<T: \?Sized>", ["-g", "*.rs"], {"glob": "*.rs"}),
    ]
    for name, pattern, rg_flags, extra in queries:
        args = {"pattern": pattern, "head_limit": 0, **extra}
        _, _, out = call("grep", args, source, as_json=True)
        ours = set(json.loads(out)["structured"]["filenames"])
        theirs = set(lines(run(["rg", "-l", *rg_flags, pattern], source)[2]))
        if ours != theirs:
            raise SystemExit(f"{name}: different files: only tackle {sorted(ours - theirs)[:5]}, only rg {sorted(theirs - ours)[:5]}")
        _, _, out = call("grep", {**args, "output_mode": "count"}, source, as_json=True)
        ours_count = json.loads(out)["structured"]["num_matches"]
        theirs_count = sum(int(l.rsplit(":", 1)[1]) for l in lines(run(["rg", "-c", *rg_flags, pattern], source)[2]))
        if ours_count != theirs_count:
            raise SystemExit(f"{name}: {ours_count} matching lines, rg {theirs_count}")
        ours_argv = [tackle, "tools", "call", "grep", json.dumps(args)]
        results.append(ab(f"grep {name} ({len(theirs)} files)", ours_argv, ["rg", "-l", *rg_flags, pattern], source))
    content = {"pattern": r"fn \w+_mut\(", "output_mode": "content", "head_limit": 0}
    results.append(ab("grep regex, content lines", [tackle, "tools", "call", "grep", json.dumps(content)], ["rg", "-n", content["pattern"]], source))

    files = glob_tree()
    print(f"glob over 100,000 files ({files}), {runs} runs A/B:")
    for pattern in ["**/*.rs", "pkg3/**/*.md"]:
        _, _, out = call("glob", {"pattern": pattern}, files, as_json=True)
        ours = set(json.loads(out)["structured"]["filenames"])
        theirs = set(lines(run(["rg", "--files", "-g", pattern], files)[2]))
        if not ours or not ours <= theirs or (len(theirs) <= 100 and ours != theirs):
            raise SystemExit(f"glob {pattern}: tackle's files are not rg's")
        argv = [tackle, "tools", "call", "glob", json.dumps({"pattern": pattern})]
        results.append(ab(f"glob {pattern} ({len(theirs)} matches)", argv, ["rg", "--files", "-g", pattern], files))

    worst = max(r["ratio"] for r in results)
    worst_cpu = max(r["cpu_ratio"] for r in results)
    load = os.getloadavg()[0]
    print(f"worst wall ratio {worst:.2f} (target <= 1.5): {'met' if worst <= 1.5 else 'NOT met'}; worst cpu ratio {worst_cpu:.2f}; load {load:.1f} on {os.cpu_count()} cores")
    with open(os.path.join(out_dir, "report.json"), "w") as f:
        json.dump({"runs": runs, "results": results, "worst_ratio": worst, "worst_cpu_ratio": worst_cpu, "load": load}, f, indent=2)


main()
