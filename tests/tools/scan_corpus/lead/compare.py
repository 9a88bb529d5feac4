"""compare.py A B: findings that differ between two OUTDIRs (by part, path, line, idiom)."""
import json, os, sys


def main():
  A, B = sys.argv[1:3]
  for n in sorted(set(os.listdir(A)) & set(os.listdir(B))):
    if not n.endswith(".json"): continue
    fa = {(f["path"], f["line"], f["idiom"]) for f in json.load(open(os.path.join(A, n)))["findings"]}
    fb = {(f["path"], f["line"], f["idiom"]) for f in json.load(open(os.path.join(B, n)))["findings"]}
    for x in sorted(fa - fb): print(n, "-", *x)
    for x in sorted(fb - fa): print(n, "+", *x)


if __name__ == "__main__":
  main()
