"""Measure `tfpartial scan` on one part of the corpus.

usage: measure.py PART_DIR [--tree SRC_TREE] [--out RESULT.json] [--show] [--expected FILE] [--span]

Each repository under PART/trees and PART/negative is scanned as one project
(as its team would run scan at its root). An expected finding is found when a
reported finding has the same path, a line within tolerance (any line in a
notebook when line is null) and the same idiom; "any idiom" counts a finding of
another idiom at that place too. Findings matching no expected entry are
false-positive candidates (to adjudicate by hand)."""
import argparse, io, json, os, re, sys, time, collections, contextlib


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("part")
  ap.add_argument("--tree", default="/work/main")
  ap.add_argument("--out")
  ap.add_argument("--show", action="store_true", help="print misses and FPs")
  ap.add_argument("--span", action="store_true", help="a finding also matches at the line"
                  " of the step its message names (the sink of a filtered var_list)")
  ap.add_argument("--expected", help="instances to score instead of PART/expected.json"
                  " (a reviewed set)")
  args = ap.parse_args()
  sys.path.insert(0, args.tree)
  from tfpartial._tools.scan import _main  # noqa: E402

  part = os.path.abspath(args.part)
  expected = json.load(open(args.expected or os.path.join(part, "expected.json")))["findings"]
  findings, files, cpu = [], 0, 0.0
  for kind in ("trees", "negative"):
    base = os.path.join(part, kind)
    if not os.path.isdir(base):
      continue
    for repo in sorted(os.listdir(base)):
      root = os.path.join(base, repo)
      n = sum(1 for d, _, fs in os.walk(root) for f in fs
              if f.endswith((".py", ".ipynb")))
      files += n
      out, err = io.StringIO(), io.StringIO()
      here = os.getcwd()
      os.chdir(base)
      t = time.process_time()
      try:
        _main.run([repo], form="json", out=out, err=err)
      finally:
        cpu += time.process_time() - t
        os.chdir(here)
      try:
        got = json.loads(out.getvalue() or "[]")
      except ValueError:
        got = []
        print("unreadable output for", repo, err.getvalue()[:300], file=sys.stderr)
      for f in got:
        f["kind"] = kind
        findings.append(f)

  def places(e):
    yield e["path"], e.get("line"), max(e.get("tolerance") or 3, 3)
    for a in e.get("also", []):
      yield a["path"], a.get("line"), max(a.get("tolerance") or 3, 3)

  def near(f, e, same_idiom):
    if same_idiom and f["idiom"] != e["idiom"]:
      return False
    lines = [f["line"]]
    if args.span:  # The step a finding names: "... for `minimize` (line 57)".
      lines += [int(n) for n in re.findall(r"\(line (\d+)\)", f.get("message", ""))]
    for path, line, tol in places(e):
      if f["path"] == path and (line is None or any(abs(n - line) <= tol for n in lines)):
        return True
    return False

  rows = collections.defaultdict(lambda: [0, 0, 0])
  used = set()
  misses = []
  for e in expected:
    r = rows[e["idiom"]]
    r[0] += 1
    hit = [i for i, f in enumerate(findings) if near(f, e, True)]
    anyhit = [i for i, f in enumerate(findings) if near(f, e, False)]
    r[1] += bool(hit)
    r[2] += bool(anyhit)
    used.update(anyhit)
    if not hit:
      misses.append((e, [findings[i]["idiom"] for i in anyhit]))
  fps = [f for i, f in enumerate(findings) if i not in used]
  # Real instances a builder recorded beyond the per-repository cap: a finding
  # there is not a false positive, and is printed as UNLISTED.
  unlisted = []
  for name in sorted(os.listdir(part)):
    if name.startswith("unlisted") and name.endswith(".json"):
      data = json.load(open(os.path.join(part, name)))
      if isinstance(data, dict):
        data = data.get("findings", data.get("instances", []))
      unlisted += data
  for f in fps:
    f["unlisted"] = any(near(f, e, False) for e in unlisted)
  total = [sum(r[k] for r in rows.values()) for k in range(3)]
  print(f"part {os.path.basename(part)}: {len(expected)} instances, {files} files, "
        f"{files / max(cpu, 1e-9):.0f} files/CPU s")
  for idiom, (n, h, a) in sorted(rows.items()):
    print(f"  {idiom:18s} {h}/{n}   (any idiom {a}/{n})")
  print(f"  {'all':18s} {total[1]}/{total[0]} ({100 * total[1] / max(total[0], 1):.1f}%)"
        f"   (any idiom {total[2]})")
  print(f"  unmatched findings: {len(fps)} ({1000 * len(fps) / max(files, 1):.2f} per 1,000 files;"
        f" {sum(f['kind'] == 'negative' for f in fps)} in negative trees,"
        f" {sum(f['unlisted'] for f in fps)} at unlisted instances)")
  if args.show:
    for e, other in misses:
      print("MISS", e["idiom"], e["path"], e.get("line"), "other:", other, "|", e.get("why", "")[:200])
    for f in fps:
      tag = "UNLISTED" if f["unlisted"] else "FP(neg)" if f["kind"] == "negative" else "FP?"
      print(tag, f["idiom"], f["path"], f["line"], "|", f["message"][:150])
  if args.out:
    json.dump({"findings": findings, "files": files, "cpu": cpu}, open(args.out, "w"), indent=1)


if __name__ == "__main__":
  main()
