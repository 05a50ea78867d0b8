"""The report of bench/ckg.sh: copies the trees, times `tackle ckg` (whole processes) against
`ctags -R --output-format=json` A/B alternating, times the refresh, the queries and the
repository map, runs the ctags agreement per language, prints the figures and writes
report.json.

Usage: python3 bench/ckg.py TACKLE AGREEMENT OUT_DIR RUNS
"""

import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

tackle, agreement, out_dir, runs = (
    os.path.abspath(sys.argv[1]),
    os.path.abspath(sys.argv[2]),
    os.path.abspath(sys.argv[3]),
    int(sys.argv[4]),
)
trees_dir = os.path.join(out_dir, "trees")
site = glob.glob(os.path.join(out_dir, "venv/lib/python3*/site-packages"))[0]
registry = glob.glob(os.path.expanduser("~/.cargo/registry/src/*"))[0]
repo = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

# name -> sources (copied into one tree each, so the indexes never land in the venv or the
# registry, and no ignore file above them applies).
TREES = {
    "_pytest": [os.path.join(site, "_pytest")],
    "pip": [os.path.join(site, "pip")],
    "tackle": [os.path.join(repo, "crates")],
}
# Extra trees for the agreement only, by language.
AGREEMENT = {
    "python": ["_pytest", "pip"],
    "typescript": [os.path.join(out_dir, "npm/node_modules/rxjs/src")],
    "javascript": [os.path.join(out_dir, "npm/node_modules/rxjs/dist/esm")],
    "rust": ["tackle"]
    + [os.path.join(registry, c) for c in ("tokio-1.54.1", "serde_json-1.0.154", "ignore-0.4.35", "clap_builder-4.6.7")],
    "c": [os.path.join(registry, "tree-sitter-0.27.1/src"), os.path.join(registry, "blake3-1.8.7/c")],
    "cpp": [os.path.join(out_dir, "deb/googletest/usr/src/googletest")],
    "go": [
        os.path.join(out_dir, "deb/golang-1.19-src/usr/share/go-1.19/src", p)
        for p in ("net/http", "go/ast", "go/parser", "os", "strings", "encoding/json")
    ],
    "java": [os.path.join(out_dir, "jdk/java.base/java/util")],
}


def copy_tree(name):
    dest = os.path.join(trees_dir, name)
    if not os.path.isdir(dest):
        os.makedirs(dest)
        for source in TREES[name]:
            shutil.copytree(source, os.path.join(dest, os.path.basename(source)))
    return dest


def run(cmd, **kwargs):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def timed(cmd):
    start = time.perf_counter()
    run(cmd)
    return time.perf_counter() - start


def median_ms(samples):
    return round(statistics.median(samples) * 1e3, 1)


def lines_of(tree):
    total = 0
    for dirpath, dirnames, files in os.walk(tree):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in files:
            if name.endswith((".py", ".rs")):
                with open(os.path.join(dirpath, name), "rb") as f:
                    total += f.read().count(b"\n")
    return total


def cold(tree):
    """Cold `tackle ckg index` against `ctags -R`, alternating."""
    ours, theirs = [], []
    for i in range(runs):
        order = [0, 1] if i % 2 == 0 else [1, 0]
        for which in order:
            if which == 0:
                shutil.rmtree(os.path.join(tree, ".tackle"), ignore_errors=True)
                ours.append(timed([tackle, "ckg", "index", tree, "--json"]))
            else:
                theirs.append(timed(["ctags", "-R", "--output-format=json", "-f", os.devnull, tree]))
    return median_ms(ours), median_ms(theirs)


def query_json(tree, *args):
    out = run([tackle, "ckg", *args, "--workspace", tree, "--json"]).stdout
    return json.loads(out)


def main():
    report = {"runs": runs, "trees": {}}
    for name in TREES:
        tree = copy_tree(name)
        ours, ctags = cold(tree)
        entry = {"lines": lines_of(tree), "cold_ms": ours, "ctags_ms": ctags, "ratio": round(ours / ctags, 2)}
        report["trees"][name] = entry
        print(f"cold index {name:8} ({entry['lines']:>6} lines): tackle {ours:7.1f} ms, ctags {ctags:6.1f} ms, "
              f"ratio {entry['ratio']:.2f} (target <= 6)")

    pip = copy_tree("pip")
    run([tackle, "ckg", "index", pip])
    # A query with nothing changed: whole process, and the query alone (from its --json timing).
    warm, query_only = [], []
    for _ in range(max(runs * 4, 20)):
        warm.append(timed([tackle, "ckg", "search", "function", "main", "--workspace", pip]))
        query_only.append(query_json(pip, "search", "function", "main")["timing"]["query_ms"] / 1e3)
    # Refresh after one file changed, plus the query that triggered it.
    target = os.path.join(pip, "pip/_internal/utils/misc.py")
    with open(target, "rb") as f:
        original = f.read()
    refresh = []
    for i in range(runs):
        with open(target, "ab") as f:
            f.write(f"\n\ndef bench_added_{i}():\n    pass\n".encode())
        refresh.append(timed([tackle, "ckg", "search", "function", f"bench_added_{i}", "--workspace", pip]))
    with open(target, "wb") as f:
        f.write(original)
    run([tackle, "ckg", "stats", "--workspace", pip])
    repo_map = [timed([tackle, "ckg", "map", "--workspace", pip]) for _ in range(max(runs, 5))]
    cold_pip = report["trees"]["pip"]["cold_ms"]
    report["pip"] = {
        "query_unchanged_ms": median_ms(warm),
        "query_itself_ms": round(statistics.median(query_only) * 1e3, 3),
        "refresh_one_file_ms": median_ms(refresh),
        "refresh_share_of_cold": round(median_ms(refresh) / cold_pip, 3),
        "repo_map_ms": median_ms(repo_map),
    }
    p = report["pip"]
    print(f"pip: query, nothing changed {p['query_unchanged_ms']} ms (target <= 20; the query itself "
          f"{p['query_itself_ms']} ms, target <= 1); refresh after one change + query {p['refresh_one_file_ms']} ms "
          f"= {p['refresh_share_of_cold'] * 100:.1f}% of the cold index (target <= 10%); repo_map {p['repo_map_ms']} ms "
          f"(target <= 200)")

    report["agreement"] = {}
    for language, sources in AGREEMENT.items():
        dirs = [copy_tree(s) if s in TREES else s for s in sources]
        missing = [d for d in dirs if not os.path.isdir(d)]
        if missing:
            print(f"agreement {language}: skipped, missing {missing}")
            continue
        result = json.loads(run([agreement, "--json", *dirs]).stdout)
        figure = result.get(language) or result.get("tsx")
        if figure is None:
            print(f"agreement {language}: no {language} files in {dirs}")
            continue
        report["agreement"][language] = figure
        print(f"agreement {language:10} {figure['agreement'] * 100:6.2f}%  (both {figure['both']}, only tackle "
              f"{figure['only_tackle']}, only ctags {figure['only_ctags']})")

    with open(os.path.join(out_dir, "report.json"), "w") as f:
        json.dump(report, f, indent=2)
    print(f"report: {os.path.join(out_dir, 'report.json')}")


main()
