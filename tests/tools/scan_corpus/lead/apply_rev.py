"""apply_rev.py PARTDIR: apply review/drops.txt and review/trims.txt to PART/negative, recount negatives.json."""
import json, os, shutil, sys


def main():
  part = sys.argv[1]; neg = os.path.join(part, "negative")
  def rows(name):
    p = os.path.join(part, "review", name)
    if not os.path.exists(p): return []
    return [l.split("\t")[0].strip() for l in open(p) if l.strip() and not l.startswith("#")]
  dropped = trimmed = 0
  for d in rows("drops.txt"):
    p = os.path.join(neg, d.strip("/"))
    if os.path.isdir(p) and os.path.realpath(p).startswith(os.path.realpath(neg) + "/"):
      shutil.rmtree(p); dropped += 1
    else: print("drop not found:", d)
  for t in rows("trims.txt"):
    p = os.path.join(neg, t.strip("/"))
    if os.path.isfile(p) and os.path.realpath(p).startswith(os.path.realpath(neg) + "/"):
      os.remove(p); trimmed += 1
    elif os.path.isdir(p): shutil.rmtree(p); trimmed += 1
    else: print("trim not found:", t)
  def count(d): return sum(1 for r, _, fs in os.walk(d) for f in fs if f.endswith((".py", ".ipynb")))
  entries = json.load(open(os.path.join(part, "negatives.json")))
  kept = []
  for e in entries:
    d = os.path.join(neg, e["repo"].replace("/", "+"))
    if os.path.isdir(d) and count(d):
      e["files"] = count(d); kept.append(e)
  listed = {e["repo"].replace("/", "+").lower() for e in kept}
  for d in sorted(os.listdir(neg)) if os.path.isdir(neg) else []:
    if d.lower() not in listed: print("negative dir not in negatives.json:", d, count(os.path.join(neg, d)))
  json.dump(kept, open(os.path.join(part, "negatives.json"), "w"), indent=1)
  print(part, "dropped", dropped, "trimmed", trimmed, "negatives", len(kept), "files", sum(e["files"] for e in kept))


if __name__ == "__main__":
  main()
