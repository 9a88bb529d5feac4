"""pstats.py OUTDIR CORPUS PARTPREFIX: pooled recall (all / not doubtful / neither doubtful nor copy), by idiom, FP in negatives, speed."""
import json, os, sys, collections


def main():
  out, corpus, prefix = sys.argv[1:4]
  tot = collections.Counter(); hit = collections.Counter(); files = cpu = 0; fpneg = 0; fps = []
  for name in sorted(os.listdir(corpus)):
    if not name.startswith(prefix): continue
    res = os.path.join(out, name + ".json")
    if not os.path.exists(res): continue
    R = json.load(open(res)); files += R["files"]; cpu += R["cpu"]
    part = os.path.join(corpus, name)
    exp = json.load(open(os.path.join(part, "reviewed.json") if os.path.exists(os.path.join(part, "reviewed.json")) else os.path.join(part, "expected.json")))["findings"]
    F = R["findings"]
    def places(e):
      yield e["path"], e.get("line"), max(e.get("tolerance") or 3, 3)
      for a in e.get("also", []): yield a["path"], a.get("line"), max(a.get("tolerance") or 3, 3)
    def near(f, e, same=True):
      if same and f["idiom"] != e["idiom"]: return False
      return any(f["path"] == p and (l is None or abs(f["line"] - l) <= t) for p, l, t in places(e))
    used = set()
    for e in exp:
      h = any(near(f, e) for f in F)
      used.update(i for i, f in enumerate(F) if near(f, e, False))
      cats = ["all", "idiom:" + e["idiom"]]
      if not e.get("doubtful"): cats.append("notdoubtful")
      if not e.get("doubtful") and not e.get("seen_copy"): cats.append("clean")
      for c in cats:
        tot[c] += 1; hit[c] += h
      print("HIT " if h else "MISS", name, e["idiom"], e["path"], e.get("line"), "D" if e.get("doubtful") else "", "C" if e.get("seen_copy") else "")
    for i, f in enumerate(F):
      if i not in used and f["kind"] == "negative":
        fpneg += 1; fps.append((name, f["idiom"], f["path"], f["line"]))
  negfiles = 0
  for name in sorted(os.listdir(corpus)):
    if name.startswith(prefix):
      d = os.path.join(corpus, name, "negative")
      negfiles += sum(1 for r, _, fs in os.walk(d) for x in fs if x.endswith((".py", ".ipynb")))
  for c in sorted(tot): print(f"{c:28s} {hit[c]}/{tot[c]}")
  print(f"FP in negatives: {fpneg} over {negfiles} negative files ({1000*fpneg/max(negfiles,1):.1f}/1000); {files} files, {files/max(cpu,1e-9):.0f} files/CPU s")
  for x in fps: print("FP", *x)


if __name__ == "__main__":
  main()
